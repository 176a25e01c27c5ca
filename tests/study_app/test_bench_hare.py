"""`recourse-study benchmark hare`: JSON shape, the ablation rows, clear failures (small run
on the quick trained decision model)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from study_app.cli import app

ROW_KEYS = {
    "base", "variant", "scale", "budget", "iterations", "calibrate", "n", "seeds", "gtp_mean",
    "gtp_sd", "gtd_mean", "gtd_sd", "success_rate", "violations", "proximity", "sparsity",
    "redundancy", "queries", "seconds", "violations_total", "proximity_l1", "gamma_schedule",
    "final_accept", "iterations_reading",
}


def test_small_benchmark_writes_rows_checks_and_step_times(trained_home, tmp_path):
    out = tmp_path / "hare.json"
    result = CliRunner().invoke(app, [
        "benchmark", "hare", "--bases", "gs", "--scales", "far", "--n", "12", "--seeds", "2",
        "--budgets", "4,8", "--budget", "8", "--iterations", "1,2", "--steps", "10",
        "--json-file", str(out),
    ])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    rows = doc["rows"]
    assert all(ROW_KEYS <= set(r) for r in rows)
    variants = {(r["variant"], r["budget"], r["iterations"], r["calibrate"]) for r in rows}
    assert {("base", 0, 0, "none"), ("hare", 8, 1, "all"), ("multi-hare", 8, 2, "all"),
            ("hare", 4, 1, "all"), ("hare", 8, 1, "winner")} <= variants
    assert all(r["seeds"] == 2 and r["n"] == 12 for r in rows)
    assert all(r["violations"] == 0 == r["violations_total"] for r in rows)
    # the paper's proximity is L2 over the profile's deltas: at most its L1
    assert all(r["proximity"] <= r["proximity_l1"] + 1e-12 for r in rows
               if r["success_rate"] > 0)
    checks = {c["check"]: c for c in doc["checks"]}
    assert checks["zero actionability violations"]["passed"] is True
    # the base asks nothing; HARE stays within its budget (mean questions per person)
    for r in rows:
        if r["variant"] == "base":
            assert r["queries"] == 0
        else:
            # comparisons and accept questions within the budget (Algorithm 4 spends it all)
            assert 0 < r["queries"] <= r["queries_max"] <= r["budget"], r
            assert (r["gamma_schedule"], r["final_accept"], r["iterations_reading"]) == (
                "paper", "ask", "text")
        assert 0 <= r["success_rate"] <= 1 and r["gtd_mean"] <= 2
    by = {(r["variant"], r["budget"], r["iterations"], r["calibrate"]): r for r in rows}
    base, hare = by[("base", 0, 0, "none")], by[("hare", 8, 1, "all")]
    assert hare["gtd_mean"] < base["gtd_mean"]  # the person's answers move the plan toward
    assert hare["gtp_mean"] < base["gtp_mean"]  # their hidden ideal
    ms = doc["step_ms"]
    assert ms["steps"] > 0 and 0 < ms["p50"] <= ms["p95"] <= ms["max"]


def test_bad_options_are_reported(trained_home):
    runner = CliRunner()
    r = runner.invoke(app, ["benchmark", "hare", "--bases", "nope", "--n", "2", "--seeds", "1"])
    assert r.exit_code == 2 and "unknown base 'nope'" in r.output
    r = runner.invoke(app, ["benchmark", "hare", "--iterations", "1,x"])
    assert r.exit_code == 2 and "comma-separated integers" in r.output
    r = runner.invoke(app, ["benchmark", "hare", "--budget", "3", "--iterations", "5",
                            "--budgets", "3"])
    assert r.exit_code == 2 and "smaller than the largest iteration count" in r.output
    r = runner.invoke(app, ["benchmark", "hare", "--iterations-reading", "paper"])
    text = " ".join(r.output.replace("│", " ").split())  # the error box wraps lines
    assert r.exit_code == 2 and "'paper' is not one of 'text', 'code'" in text
