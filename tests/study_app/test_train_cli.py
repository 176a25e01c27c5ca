"""`recourse-study train`: JSON shape, cache hit, clear errors (quick artifacts, own home)."""

from __future__ import annotations

import json
import shutil

import pytest
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


@pytest.fixture(scope="module")
def home(tmp_path_factory, trained_home):
    """A home holding only the test home's quick flow of the Loan scenario (the half-minute
    of training that conftest's ``trained_home`` does whenever the training code changes):
    the commands here train the decision model and the iCARMA models on it."""
    home = tmp_path_factory.mktemp("train-home")
    (home / "artifacts" / "loan").mkdir(parents=True)
    for name in ("flow.json", "flow.pt"):
        shutil.copy2(trained_home / "artifacts" / "loan" / name, home / "artifacts" / "loan")
    return home


def test_train_json_and_cache_hit(home, monkeypatch):
    monkeypatch.setenv("RECOURSE_STUDY_HOME", str(home))
    runner = CliRunner()
    res = runner.invoke(app, ["train", "--quick", "--json", "--only", "flow,decision"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert set(doc) == KEYS and doc["cache_hit"] is False
    assert set(doc["artifacts"]) == {"decision", "flow"}
    # the decision model is built here; the flow is the test home's (trained by this code)
    assert not doc["artifacts"]["decision"]["cache_hit"] and doc["artifacts"]["flow"]["cache_hit"]
    assert doc["decision_accuracy"] > 0.8 and doc["flow_test_nll"] - doc["exact_test_nll"] < 0.5
    assert doc["bayes_accuracy"] == 1.0  # deterministic labels: the Bayes rule never errs
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


def test_train_the_papers_icarma_models_and_select_the_best_seed(home, monkeypatch):
    monkeypatch.setenv("RECOURSE_STUDY_HOME", str(home))
    args = ["train", "--quick", "--json", "--icarma-training", "paper", "--seeds", "2",
            "--elicitations", "ranking", "--cost-profiles", "convex"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    names = {"icarma-paper-ranking-convex-s1000", "icarma-paper-ranking-convex-s2000",
             "icarma-paper-ranking-convex"}
    assert set(doc["artifacts"]) == names
    chosen = doc["selected"]["icarma-paper-ranking-convex"]
    scores = {int(k): v for k, v in chosen["val_scores"].items()}
    assert set(scores) == {1000, 2000} and chosen["seed"] == min(scores, key=scores.get)
    again = json.loads(CliRunner().invoke(app, args).stdout)
    assert again["cache_hit"] is True
    res = CliRunner().invoke(app, [*args[:4], "paper", "--elicitations", "binary"])
    assert res.exit_code == 2 and "unknown elicitation 'binary'" in res.output


def test_train_a_tabular_world_reports_both_classifiers(trained_home):
    """On the test home, which holds german-credit's quick artifacts (their training is
    tests/conftest.py's): the report of a tabular world."""
    runner = CliRunner()
    res = runner.invoke(app, ["train", "--scenario", "german-credit", "--quick", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    # the two classifiers (with their test accuracy) and the latent-space bases' VAEs
    assert set(doc["artifacts"]) == {"lr", "ann", "vae", "csvae"}
    assert set(doc["test_accuracy"]) == {"lr", "ann"}
    assert all(0.65 < a < 0.8 for a in doc["test_accuracy"].values())  # 0.70 by majority
    res = runner.invoke(app, ["train", "--scenario", "german-credit", "--only", "flow"])
    assert res.exit_code == 2 and "expected some of lr, ann" in res.output
    listed = json.loads(runner.invoke(app, ["scenarios", "--json"]).stdout)["scenarios"]
    tabular = {e["name"]: e for e in listed if e["world"] == "tabular"}
    assert set(tabular) == {"adult", "compas", "german-credit", "gmsc"}
    assert len(tabular["adult"]["features"]) == 13
    assert "2,399 rows with missing values dropped" in tabular["adult"]["data"]


def test_train_paper_compares_the_per_seed_loop_with_the_ensemble(home, monkeypatch):
    monkeypatch.setenv("RECOURSE_STUDY_HOME", str(home))
    args = ["train", "--quick", "--json", "--icarma-training", "paper", "--seeds", "2",
            "--elicitations", "ranking", "--cost-profiles", "concave", "--epochs", "2"]
    res = CliRunner().invoke(app, [*args, "--compare"])
    assert res.exit_code == 0, res.output
    [cmp] = json.loads(res.stdout)["compare"]
    assert cmp["setup"] == "ranking/concave" and cmp["epochs"] == 2 and cmp["seeds"] == 2
    assert set(cmp["seconds"]) == set(cmp["cpu_seconds"]) == {"per_seed_loop", "ensemble"}
    assert cmp["speedup"] == pytest.approx(cmp["seconds"]["per_seed_loop"]
                                           / cmp["seconds"]["ensemble"])
    # the same models both ways: weights bit for bit, the same selected seed
    assert [m["seed"] for m in cmp["members"]] == [1000, 2000]
    assert all(m["bitwise_equal"] and m["max_weight_difference"] == 0.0 for m in cmp["members"])
    assert cmp["selected_seed"]["per_seed_loop"] == cmp["selected_seed"]["ensemble"]
    # the ensemble's models stay cached: training again finds them, nothing missing
    doc = json.loads(CliRunner().invoke(app, args).stdout)
    assert doc["cache_hit"] is True and doc["plan"]["missing"] == {}


def test_train_paper_states_what_is_missing_and_its_estimate(home, monkeypatch):
    monkeypatch.setenv("RECOURSE_STUDY_HOME", str(home))
    args = ["train", "--quick", "--json", "--icarma-training", "paper", "--seeds", "2",
            "--elicitations", "ranking", "--cost-profiles", "linear", "--epochs", "1"]
    res = CliRunner().invoke(app, [*args, "--ensemble", "off"])
    assert res.exit_code == 0, res.output
    plan = json.loads(res.stdout)["plan"]
    assert plan["missing"] == {"ranking/linear": [1000, 2000]} and plan["ensemble"] is False
    assert plan["estimate_seconds"] > 0
    res = CliRunner().invoke(app, [*args, "--ensemble", "sometimes"])
    text = " ".join(res.output.replace("│", " ").split())  # the error box wraps lines
    assert res.exit_code == 2 and "'sometimes' is not one of 'on', 'off'" in text
    res = CliRunner().invoke(app, ["train", "--quick", "--compare"])
    text = " ".join(res.output.replace("│", " ").split())  # the error box wraps lines
    assert res.exit_code == 2 and "--icarma-training paper only" in text


@pytest.mark.parametrize("command", [
    ["benchmark", "recourse", "--methods", "icarma", "--n", "3"],
    ["benchmark", "fairness", "--n", "3"],
    ["reproduce", "icarma-table1", "--scenario", "loan"],
], ids=["benchmark-recourse", "benchmark-fairness", "reproduce"])
def test_missing_paper_models_stop_with_the_estimate_and_offer_train(tmp_path, monkeypatch,
                                                                     command):
    monkeypatch.setenv("RECOURSE_STUDY_HOME", str(tmp_path))  # nothing trained here
    res = CliRunner().invoke(app, [*command, "--json"])
    assert res.exit_code == 2, res.output
    doc = json.loads(res.stdout)
    assert "ranking/constant (10 seeds) are not trained" in doc["error"]
    assert "--train" in doc["error"] and "training them takes about" in doc["error"]
    assert doc["missing"] == {"ranking/constant": [1000 * (i + 1) for i in range(10)]}
    assert doc["estimate_seconds"] > 0
    assert not list(tmp_path.rglob("*.pt"))  # nothing was trained
