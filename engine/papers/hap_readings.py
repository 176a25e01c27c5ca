"""iCARMA's hap under each reading of its definition, side by side, and the soft-constraint
verdict on the paper's literal one.

The paper defines hap as "the proportion of users for whom the recourse solver recommends at
least one hard action", a hard action being a change to the user's least-preferred (yet
individually actionable) feature. Three readings of it are measured for every hap cell of
Tables 2 and 3 (engine.papers.icarma.reproduce):

- ``literal``: x' changes the least-preferred feature, by an action or as its consequence,
  counted among the people who get a valid recourse, one-feature people included
  (``recourse_benchmark.hap_paper``; the value the cell is judged on);
- ``two_features``: x' changes it, counted over the people with >= 2 actionable features,
  no recourse counting 0 (``recourse_benchmark.hap_profile``);
- ``actions``: only an action on the feature counts, a consequence does not (``metrics.hap``).

Each reading's value of a cell is within tolerance when |value - paper| <= the cell's
tolerance. The paper's soft-constraint finding (its section 5.4) is that with a non-constant
cost profile iCARMA recommends hard actions "at substantially lower rates" than with the
constant profile: for a group of rows (soft; hard + soft) it holds under a reading when every
non-constant profile's hap is at least ``GAP`` below the constant profile's, the margin the
reproduction's own check states; the verdict is given for every method of the table (the
paper's claim is iCARMA's; it finds the Oracle's reduction "less pronounced").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

GAP = 0.2  # "substantially lower": the margin of Tables 2-3's constant-profile check
READINGS: dict[str, tuple[str, str | None]] = {
    # name -> (what it counts, the cell setting that holds it; None: the cell's own value)
    "literal": ("x' changes the feature, among valid recourses (judged)", None),
    "two_features": ("x' changes it, people with >= 2 features, no recourse 0",
                     "hap_profile"),
    "actions": ("acted on (a consequence does not count)", "hap_actions"),
}
LITERAL = "literal"


@dataclass(frozen=True)
class HapRow:
    """One hap cell of a run under every reading."""

    row: str
    method: str
    paper: float
    tolerance: float
    values: dict[str, float]

    @property
    def group(self) -> str:
        """The constraint part of the row ("Loan, soft"), the cost profile cut off."""
        return self.row.rsplit(" / ", 1)[0]

    @property
    def profile(self) -> str:
        return self.row.rsplit(" / ", 1)[-1]

    def within(self, reading: str) -> bool:
        return abs(self.values[reading] - self.paper) <= self.tolerance + 1e-12


def hap_rows(cells: Iterable[dict[str, Any]]) -> list[HapRow]:
    """The hap cells that carry every reading (Tables 2 and 3 of runs that recorded them)."""
    rows = []
    for c in cells:
        setting = c.get("setting") or {}
        if c.get("metric") != "hap" or c.get("ours") is None or c.get("paper") is None:
            continue
        if any(key is not None and setting.get(key) is None for _, key in READINGS.values()):
            continue
        values = {name: float(c["ours"] if key is None else setting[key])
                  for name, (_, key) in READINGS.items()}
        rows.append(HapRow(c["row"], c["method"], float(c["paper"]),
                           float(c.get("tolerance") or 0.0), values))
    return rows


def lower_with_profiles(rows: list[HapRow], reading: str) -> list[dict[str, Any]]:
    """Per method and group of rows with a constant profile: does every other profile's hap
    fall at least ``GAP`` below the constant one's under ``reading`` (module docstring)?
    [{method, group, constant, others {profile: hap}, holds}]."""
    out = []
    for method, group in dict.fromkeys((r.method, r.group) for r in rows):
        mine = [r for r in rows if (r.method, r.group) == (method, group)]
        constant = next((r for r in mine if r.profile == "constant"), None)
        others = {r.profile: r.values[reading] for r in mine if r is not constant}
        if constant is None or not others:
            continue
        top = constant.values[reading]
        out.append({"method": method, "group": group, "constant": top, "others": others,
                    "holds": all(v <= top - GAP for v in others.values())})
    return out


def readings_markdown(cells: Iterable[dict[str, Any]]) -> list[str]:
    """The page's lines for a run's hap cells: one table (every reading beside the paper,
    "yes" where within the cell's tolerance), cells within tolerance per reading, and the
    soft-constraint verdict per reading, the literal one first; no lines when the run has no
    hap cell with every reading."""
    rows = hap_rows(cells)
    if not rows:
        return []
    names = list(READINGS)
    lines = ["hap under each reading of the paper's definition (engine.papers.hap_readings; "
             "\"yes\": within the cell's tolerance of the paper):", "",
             "| row | method | paper | " + " | ".join(
                 f"{n}: {READINGS[n][0]}" for n in names) + " |",
             "| --- | --- | --- | " + " | ".join("---" for _ in names) + " |"]
    for r in rows:
        values = [f"{r.values[n]:.3f} ({'yes' if r.within(n) else 'no'})" for n in names]
        lines.append(f"| {r.row} | {r.method} | {r.paper:.3f} | " + " | ".join(values) + " |")
    lines.append("")
    methods = list(dict.fromkeys(r.method for r in rows))
    for n in names:
        per_method = ", ".join(
            f"{m} {sum(r.within(n) for r in rows if r.method == m)} of "
            f"{sum(r.method == m for r in rows)}" for m in methods)
        claim = "; ".join(
            f"{v['method']}, {v['group']}: {'holds' if v['holds'] else 'fails'} (constant "
            f"{v['constant']:.3f} vs " + " / ".join(f"{p} {h:.3f}" for p, h in v["others"].items())
            + ")" for v in lower_with_profiles(rows, n)) or "no constant-profile row"
        lead = "**Verdict (the literal reading)**" if n == LITERAL else f"Reading `{n}`"
        lines.append(f"- {lead}: {sum(r.within(n) for r in rows)} of {len(rows)} hap cells "
                     f"within tolerance ({per_method}); non-constant profiles at least {GAP} "
                     f"below the constant one: {claim}")
    lines.append("")
    return lines
