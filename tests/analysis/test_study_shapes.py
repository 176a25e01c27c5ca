"""Reports on every shape of study the store can hold, end to end: import-ratings ->
analyze -> summary.json and report.html (tiny PyMC sampling, so the shapes stay fast).

Shapes: imported plans with two arms, satisfaction and violation (no validity,
plausibility, cost, hap or method); one named arm without satisfaction; no arm, no
satisfaction and no violation at all. Each is one participant kind (imported). The
simulated study with recorded recourse metrics is test_analyze_cli's.
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from analysis.simdata import simulate_import
from study_app.cli import app

pytestmark = pytest.mark.e2e  # each shape is a whole analysis: make test-e2e

TINY = ["--backend", "pymc", "--draws", "50", "--tune", "50", "--chains", "1",
        "--no-gaussian", "--trace", "none", "--mgcv", "off"]


def _run_shape(tmp_path, **shape):
    csv, db, out = tmp_path / "r.csv", tmp_path / "s.duckdb", tmp_path / "out"
    simulate_import(16, 4, seed=3, **shape).to_csv(csv, index=False)
    runner = CliRunner()
    r = runner.invoke(app, ["import-ratings", "--csv", str(csv), "--db", str(db),
                            "--study", "ext"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["analyze", "--db", str(db), "--out", str(out), *TINY, "--json"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert summary == json.loads((out / "summary.json").read_text())
    html = (out / "report.html").read_text()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", re.sub(r"<img[^>]*>", "[IMG]", html)))
    return summary, text


def _coefficient_names(summary):
    return {c["name"] for m in summary["models"] for c in m["coefficients"]}


def _assert_common(summary, text):
    assert summary["complete"] and summary["report"] == "report.html"
    assert summary["participants_by_kind"] == {"imported": 16}
    assert len(summary["models"]) == 4 and set(summary["loo"]) == {"acceptance", "action"}
    for field in ("validity", "plausibility", "cost", "hap", "method"):
        assert summary["recorded"][field] == 0
        assert f"{field} not recorded" in text
    row = summary["recourse_table"][0]
    assert row["validity"] is None and row["plausibility"] is None and row["cost"] is None
    assert row["l1_profile"] is not None and row["plans"] > 0
    assert "Not recorded in this study: validity, plausibility, cost, hap" in text
    for m in summary["models"]:  # every coefficient has its interval
        assert m["coefficients"] and all(c["lo"] <= c["mean"] <= c["hi"]
                                         for c in m["coefficients"])
    ppc = [m for m in summary["models"] if m["ppc"]]
    assert len(ppc) == 2 and all(len(m["ppc"]) == 7 for m in ppc)
    assert text.count("[IMG]") >= 4 and "Posterior predictive check [IMG]" in text


def test_imported_with_arms_and_elicitation(tmp_path):
    summary, text = _run_shape(tmp_path, arms=("a", "b"))
    _assert_common(summary, text)
    assert summary["recorded"]["arm"] == summary["recorded"]["satisfaction"] == 64
    assert {"satisfaction", "violation", "arm[b] - arm[a]"} <= _coefficient_names(summary)
    assert "arm recorded (64 rows)" in text and "Effects (94% intervals) [IMG]" in text


def test_one_arm_without_satisfaction(tmp_path):
    summary, text = _run_shape(tmp_path, arms=("solo",), satisfaction=False)
    _assert_common(summary, text)
    assert summary["recorded"]["satisfaction"] == 0 and summary["recorded"]["violation"] == 64
    names = _coefficient_names(summary)
    assert "violation" in names and "satisfaction" not in names
    assert not any(n.startswith("arm[") for n in names)
    assert "satisfaction: not recorded" in text
    assert "arm contrasts: one arm (solo), nothing to compare" in text


def test_no_arm_no_satisfaction_no_violation(tmp_path):
    summary, text = _run_shape(tmp_path, arms=(), satisfaction=False, violation=False)
    _assert_common(summary, text)
    assert {g["group"] for m in summary["models"] for g in m["coefficients"]} == {
        "variance", "cutpoint"}  # no effect, no arm contrast
    assert summary["recourse_table"][0]["arm"] is None
    for note in ("satisfaction: not recorded", "violation: not recorded",
                 "arm contrasts: arm not recorded, nothing to compare",
                 "arm not recorded"):
        assert note in text, note
