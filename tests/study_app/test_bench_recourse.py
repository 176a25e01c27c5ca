"""`recourse-study benchmark recourse`: rows, JSON shape, hard constraints, clear failures.

Runs on the exact Bayes decision rule (``--decision-model bayes``) with a coarse grid and a
small population, so no trained artifact is needed and the test stays fast.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from engine import recourse as catalogue
from study_app.cli import app

ROW_KEYS = {
    "scenario",
    "method",
    "constraint",
    "n_actionable",
    "preferences",
    "elicitation",
    "cost_profile",
    "n",
    "validity",
    "plausibility",
    "cost_mean",
    "cost_sd",
    "hap",
    "hap_profile",
    "violations",
    "found",
    "seconds",
    "density_source",
    "seed",
    "oracle_plausibility",
    "bins",
    "oracle_speedup",
    "oracle_agreement",
    "icarma_speedup",
    "seconds_5000",
    "world",
    "validity_exact",
    "plausibility_exact",
    "oracle_grid",
    "oracle_range",
    "repair",
    "icarma_training",
    "score_sampling",
}

BASE = ["benchmark", "recourse", "--decision-model", "bayes", "--n", "60", "--bins", "8"]


def _run(args: list[str]):
    return CliRunner().invoke(app, args)


def test_oracle_rows_and_json(tmp_path):
    out = tmp_path / "rows.json"
    res = _run(
        [
            *BASE,
            "--constraints",
            "all,2,1,random",
            "--cost-profiles",
            "constant,convex",
            "--speedup-sample",
            "2",
            "--json-file",
            str(out),
        ]
    )
    assert res.exit_code == 0, res.output
    assert "validity" in res.stdout and "0.0" in res.stdout  # the table: stdout without --json
    doc = json.loads(out.read_text())
    assert doc["config"]["constraints"] == ["all", "2", "1", "random"]
    rows = doc["rows"]
    assert len(rows) == 8
    for r in rows:
        assert set(r) == ROW_KEYS
        assert r["method"] == "oracle" and r["n"] == 60 and r["violations"] == 0
        assert r["plausibility"] == 1.0
        assert r["oracle_agreement"] == 1.0 and r["oracle_speedup"] > 0
        assert r["icarma_speedup"] is None and r["bins"] == 8
        assert r["oracle_grid"] == "factual" and r["repair"] is None  # the paper's Oracle
        assert r["oracle_range"] == "rejected"  # ... over the papers' range
    by = {(r["constraint"], r["cost_profile"]): r for r in rows}
    assert by[("all", "constant")]["n_actionable"] == 4
    assert by[("random", "constant")]["n_actionable"] is None
    assert by[("1", "constant")]["hap"] is None  # undefined with one actionable feature
    assert by[("all", "constant")]["hap_profile"] >= by[("all", "constant")]["hap"]
    v = [by[(c, "constant")]["validity"] for c in ("all", "2", "1")]
    assert v[0] > v[1] > v[2]
    # cost profiles change the plan, never which people get one
    for c in ("all", "2", "1", "random"):
        assert by[(c, "constant")]["validity"] == by[(c, "convex")]["validity"]
    assert by[("all", "convex")]["hap"] <= by[("all", "constant")]["hap"]


def test_no_plausibility_raises_validity(tmp_path):
    out_on = tmp_path / "on.json"
    common = [*BASE, "--constraints", "1", "--speedup-sample", "0"]
    assert _run([*common, "--json-file", str(out_on)]).exit_code == 0
    res = _run([*common, "--no-plausibility", "--json"])
    assert res.exit_code == 0, res.output
    on = json.loads(out_on.read_text())["rows"][0]
    off = json.loads(res.stdout)["rows"][0]  # --json: the object alone on stdout
    assert "Recourse on" in res.stderr  # the table moved to stderr
    assert off["validity"] > on["validity"] and off["violations"] == 0
    assert off["oracle_plausibility"] is False and off["oracle_speedup"] is None


def test_an_interactive_method_is_sent_to_its_own_benchmark():
    res = _run([*BASE, "--methods", "oracle,hare", "--constraints", "all"])
    assert res.exit_code == 2
    assert "asks people" in res.output and "benchmark hare" in res.output
    assert "Recourse on" not in res.output


def test_a_missing_method_fails_before_any_work(monkeypatch):
    monkeypatch.setitem(catalogue.METHODS, "icarma", "engine.recourse.not_written_yet:ICarma")
    res = _run([*BASE, "--methods", "oracle,icarma", "--constraints", "all"])
    assert res.exit_code == 2
    assert "icarma" in res.output and "not available" in res.output
    assert "Recourse on" not in res.output  # no table: nothing ran


@pytest.mark.parametrize(
    ("option", "value", "match"),
    [
        ("--constraints", "all,5", "unknown constraint"),
        ("--methods", "oracle,magic", "unknown method"),
        ("--cost-profiles", "steep", "unknown cost profile"),
        ("--preferences", "skewed", "unknown preference distribution"),
        # fixed choices: refused by the command line, naming the option and its values
        ("--elicitation", "slider", "'slider' is not one of 'ranking', 'likert', 'binary'"),
        ("--decision-model", "oracle", "'oracle' is not one of 'trained', 'bayes', 'lr',"),
        ("--oracle-grid", "everywhere", "'everywhere' is not one of 'factual', 'carma',"),
        ("--icarma-training", "slow", "'slow' is not one of 'fast', 'paper'"),
        ("--score-sampling", "sorted-ish", "'sorted-ish' is not one of 'iid', 'sorted'"),
    ],
)
def test_bad_arguments_are_named(option, value, match):
    res = _run([*BASE, option, value])
    assert res.exit_code == 2
    assert match in " ".join(res.output.replace("│", " ").split())  # the error box wraps


def test_amortized_rows_on_the_trained_models(trained_home, tmp_path):
    """Every amortized row says which model and whether repair ran; repair only helps."""
    rows = {}
    for flag in ("--no-repair", "--repair"):
        out = tmp_path / f"{flag}.json"
        args = [
            "benchmark", "recourse", "--methods", "oracle,icarma,carma", "--constraints", "all,1",
            "--n", "80", "--bins", "8", "--speedup-sample", "0", "--icarma-training", "fast",
            "--json-file", str(out),
        ]
        res = _run([*args, flag])
        assert res.exit_code == 0, res.output
        rows[flag] = json.loads(out.read_text())["rows"]
        assert "fast, repair " + ("on" if flag == "--repair" else "off") in res.output
    for flag, got in rows.items():
        assert [r["method"] for r in got] == ["oracle", "icarma", "carma"] * 2
        for r in got:
            assert r["violations"] == 0
            if r["method"] != "oracle":
                assert r["icarma_speedup"] > 0 and r["seconds_5000"] > 0
                assert r["density_source"] == "scm"
                assert r["repair"] is (flag == "--repair")
                assert r["icarma_training"] == "fast" and r["oracle_grid"] is None
    for off, on in zip(rows["--no-repair"], rows["--repair"], strict=True):
        assert on["validity"] >= off["validity"]


def test_the_papers_icarma_is_the_default_and_says_how_to_build_it(trained_home):
    """Without the paper's models for a cost profile the command stops before any table."""
    res = _run(["benchmark", "recourse", "--methods", "icarma", "--constraints", "all",
                "--cost-profiles", "linear", "--n", "20"])
    assert res.exit_code == 2
    assert "ranking/linear" in res.output and "--icarma-training paper" in res.output
    assert "--train" in res.output  # offered, with the estimate of how long it takes
    assert "Recourse on" not in res.output
