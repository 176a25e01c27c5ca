"""hap under each reading: values taken from the right setting, judged per reading, and the
soft-constraint verdict computed on each."""

from __future__ import annotations

from engine.papers.hap_readings import (
    GAP,
    LITERAL,
    hap_rows,
    lower_with_profiles,
    readings_markdown,
)


def _cell(row: str, paper: float, literal: float, two: float, actions: float,
          method: str = "icarma") -> dict:
    return {"row": row, "method": method, "metric": "hap", "paper": paper, "ours": literal,
            "tolerance": 0.1, "setting": {"hap_profile": two, "hap_actions": actions}}


CELLS = [
    _cell("Loan, soft / constant", 0.852, 0.99, 0.98, 0.97),
    _cell("Loan, soft / linear", 0.029, 0.30, 0.29, 0.01),
    _cell("Loan, soft / convex", 0.044, 0.85, 0.84, 0.02),  # not 0.2 below the constant
    {"row": "Loan, soft / linear", "method": "icarma", "metric": "validity", "paper": 0.9,
     "ours": 0.9, "tolerance": 0.05, "setting": {}},
]


def test_each_reading_reads_its_own_setting_and_is_judged_on_its_own() -> None:
    rows = hap_rows(CELLS)
    assert [r.profile for r in rows] == ["constant", "linear", "convex"]  # hap cells only
    linear = rows[1]
    assert linear.values == {"literal": 0.30, "two_features": 0.29, "actions": 0.01}
    assert not linear.within(LITERAL) and linear.within("actions")
    assert rows[0].within(LITERAL) is False  # 0.99 vs 0.852: 0.138 > 0.1


def test_cells_without_every_reading_are_left_out() -> None:
    old = dict(CELLS[1], setting={"hap_profile": 0.29})  # an older run: no actions-only count
    assert hap_rows([old]) == []
    assert readings_markdown([old]) == []


def test_the_lower_with_profiles_verdict_needs_every_profile_gap_below_constant() -> None:
    rows = hap_rows(CELLS)
    literal = lower_with_profiles(rows, LITERAL)
    assert literal == [{"method": "icarma", "group": "Loan, soft", "constant": 0.99,
                        "others": {"linear": 0.30, "convex": 0.85}, "holds": False}]
    assert lower_with_profiles(rows, "actions")[0]["holds"] is True
    # exactly GAP below still counts as substantially lower
    edge = hap_rows([_cell("a / constant", 0.5, 0.7, 0.7, 0.7),
                     _cell("a / linear", 0.5, 0.7 - GAP, 0.5, 0.5)])
    assert lower_with_profiles(edge, LITERAL)[0]["holds"] is True


def test_the_page_lines_lead_with_the_literal_verdict() -> None:
    lines = readings_markdown(CELLS)
    verdicts = [line for line in lines if line.startswith("- ")]
    assert verdicts[0].startswith("- **Verdict (the literal reading)**: 0 of 3 hap cells")
    assert "(icarma 0 of 3)" in verdicts[0]
    assert "icarma, Loan, soft: fails (constant 0.990 vs linear 0.300 / convex 0.850)" \
        in verdicts[0]
    assert "Reading `actions`: 2 of 3" in verdicts[2] and "icarma, Loan, soft: holds" \
        in verdicts[2]
    assert "| Loan, soft / linear | icarma | 0.029 | 0.300 (no) | 0.290 (no) | 0.010 (yes) |" \
        in lines


def test_each_method_gets_its_own_counts_and_verdict() -> None:
    cells = CELLS[:2] + [_cell("Loan, soft / constant", 0.614, 0.64, 0.61, 0.45, "oracle"),
                         _cell("Loan, soft / linear", 0.443, 0.46, 0.44, 0.21, "oracle")]
    verdicts = lower_with_profiles(hap_rows(cells), LITERAL)
    assert [(v["method"], v["holds"]) for v in verdicts] == [("icarma", True),
                                                             ("oracle", False)]
    literal = [line for line in readings_markdown(cells) if line.startswith("- ")][0]
    assert "(icarma 0 of 2, oracle 2 of 2)" in literal
