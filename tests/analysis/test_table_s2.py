"""Table S2 (Tominaga et al.): rows from mgcv's results in the paper's layout, the paper's
values beside ours, and the paper's three findings checked (no R needed)."""

from __future__ import annotations

from analysis import table_s2


def _model(outcome: str, distance: str, p_smooth: float, edf: float = 1.0,
           p_slope: float = 0.0, fit: tuple[float, float] = (0.0, 0.0)) -> dict:
    term = {"edf": edf, "ref_df": 9.0, "F": 3.0, "p": p_smooth}
    return {"name": f"{outcome}_{distance}_mgcv", "outcome": outcome, "distance": distance,
            "intercept": {"estimate": 3.1, "se": 0.07, "t": 44.0, "p": 0.0}, "aic": 5000.0,
            "smooth": term, "participant_intercept": {"edf": 200.0, "ref_df": 361, "F": 9.0,
                                                      "p": 0.0},
            "participant_slope": {"edf": 80.0, "ref_df": 362, "F": 2.0, "p": p_slope},
            "curve": {"d": [1.0, 2.0], "fit": list(fit)}}


def _paper_like() -> list[dict]:
    return [_model("acceptance", "l0_actions", 0.9), _model("acceptance", "l1_actions", 0.35),
            _model("action", "l0_actions", 1e-6, 4.2, fit=(0.8, -0.2)),
            _model("action", "l1_actions", 1e-6, 4.3, fit=(0.9, -0.1))]


def test_rows_follow_the_papers_layout():
    rows = table_s2.rows(list(reversed(_paper_like())))
    assert [(r["model"], r["variable"]) for r in rows[:8]] == [
        ("Model-1", "Intercept"), ("Model-1", "Sparsity"), ("Model-1", "uid (r.i.)"),
        ("Model-1", "uid (r.s.)"), ("Model-2", "Intercept"), ("Model-2", "Proximity"),
        ("Model-2", "uid (r.i.)"), ("Model-2", "uid (r.s.)")]
    intercept, smooth = rows[0], rows[1]
    assert (intercept["coef"], intercept["se"], intercept["aic"], intercept["edf"]) == (
        3.1, 0.07, 5000.0, None)
    assert (smooth["edf"], smooth["F"], smooth["p"], smooth["coef"]) == (1.0, 3.0, 0.9, None)


def test_the_papers_table_as_published():
    assert table_s2.PAPER["Model-1"]["smooth"] == {"edf": 1.01, "F": 0.00, "p": 1.0}
    assert table_s2.PAPER["Model-2"]["smooth"]["p"] == 0.347
    assert table_s2.PAPER["Model-3"]["smooth"] == {"edf": 4.25, "F": 18.46, "p": "<0.001"}
    assert table_s2.PAPER["Model-4"]["participant_slope"] == {"edf": 69.98, "F": 1.13,
                                                              "p": 0.009}
    assert table_s2.PAPER["Model-3"]["intercept"]["estimate"] == 2.63
    assert table_s2.PAPER["Model-2"]["aic"] == 5590.47
    beside = table_s2.beside_paper(_paper_like())
    cell = next(c for c in beside if c["model"] == "Model-3" and c["statistic"] == "edf"
                and c["variable"] == "Sparsity")
    assert (cell["paper"], cell["ours"]) == (4.25, 4.2)
    p = next(c for c in beside if c["model"] == "Model-3" and c["statistic"] == "p"
             and c["variable"] == "Sparsity")
    assert (p["paper"], p["ours"]) == ("<0.001", "<0.001")
    assert table_s2.format_p(0.3468) == "0.347" and table_s2.format_p(None) == "-"


def test_the_three_findings():
    found = table_s2.findings(_paper_like())
    assert [f["holds"] for f in found] == [True, True, True]
    flipped = _paper_like()
    flipped[1] = _model("acceptance", "l1_actions", 0.01)  # a significant acceptance smooth
    flipped[2] = _model("action", "l0_actions", 1e-6, 4.2, fit=(-0.5, 0.5))  # rises
    flipped[3] = _model("action", "l1_actions", 1e-6, 4.3, p_slope=0.2, fit=(0.9, -0.1))
    assert [f["holds"] for f in table_s2.findings(flipped)] == [False, False, False]
    assert [f["holds"] for f in table_s2.findings(_paper_like()[:2])] == [True, None, None]
