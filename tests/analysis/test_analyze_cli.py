"""`recourse-study analyze` on a small simulated study (exact Bayes rule, short chains), and
its errors; `benchmark analysis` JSON shape (tiny run, no baseline)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import datetime

import pytest
from typer.testing import CliRunner

from analysis import FAMILIES
from data.store import Store
from protocols.definition.schema import load_protocol
from study_app.cli import app
from study_app.simulator import simulate


@pytest.fixture(scope="module")
def study_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("an") / "tom.duckdb"
    with Store(db) as store:
        simulate(load_protocol("tominaga-replication"), store, 40, decision_model="bayes")
    return db


def _args(study_db, out) -> list[str]:
    return ["analyze", "--db", str(study_db), "--out", str(out), "--draws", "100", "--tune",
            "100", "--chains", "2", "--target-accept", "0.9", "--no-gaussian"]


@pytest.fixture(scope="module")
def analyzed(study_db, tmp_path_factory):
    """One whole analysis of the study (its folder), fitted once for the module."""
    out = tmp_path_factory.mktemp("analyzed") / "report"
    r = CliRunner().invoke(app, _args(study_db, out))
    assert r.exit_code == 0, r.output
    return out


# A whole analysis (four Bayesian fits, mgcv's four GAMMs, the report) is one of the long
# end-to-end runs: make test-e2e (CI). The fast suite keeps analyze's bad input and locking
# below, the resume and trace tests (test_resume.py, test_traces.py) and the models'
# own tests (test_models.py, test_ordinal.py, test_table_s2.py).
@pytest.mark.e2e
def test_analyze_writes_report_summary_and_traces(analyzed):
    out = analyzed
    summary = json.loads((out / "summary.json").read_text())
    models = summary["models"]
    # the protocol's distances: L0/L1 over the 16 items (income is a condition, not an item)
    assert {(m["outcome"], m["distance"]) for m in models} == {
        (o, d) for o in ("acceptance", "action") for d in ("l0_actions", "l1_actions")}
    ex = summary["exclusions"]  # the paper's rule: ratings with an impossible item
    assert ex["rules"]["impossible_items"] and not ex["rules"]["failed_attention"]
    assert ex["n_ratings_before"] - ex["n_ratings_kept"] == ex["ratings_excluded"][
        "impossible_items"] and summary["n_ratings"] == ex["n_ratings_kept"]
    m = models[0]
    assert {"smooth", "coefficients", "max_rhat", "min_ess", "divergences", "seconds"} <= set(m)
    assert all(p["lo"] <= p["mean"] <= p["hi"] for p in m["smooth"])
    assert set(summary["loo"]) == {"acceptance", "action"}
    assert summary["recourse_table"] and summary["recourse_table"][0]["validity"] == 1.0
    html = (out / "report.html").read_text()
    # smooths, variance components, PPC, ratings by arm (no effects: one arm, no
    # elicitation), and truth vs recovered (a simulated study)
    # + Figure 1 (distances of the shown plans) and Figure 3 from mgcv
    assert html.count("data:image/png;base64,") == 7 and "Sampling diagnostics" in html
    assert "Truth vs recovered" in html and summary["truth_vs_recovered"] is not None
    assert len(list((out / "traces").glob("*.nc"))) == 4
    mg = summary["mgcv"]  # the reference study's Table S2 from mgcv, same exclusions
    assert mg["status"] == "fitted" and mg["reason"] is None, mg
    assert [m["name"] for m in mg["models"]] == [
        f"{o}_{d}_mgcv" for o in ("acceptance", "action") for d in ("l0_actions", "l1_actions")]
    assert all(m["n"] == summary["n_ratings"] for m in mg["models"])
    rows = mg["table_s2"]
    assert [(r["model"], r["variable"]) for r in rows[:4]] == [
        ("Model-1", "Intercept"), ("Model-1", "Sparsity"), ("Model-1", "uid (r.i.)"),
        ("Model-1", "uid (r.s.)")] and len(rows) == 16
    assert all(r["edf"] > 0 and r["F"] >= 0 and 0 <= r["p"] <= 1 for r in rows if r["smooth"])
    assert all(r["aic"] is not None and r["se"] > 0 for r in rows if not r["smooth"])
    assert len(mg["agreement"]) == 4 and all(
        a["sentence"].startswith(a["model"]) for a in mg["agreement"])
    assert "Table S2" in html and "Figure 3" in html and mg["agreement"][0]["model"] in html


@pytest.mark.e2e  # resumes the whole analysis above
def test_analyze_without_r_still_finishes_and_says_why(study_db, analyzed, tmp_path,
                                                       monkeypatch):
    """R missing: the Bayesian part is complete, mgcv skipped (one stderr line, summary),
    exit 0; --mgcv require makes it exit 1; an R error is "failed", exit 1. Every run here
    resumes the module's analysis (a copy): the Bayesian fits are reused, mgcv runs anew."""
    from analysis import mgcv

    out, runner = tmp_path / "o", CliRunner()
    shutil.copytree(analyzed, out)
    args = [*_args(study_db, out), "--resume"]
    monkeypatch.setattr(mgcv, "RSCRIPT", "Rscript-not-installed-here")
    r = runner.invoke(app, [*args, "--json"])
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] and len(summary["models"]) == 4
    assert len(json.loads(r.stdout)["reused"]) == 4  # the Bayesian part came from the folder
    assert summary["mgcv"]["status"] == "skipped" and "Rscript is not installed" in summary[
        "mgcv"]["reason"]
    assert [line for line in r.stderr.splitlines() if line.startswith("mgcv part skipped: ")]
    assert "mgcv part skipped" in (out / "report.html").read_text()
    r = runner.invoke(app, [*args, "--mgcv", "require"])
    assert r.exit_code == 1 and summary["complete"], r.output
    monkeypatch.setattr(mgcv, "RSCRIPT", "Rscript")
    broken = tmp_path / "broken.R"
    broken.write_text('stop("the GAMM exploded")\n')
    monkeypatch.setattr(mgcv, "SCRIPT", broken)
    r = runner.invoke(app, [*args, "--json"])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    assert doc["complete"] and doc["mgcv"]["status"] == "failed"
    assert "the GAMM exploded" in doc["mgcv"]["reason"]
    assert "mgcv part failed: R failed (exit 1): Error: the GAMM exploded" in r.stderr
    r = runner.invoke(app, [*args, "--mgcv", "sometimes", "--json"])  # a fixed choice: typer's
    assert r.exit_code == 2 and "'sometimes' is not one of" in r.stderr, r.stderr


