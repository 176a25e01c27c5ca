"""Scenario files: the shipped Loan files, a pool + rule world, the rule language, the
`loan-data` samples, files given by path, and the `scenarios` command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from engine.artifacts import build_artifacts, load_classifier
from engine.decision import RuleDecision
from engine.scenarios import get_scenario, scenario_names
from engine.scenarios.base import Role
from engine.scenarios.loan import LoanSCM
from engine.scenarios.rules import RuleSyntaxError, parse_rule
from study_app.cli import app

FILES = Path(__file__).parent / "scenario_files"
REPO = Path(__file__).resolve().parents[2]


def test_loan_files_state_the_loan_world() -> None:
    loan = get_scenario("loan")
    assert loan.world_kind == "equations" and isinstance(loan.scm, LoanSCM)
    assert loan.feature_names == ("gender", "age", "education", "loan_amount",
                                  "loan_duration", "income", "savings")
    assert [f.role for f in loan.features] == [Role.IMMUTABLE, Role.IMMUTABLE, Role.MUTABLE,
                                                *[Role.ACTIONABLE] * 4]
    assert loan.features[0].levels == ("female", "male") and loan.features[0].discrete
    assert loan.features[2].direction == 1
    assert loan.features[3].display.format(0.0) == "$15,000"
    assert loan.features[3].display_min == 1000.0
    # the data are the SCM's 20,000 samples at seed 0, as before the move to files
    x = loan.dataset["train"][0]
    assert torch.equal(x[:50], LoanSCM().sample(20_000, seed=0)[:50])
    for variant in ("loan-carma", "loan-bernoulli"):  # `extends: loan`
        v = get_scenario(variant)
        assert v.features == loan.features and v.story == loan.story
    assert get_scenario("loan-bernoulli").label_rule == "bernoulli"
    assert get_scenario("loan-carma").samples.kind == "published"
    assert {"loan", "loan-carma", "loan-bernoulli", "loan-data"} <= set(scenario_names())


def test_pool_world_exposes_pool_rule_and_features(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    s = get_scenario(str(FILES / "pool_world.yaml"))
    assert s.world_kind == "pool" and s.scm is None and len(s.pool) == 6
    assert [f.kind for f in s.features] == ["ordinal", "categorical", "binary", "continuous",
                                           "continuous"]
    # level features are codes in the order of their levels; continuous: display units
    assert s.pool.x[2].tolist() == [2.0, 2.0, 0.0, 90_000.0, 30_000.0]
    # income >= 4 * loan and education >= 'bachelor'
    expected = [False, True, False, True, False, False]
    assert s.dataset["test"][1].bool().tolist() == expected
    assert RuleDecision(s).decision(s.pool.x).tolist() == expected
    assert isinstance(load_classifier(s), RuleDecision)
    # M_i: education states its range (2 levels apart); income comes from the pool
    assert s.ranges.tolist() == [2.0, 2.0, 1.0, 60_000.0, 20_000.0]
    assert not s.categorical[0] and s.categorical[1]  # ordinal counts levels, categorical 1
    monkeypatch.setenv("RECOURSE_STUDY_HOME", str(tmp_path))
    assert build_artifacts(str(FILES / "pool_world.yaml")) == []  # a fixed rule: nothing
    assert get_scenario("test-pool") is s  # known by its name once loaded


def test_rule_language() -> None:
    levels = {"edu": ("low", "mid", "high"), "x": (), "y": ()}
    v = {"edu": np.array([0, 1, 2, 2]), "x": np.array([1.0, 5.0, -2.0, 3.0]),
         "y": np.array([2.0, 1.0, 0.0, 3.0])}
    cases = {
        "x > y": [False, True, False, False],
        "0 <= x <= 3": [True, False, False, True],
        "edu >= 'mid' and not x < 0": [False, True, False, True],
        "edu in ['low', 'high'] or y == 1": [True, True, True, True],
        "edu not in ['low']": [False, True, True, True],
        "abs(x) >= 2 * min(y, 1) + max(0, -1)": [False, True, True, True],
        "x / 2 - y * 1 > -1": [False, True, False, False],
    }
    for text, want in cases.items():
        assert parse_rule(text, levels).decide(v).tolist() == want, text
    assert parse_rule("x > y and edu == 'high'", levels).features == ("x", "y", "edu")
    for bad in ("x.real > 0", "open('f')", "[x][0] > 1", "x > 'low'", "edu > 'top'",
                "lambda: 1", "x if y else 1", "'low' > 1", "x >"):
        with pytest.raises(RuleSyntaxError):
            parse_rule(bad, levels)


def test_loan_data_file_is_our_generator_and_the_exact_labels() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_loan_data",
                                                  REPO / "scripts" / "make_loan_data.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    shipped = REPO / "engine" / "scenarios" / "data" / "loan-data.csv"
    assert module.loan_data_csv() == shipped.read_text()
    data = get_scenario("loan-data")
    assert data.world_kind == "data" and data.scm is None and data.truth == "loan"
    assert data.parents == get_scenario("loan").parents  # the Loan graph
    x = torch.cat([data.dataset[s][0] for s in ("train", "validation", "test")])
    y = torch.cat([data.dataset[s][1] for s in ("train", "validation", "test")])
    assert len(x) == 10_000
    assert torch.equal(y.bool(), LoanSCM().label_logit(x) >= 0)


def test_a_file_of_ones_own_by_path(tmp_path: Path) -> None:
    """A user's file (extending a shipped one) works by path, in the CLI and in protocols."""
    from protocols.definition import registries
    own = tmp_path / "mine.yaml"
    own.write_text("extends: loan\nname: my-loan\ntitle: My loan\nworld:\n"
                   "  samples: {n: 2000, seed: 3}\n")
    assert registries.scenario_problem(str(own)) is None
    assert registries.actionable_count(str(own)) == 4
    assert "no scenario file" in registries.scenario_problem(str(tmp_path / "none.yaml"))
    result = CliRunner().invoke(app, ["scenarios", str(own), "--json"])
    assert result.exit_code == 0, result.output
    listed = {e["name"]: e for e in json.loads(result.stdout)["scenarios"]}
    assert listed["my-loan"]["world"] == "equations"
    assert listed["my-loan"]["source"] == str(own.resolve())
    assert listed["loan-data"]["world"] == "data" and listed["loan-data"]["truth"] == "loan"
    assert listed["loan"]["actionable"] == ["loan_amount", "loan_duration", "income", "savings"]
    assert get_scenario("my-loan").dataset["train"][0].shape == (1000, 7)
    clash = tmp_path / "clash.yaml"
    shutil.copy(own, clash)
    clash.write_text(clash.read_text().replace("my-loan", "loan"))
    result = CliRunner().invoke(app, ["scenarios", str(clash), "--json"])
    assert result.exit_code == 2 and "shipped scenario" in json.loads(result.stdout)["error"]


