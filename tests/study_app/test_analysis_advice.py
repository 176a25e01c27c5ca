"""What `analyze` tells a researcher after the fits (study_app.study_analysis.advice)."""

from __future__ import annotations

from pathlib import Path

from study_app.study_analysis import advice


def _summary(**over: object) -> dict:
    base = {"models": [{"outcome": "action", "distance": "l1_actions", "likelihood": "ordinal",
                        "warnings": []}], "failed": [], "report_error": None,
            "report": "report.html"}
    return {**base, **over}


def test_a_clean_analysis_only_says_where_the_report_is() -> None:
    assert advice(_summary(), Path("out"), 1500) == ["report written to out/report.html"]


def test_warnings_come_with_how_to_fix_them_at_twice_the_draws() -> None:
    models = [{"outcome": "acceptance", "distance": "l0_actions", "likelihood": "gamm",
               "warnings": ["max R-hat 1.02 > 1.01", "2 divergent transitions"]}]
    lines = advice(_summary(models=models), Path("out"), 1500)
    assert lines[0] == ("warning: acceptance ~ s(l0_actions) gamm: max R-hat 1.02 > 1.01; "
                        "2 divergent transitions")
    assert "--draws 3000 --tune 1000" in lines[1] and "--target-accept" in lines[1]


def test_a_failed_model_and_a_failed_report_say_to_resume() -> None:
    lines = advice(_summary(failed=[{"model": "action-l0-gamm", "error": "boom"}],
                            report_error="no disk", report=None), Path("out"), 1000)
    assert lines[0] == "error: model action-l0-gamm failed: boom"
    assert "1 finished model(s) are saved in out/models" in lines[1] and "--resume" in lines[1]
    assert lines[2].startswith("error: the report step failed: no disk;")
    assert not any(line.startswith("report written") for line in lines)
