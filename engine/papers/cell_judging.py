"""How a reproduced cell is judged against its own paper value: plain Python.

A cell is *within* when ``|ours - paper| <= tolerance``, where ``paper`` is the cell's own
published value (a HARE ratio cell's own ratio: the paper's value at the level over its
value at the reference level of the same data set and base, or on the Loan ablations, where
no data set is the paper's, the mean of the paper's ratios) and ``tolerance`` the absolute
tolerance ``paper_values.yaml`` states for the cell's method and metric. A range the paper
spans (its data sets and bases) is reported beside a cell, never used to judge it.

``reproduce`` judges its cells with ``within``; the reproduction pages re-judge every stored
cell with the same function and the tolerances the file states now (``cell_tolerance``), so
a page's counts follow the file, not the rule at the time of the run. ``summarize`` counts
the cells within tolerance per table and metric and names the misses.
"""

from __future__ import annotations

import math
from typing import Any

from engine.papers.paper_values import tolerance

RATIO = "ratio"


def within(ours: float | None, paper: float | None, tol: float | None) -> bool | None:
    """``|ours - paper| <= tol``; None when there is nothing to judge (no paper value or no
    tolerance); False when ours is missing or not finite but the paper has a value."""
    if paper is None or tol is None:
        return None
    if ours is None or not math.isfinite(ours):
        return False
    return abs(ours - paper) <= tol + 1e-12


def tolerance_key(target: str, method: str, metric: str) -> tuple[str, str]:
    """The (method, metric) of ``tolerances`` in paper_values.yaml that judges a cell: iCARMA
    targets by the cell's method (oracle, icarma), HARE targets under ``hare`` by the
    metric (a ratio cell: ``ratio``)."""
    name = metric.lower()
    if target.startswith("hare"):
        return "hare", RATIO if name.endswith(RATIO) else name
    return method, name


def cell_tolerance(target: str, cell: dict[str, Any]) -> float | None:
    """The stated tolerance of a stored cell (None: a metric without one, e.g. the fairness
    case study's gaps, which the paper gives no value for)."""
    method, metric = tolerance_key(target, cell["method"], cell["metric"])
    try:
        return tolerance(method, metric)
    except KeyError:
        return None


def judged(target: str, cell: dict[str, Any]) -> dict[str, Any]:
    """A stored cell with ``tolerance`` and ``within`` as the current rule gives them."""
    tol = cell_tolerance(target, cell)
    return {**cell, "tolerance": tol, "within": within(cell.get("ours"), cell.get("paper"), tol)}


def miss_text(cell: dict[str, Any]) -> str:
    """One miss, with the figures it was decided on (its tolerance: its group's)."""
    ours = "none" if cell.get("ours") is None else f"{cell['ours']:.3f}"
    return f"{cell['row']} {cell['method']} {cell['metric']}: ours {ours}, paper {cell['paper']:.3f}"


def summarize(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts of judged cells: overall, per (table, metric, tolerance) in order of appearance,
    and the misses (``miss_text``) of each group."""
    groups: dict[str, dict[str, Any]] = {}
    for c in cells:
        if c.get("within") is None:
            continue
        key = f"{c['table']}: {c['metric']} (tolerance {c['tolerance']:g})"
        g = groups.setdefault(key, {"within": 0, "judged": 0, "misses": []})
        g["judged"] += 1
        if c["within"]:
            g["within"] += 1
        else:
            g["misses"].append(miss_text(c))
    return {"within": sum(g["within"] for g in groups.values()),
            "judged": sum(g["judged"] for g in groups.values()),
            "per_metric": groups}