def _one_line_error(r, fragment: str) -> None:
    """Exit 2, one line on stderr naming the problem, nothing on stdout, no traceback."""
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: "), r.stderr
    assert fragment in r.stderr and "Traceback" not in r.output and r.stdout == ""


def test_analyze_reports_bad_input(study_db, tmp_path):
    runner = CliRunner()

    def run(db, *extra):
        return runner.invoke(app, ["analyze", "--db", str(db), "--out", str(tmp_path / "o"),
                                   "--json", *extra])

    _one_line_error(run(tmp_path / "none.duckdb"), "no database at")
    _one_line_error(run(study_db, "--distance", "l7"), "unknown distance 'l7'")
    _one_line_error(run(study_db, "--family", "probit"), "--family: unknown model family "
                    f"'probit'; known: {', '.join(sorted(FAMILIES))}")
    for option, value in (("--backend", "stan"), ("--trace", "huge"), ("--mgcv", "maybe")):
        r = run(study_db, option, value)  # a fixed choice: typer names the values it takes
        assert r.exit_code == 2 and f"'{value}' is not one of" in r.stderr, r.stderr
    _one_line_error(run(study_db, "--study", "nope"),
                    "no study 'nope' in " + str(study_db) + " (it holds: tominaga-replication)")
    r = runner.invoke(app, ["analyze", "--db", str(study_db), "--out", str(tmp_path),
                            "--target-accept", "1.5"])
    assert r.exit_code == 2 and "target-accept" in r.output
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a database")
    _one_line_error(run(junk), "cannot open")
    empty = tmp_path / "empty.duckdb"
    Store(empty).close()
    _one_line_error(run(empty), "holds no study yet")
    with Store(empty) as store, store.transaction() as tx:
        tx.insert("studies", [{"study_id": "quiet", "protocol_id": "imported",
                               "source": "imported", "created_at": datetime(2024, 1, 1)}])
    _one_line_error(run(empty), "study 'quiet' in " + str(empty) + " has no ratings yet")
    assert not (tmp_path / "o").exists()  # nothing was written


def test_analyze_on_a_database_another_process_holds(study_db, tmp_path):
    held = tmp_path / "held.duckdb"
    shutil.copy(study_db, held)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); "
         "print('ready', flush=True); time.sleep(120)", str(held)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        r = CliRunner().invoke(app, ["analyze", "--db", str(held), "--out",
                                     str(tmp_path / "o")])
        _one_line_error(r, f"cannot open {held}")
        assert "lock" in r.stderr and f"PID {holder.pid}" in r.stderr
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.e2e  # nutpie's compile (tens of seconds): make test-e2e, as the PyMC backend's
# runs of the command (tests/study_app/test_bench_analysis.py)
def test_benchmark_analysis_json(tmp_path):
    out = tmp_path / "b.json"
    r = CliRunner().invoke(app, ["benchmark", "analysis", "--participants", "30", "--plans",
                                 "3", "--draws", "100", "--tune", "100", "--chains", "2",
                                 "--no-baseline", "--json", "--json-file", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc == json.loads(out.read_text())
    assert doc["backend"] == "nutpie" and doc["seconds"] > 0 and doc["blas"]
    assert {"max_rhat", "min_ess_bulk", "divergences"} <= set(doc)
