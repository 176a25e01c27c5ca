"""What the HARE paper's Tables 1-4 run (engine.papers.hare.reproduce_tables): its data
sets as our scenarios, its base generators, the runs' sizes, each table's levels, metrics
and ratios, and the paper's values of a table; ``find_row`` picks a level's benchmark row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.papers.paper_values import target_values

PAPER_DATASETS: dict[str, str] = {"adult": "adult", "compas": "compas", "credit": "gmsc"}
SUBSTITUTE: dict[str, str] = {}  # column -> the note of a data set standing in for the paper's
PAPER_BASES = ("wachter", "gs", "face", "cchvae", "clue", "cruds")
PAPER_RUN = {"n": 150, "seeds": 5, "steps": 100}
FAST_RUN = {"n": 40, "seeds": 1, "steps": 30}
B, T, FAR = 30, 5, "far"
Level = tuple[int, int]  # (budget, iterations); (0, 0) is the base generator


@dataclass(frozen=True)
class TableSpec:
    """What one table runs: classifiers, bases, its levels as (budget, iterations), the
    metrics of its cells and its ratios (each judged against the paper's ratio of the same
    cell, engine.papers.cell_judging)."""

    classifiers: tuple[str, ...]
    bases: tuple[str, ...]
    levels: dict[str, Level]
    metrics: tuple[str, ...]
    ratios: tuple[tuple[str, str, str], ...]  # (metric, level, reference level)


_VARIANTS = {"base": (0, 0), "hare": (B, 1), "multi-hare": (B, T)}
SPECS: dict[str, TableSpec] = {
    "hare-table1": TableSpec(("ann", "lr"), PAPER_BASES, _VARIANTS, ("gtp", "gtd"),
                             (("gtd", "hare", "base"), ("gtd", "multi-hare", "hare"),
                              ("gtp", "hare", "base"), ("gtp", "multi-hare", "hare"))),
    "hare-table2": TableSpec(("ann",), PAPER_BASES[:3],
                             {"base": (0, 0), **{str(b): (b, 1) for b in (10, 30, 70, 100)}},
                             ("gtp", "gtd"),
                             tuple(("gtd", str(b), "base") for b in (10, 30, 70, 100))),
    "hare-table3": TableSpec(("ann",), PAPER_BASES[:3], {str(t): (B, t) for t in (1, 3, 5, 10)},
                             ("gtp", "gtd"), tuple(("gtd", str(t), "1") for t in (3, 5, 10))),
    "hare-table4": TableSpec(("ann",), PAPER_BASES[:3], _VARIANTS,
                             ("gtp", "gtd", "success_rate", "violations", "redundancy",
                              "proximity", "sparsity"),
                             (("proximity", "hare", "base"), ("proximity", "multi-hare", "base"))),
}


def paper_table(target: str) -> dict[str, Any]:
    """{classifier: {base: {column: {metric: [values per level]} | None}}} of a table (Tables
    2 and 3 are the ANN values of hare-budget / hare-iterations)."""
    spec = target_values(target)
    if "values_of" in spec:
        return {"ann": target_values(spec["values_of"])["values"]}
    return spec["values"]


def find_row(rows: list[dict[str, Any]], base: str, level: Level) -> dict[str, Any]:
    b, t = level
    variant = "base" if t == 0 else ("hare" if t == 1 else "multi-hare")
    for r in rows:
        if (r["base"], r["variant"], r["scale"], r["budget"], r["iterations"]) == (
                base, variant, FAR, b, t):
            return r
    raise KeyError((base, level))
