"""The trained artifacts shipped with the code (engine.artifact_shipped): a new home copies them
instead of training, only when their fingerprint is the one needed and their weights are
intact; the shipped Loan artifacts are current (their fingerprints are the ones the code
builds to) and, in the slow suite, retraining reproduces them within tolerance."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engine.artifact_plan import planned_fingerprints, training_plan
from engine.artifact_provenance import training_code_files
from engine.artifact_shipped import (
    PACKAGE_DIR,
    PROVENANCE,
    SHIPPED_ENV,
    install_shipped,
    shipped_metadata,
)
from engine.artifact_store import HOME_ENV, read_metadata

SHIPPED_LOAN = PACKAGE_DIR / "loan"
ALL_LOAN = ("decision", "flow", "icarma", "icarma-likert", "carma", "vae", "csvae")
# The shipped folder stays small enough for a repository: the largest artifact is the flow.
MAX_SHIPPED_BYTES = 5_000_000
# Retrained vs shipped: each metric within this absolute difference (the decision's test
# accuracy in share of people, the flow's test NLL in nats per person, iCARMA's validity on
# validation in share of people, its cost in the cost profile's units, the VAEs'
# reconstruction error in standard deviations).
TOLERANCE = {
    "decision": {"decision_accuracy": 0.01, "validation_accuracy": 0.01},
    "flow": {"flow_test_nll": 0.05, "flow_cf_rmse": 0.02},
    "icarma": {"val_validity_flow": 0.03, "val_cost": 0.05},
    "icarma-likert": {"val_validity_flow": 0.03, "val_cost": 0.05},
    "carma": {"val_validity_flow": 0.03, "val_cost": 0.05},
    "vae": {"val_recon_mae": 0.02},
    "csvae": {"val_recon_mae": 0.02},
}


@pytest.fixture
def new_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv(HOME_ENV, str(home))
    return home


def test_a_new_home_copies_the_shipped_artifacts_instead_of_training(
    trained_home: Path, new_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.artifacts import build_artifacts

    # the test home's quick artifacts stand for shipped ones (the same layout)
    monkeypatch.setenv(SHIPPED_ENV, str(trained_home / "artifacts"))
    assert training_plan("loan", quick=True) == {}
    records = build_artifacts("loan", quick=True)
    assert [r.name for r in records] == list(ALL_LOAN)
    assert all(r.shipped and r.cache_hit for r in records)
    for name in ALL_LOAN:
        for suffix in (".pt", ".json"):
            copied = new_home / "artifacts" / "loan" / f"{name}{suffix}"
            assert copied.read_bytes() == (trained_home / "artifacts" / "loan" /
                                           f"{name}{suffix}").read_bytes()
    again = build_artifacts("loan", quick=True)  # now the home's own: a plain cache hit
    assert all(r.cache_hit and not r.shipped for r in again)


def test_a_shipped_artifact_of_another_fingerprint_or_with_broken_weights_is_not_used(
    trained_home: Path, new_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = tmp_path / "shipped"
    shutil.copytree(trained_home / "artifacts" / "loan", shipped / "loan")
    monkeypatch.setenv(SHIPPED_ENV, str(shipped))
    fp = planned_fingerprints("loan", quick=True)["decision"]
    assert install_shipped("loan", "decision", "0" * 64) is None
    assert read_metadata("loan", "decision") is None  # nothing written
    (shipped / "loan" / "decision.pt").write_bytes(b"not the weights")
    assert shipped_metadata("loan", "decision") is None
    assert install_shipped("loan", "decision", fp) is None
    # the plan says the decision model would be trained, and how long its stale copy took
    plan = training_plan("loan", quick=True, only=("decision",))
    assert list(plan) == ["decision"]
    monkeypatch.setenv(SHIPPED_ENV, "off")
    assert shipped_metadata("loan", "flow") is None


def _provenance() -> dict:
    return json.loads((SHIPPED_LOAN / PROVENANCE).read_text())


def test_the_shipped_loan_artifacts_are_current(monkeypatch: pytest.MonkeyPatch) -> None:
    """Their fingerprints are those the code builds to now: a change to the Loan data or an
    artifact's configuration fails here until scripts/ship_artifacts.py rebuilt them."""
    monkeypatch.delenv(SHIPPED_ENV, raising=False)
    planned = planned_fingerprints("loan")
    provenance = _provenance()
    assert sorted(provenance["artifacts"]) == sorted(ALL_LOAN) == sorted(planned)
    for name, fp in planned.items():
        meta = shipped_metadata("loan", name)
        assert meta is not None, f"{name}: missing or its weights do not match their SHA-256"
        assert meta["fingerprint"] == fp, (
            f"the shipped {name} is stale: run `python scripts/ship_artifacts.py`")
        assert meta["quick"] is False
        assert provenance["artifacts"][name]["sha256"] == meta["sha256"]
    assert provenance["command"] == "python scripts/ship_artifacts.py --scenario loan"
    assert len(provenance["training_code_sha256"]) == 64
    assert {"python", "torch", "numpy"} <= set(provenance["libraries"])
    sizes = [p.stat().st_size for p in SHIPPED_LOAN.iterdir()]
    assert sum(sizes) < MAX_SHIPPED_BYTES


def test_the_training_code_hash_reaches_the_shipping_code() -> None:
    files = {p.relative_to(PACKAGE_DIR.parents[1]).as_posix() for p in training_code_files()}
    assert {"engine/artifacts.py", "engine/artifact_shipped.py", "engine/flows.py",
            "engine/scenarios/loan.yaml"} <= files


@pytest.mark.slow
def test_retraining_reproduces_the_shipped_loan_artifacts(
    new_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped artifacts are what the project's code trains: every Loan artifact retrained
    in an empty home with shipping off (minutes) lands within TOLERANCE of the shipped one's
    metrics, and the decision models agree on the test split."""
    import torch

    from engine.artifacts import build_artifacts, load_decision_model
    from engine.scenarios import get_scenario

    monkeypatch.setenv(SHIPPED_ENV, "off")
    records = {r.name: r for r in build_artifacts("loan")}
    assert not any(r.cache_hit for r in records.values())
    for name, tolerances in TOLERANCE.items():
        shipped = json.loads((SHIPPED_LOAN / f"{name}.json").read_text())
        assert records[name].metadata["fingerprint"] == shipped["fingerprint"]
        for metric, tol in tolerances.items():
            new, old = records[name].metadata["metrics"][metric], shipped["metrics"][metric]
            assert abs(new - old) <= tol, f"{name} {metric}: retrained {new}, shipped {old}"
    retrained = load_decision_model("loan")
    monkeypatch.setenv(HOME_ENV, str(new_home.parent / "shipped-home"))
    monkeypatch.delenv(SHIPPED_ENV)
    build_artifacts("loan", only=("decision",))  # copies the shipped one
    shipped_model = load_decision_model("loan")
    xs = get_scenario("loan").data("decision")["test"][0]
    with torch.no_grad():
        agree = (retrained.decision(xs) == shipped_model.decision(xs)).double().mean()
    assert agree >= 0.99