def test_editing_a_base_file_reloads_the_scenarios_that_extend_it(tmp_path: Path) -> None:
    """The in-process cache is keyed on every file of the ``extends`` chain, so a server
    or notebook that edits a base file sees the change in the files built on it."""
    import os

    base = tmp_path / "base.yaml"
    base.write_text((Path(__file__).resolve().parents[2] / "engine" / "scenarios" /
                     "loan.yaml").read_text().replace("name: loan\n", "name: my-base\n", 1))
    child = tmp_path / "child.yaml"
    child.write_text("extends: base.yaml\nname: my-child\n")
    first = get_scenario(str(child))
    assert get_scenario(str(child)) is first  # unchanged files: the cached instance
    text = base.read_text()
    assert "title: " in text
    base.write_text(text.replace("title: ", "title: Edited ", 1))
    stat = child.stat()
    os.utime(child, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the child itself unchanged
    second = get_scenario(str(child))
    assert second is not first and second.title.startswith("Edited ")


def test_the_oracle_refuses_a_pool_world_clearly() -> None:
    from engine.papers.recourse_benchmark import BenchmarkConfig, build_methods
    from engine.recourse import MethodUnavailableError

    s = get_scenario(str(FILES / "pool_world.yaml"))
    with pytest.raises(MethodUnavailableError, match="cannot run on scenario 'test-pool'"):
        build_methods(s, RuleDecision(s), BenchmarkConfig(methods=("oracle",),
                                                          constraints=("all",)))
