"""`recourse-study train`: JSON shape, cache hit, clear errors (quick artifacts, own home)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from study_app.cli import app

KEYS = {
    "scenario",
    "decision_accuracy",
    "bayes_accuracy",
    "flow_test_nll",
    "exact_test_nll",
    "flow_cf_rmse",
    "seconds",
    "cache_hit",
    "artifacts",
}


def test_train_json_and_cache_hit(tmp_path, monkeypatch):
    monkeypatch.setenv("RECOURSE_STUDY_HOME", str(tmp_path))
    runner = CliRunner()
    res = runner.invoke(app, ["train", "--quick", "--json", "--only", "flow,decision"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert set(doc) == KEYS and doc["cache_hit"] is False
    assert set(doc["artifacts"]) == {"decision", "flow"}
    assert doc["decision_accuracy"] > 0.8 and doc["flow_test_nll"] - doc["exact_test_nll"] < 0.5
    again = json.loads(
        runner.invoke(app, ["train", "--quick", "--json", "--only", "flow,decision"]).stdout
    )
    assert again["cache_hit"] is True and again["flow_test_nll"] == doc["flow_test_nll"]


def test_train_rejects_bad_arguments():
    runner = CliRunner()
    res = runner.invoke(app, ["train", "--scenario", "mortgage"])
    assert res.exit_code == 2 and "unknown scenario 'mortgage'" in res.output
    res = runner.invoke(app, ["train", "--only", "decision,magic"])
    assert res.exit_code == 2 and "unknown artifact(s) magic" in res.output
