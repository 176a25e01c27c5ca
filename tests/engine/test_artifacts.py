"""Artifact cache: build, cache hit, staleness, corruption, clear errors (own temp home)."""

from __future__ import annotations

import json
import shutil

import pytest

from engine import artifacts
from engine.artifacts import ArtifactMissingError


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv(artifacts.HOME_ENV, str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A home where the quick decision model was built (once for the module), and the
    build's records."""
    home = tmp_path_factory.mktemp("built") / "home"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(artifacts.HOME_ENV, str(home))
        records = artifacts.build_artifacts("loan", quick=True, only=("decision",))
    return home, records


@pytest.fixture
def built_home(built, home):
    """A copy of the built home as this test's home."""
    shutil.copytree(built[0], home)
    return home


def test_missing_artifact_says_how_to_build_it(home):
    with pytest.raises(ArtifactMissingError, match="recourse-study train --scenario loan"):
        artifacts.load_decision_model("loan")


def test_build_then_cache_hit_then_force(built, built_home):
    home, first = built_home, built[1]
    assert [(r.name, r.cache_hit) for r in first] == [("decision", False)]
    assert (home / "artifacts" / "loan" / "splits.npz").exists()
    model = artifacts.load_decision_model("loan")
    again = artifacts.build_artifacts("loan", quick=True, only=("decision",))
    assert again[0].cache_hit and again[0].metadata["fingerprint"] == first[0].metadata[
        "fingerprint"
    ]
    assert artifacts.load_decision_model("loan") is model  # in-process cache
    forced = artifacts.build_artifacts("loan", quick=True, only=("decision",), force=True)
    assert not forced[0].cache_hit


def test_a_config_change_rebuilds_dependents(home, monkeypatch):
    from dataclasses import replace

    from engine import artifact_builders
    from engine.decision import DecisionConfig
    from engine.flows import FlowConfig

    original = artifact_builders.scenario_configs

    def tiny(decision_epochs: int):  # a few epochs each: this checks the bookkeeping
        def configs(scenario, quick: bool):
            cfgs = original(scenario, quick)
            return {**cfgs, "decision": DecisionConfig(epochs=decision_epochs),
                    "flow": FlowConfig(epochs=2, patience=1),
                    "carma": replace(cfgs["carma"], epochs=2)}
        return configs

    monkeypatch.setattr(artifacts, "scenario_configs", tiny(2))
    artifacts.build_artifacts("loan", quick=True, only=("carma",))
    monkeypatch.setattr(artifacts, "scenario_configs", tiny(3))
    records = {r.name: r.cache_hit for r in artifacts.build_artifacts("loan", quick=True,
                                                                   only=("carma",))}
    # decision changed; carma depends on it; the flow does not
    assert records == {"decision": False, "flow": True, "carma": False}


def test_a_corrupt_artifact_does_not_load(built_home):
    home = built_home
    pt = home / "artifacts" / "loan" / "decision.pt"
    pt.write_bytes(pt.read_bytes()[:-10])
    with pytest.raises(ArtifactMissingError, match="not built \\(or is incomplete\\)"):
        artifacts.load_decision_model("loan")
    assert not artifacts.build_artifacts("loan", quick=True, only=("decision",))[0].cache_hit
    meta = json.loads((home / "artifacts" / "loan" / "decision.json").read_text())
    assert meta["quick"] is True and meta["metrics"]["decision_accuracy"] > 0.8


def test_unknown_names(home):
    with pytest.raises(ValueError, match="unknown artifact"):
        artifacts.build_artifacts("loan", only=("magic",))
    with pytest.raises(KeyError, match="unknown scenario"):
        artifacts.build_artifacts("mortgage")
