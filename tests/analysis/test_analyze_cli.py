"""`recourse-study analyze` on a small simulated study (exact Bayes rule, short chains), and
its errors; `benchmark analysis` JSON shape (tiny run, no baseline)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from data.store import Store
from protocols.schema import load_protocol
from study_app.cli import app
from study_app.simulator import simulate


@pytest.fixture(scope="module")
def study_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("an") / "tom.duckdb"
    with Store(db) as store:
        simulate(load_protocol("tominaga-replication"), store, 40, decision_model="bayes")
    return db


def test_analyze_writes_report_summary_and_traces(study_db, tmp_path):
    out = tmp_path / "report"
    r = CliRunner().invoke(app, ["analyze", "--db", str(study_db), "--out", str(out),
                                 "--draws", "100", "--tune", "100", "--chains", "2",
                                 "--target-accept", "0.9", "--no-gaussian"])
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    models = summary["models"]
    assert {(m["outcome"], m["distance"]) for m in models} == {
        (o, d) for o in ("acceptance", "action") for d in ("l0_profile", "l1_profile")}
    m = models[0]
    assert {"smooth", "coefficients", "max_rhat", "min_ess", "divergences", "seconds"} <= set(m)
    assert all(p["lo"] <= p["mean"] <= p["hi"] for p in m["smooth"])
    assert set(summary["loo"]) == {"acceptance", "action"}
    assert summary["recourse_table"] and summary["recourse_table"][0]["validity"] == 1.0
    html = (out / "report.html").read_text()
    # smooths, variance components, PPC, ratings by arm (no effects: one arm, no elicitation)
    assert html.count("data:image/png;base64,") == 4 and "Sampling diagnostics" in html
    assert len(list((out / "traces").glob("*.nc"))) == 4


def test_analyze_reports_bad_input(study_db, tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["analyze", "--db", str(tmp_path / "none.duckdb"), "--out", "x"])
    assert r.exit_code == 2 and "no database" in r.output
    r = runner.invoke(app, ["analyze", "--db", str(study_db), "--out", str(tmp_path),
                            "--distance", "l7"])
    assert r.exit_code == 2 and "unknown distance" in r.output
    r = runner.invoke(app, ["analyze", "--db", str(study_db), "--out", str(tmp_path),
                            "--study", "nope"])
    assert r.exit_code == 2 and "no study 'nope'" in r.output
    r = runner.invoke(app, ["analyze", "--db", str(study_db), "--out", str(tmp_path),
                            "--target-accept", "1.5"])
    assert r.exit_code == 2 and "target-accept" in r.output
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a database")
    r = runner.invoke(app, ["analyze", "--db", str(junk), "--out", str(tmp_path)])
    assert r.exit_code == 2 and "cannot read" in r.output


def test_benchmark_analysis_json(tmp_path):
    out = tmp_path / "b.json"
    r = CliRunner().invoke(app, ["benchmark", "analysis", "--participants", "30", "--plans",
                                 "3", "--draws", "100", "--tune", "100", "--chains", "2",
                                 "--no-baseline", "--json", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["backend"] == "nutpie" and doc["seconds"] > 0
    assert {"max_rhat", "min_ess_bulk", "divergences"} <= set(doc)
