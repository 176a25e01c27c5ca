"""The decision model: accuracy against the Bayes rule, consistent outputs, bad input."""

from __future__ import annotations

import pytest
import torch

from engine.artifacts import load_decision_model, read_metadata
from engine.decision import DecisionConfig, DecisionModel, accuracy, train_decision_model
from engine.scenarios import get_scenario
from engine.scm import WorldModelInputError


@pytest.fixture(scope="module")
def model(trained_home) -> DecisionModel:
    return load_decision_model("loan")


def test_quick_model_is_near_the_bayes_rule(model):
    loan = get_scenario("loan")
    xs, ys = loan.dataset["test"]
    bayes = float(((loan.scm.label_proba(xs) > 0.5) == ys.bool()).double().mean())
    assert accuracy(model, xs, ys) >= bayes - 0.04
    meta = read_metadata("loan", "decision")
    assert meta is not None and meta["metrics"]["bayes_accuracy"] == pytest.approx(bayes)


def test_outputs_agree(model):
    x = get_scenario("loan").dataset["test"][0][:200]
    p = model.predict_proba(x)
    assert p.shape == (200,) and ((p >= 0) & (p <= 1)).all()
    assert torch.equal(model.decision(x), p >= 0.5)
    assert torch.allclose(model(x.numpy()), model(x))
    assert not any(p.requires_grad for p in model.parameters())


def test_gradient_with_respect_to_inputs(model):
    x = get_scenario("loan").dataset["test"][0][:4].float().requires_grad_(True)
    model(x).sum().backward()
    assert x.grad is not None and x.grad[:, 5].abs().sum() > 0  # income matters


def test_training_is_seeded():
    loan = get_scenario("loan")
    (xt, yt), (xv, yv) = loan.dataset["train"], loan.dataset["validation"]
    cfg = DecisionConfig(epochs=2, hidden=(8,))
    a, _ = train_decision_model(xt[:500], yt[:500], xv[:200], yv[:200], cfg)
    b, _ = train_decision_model(xt[:500], yt[:500], xv[:200], yv[:200], cfg)
    assert torch.equal(a(xv), b(xv))


def test_bad_input(model):
    with pytest.raises(WorldModelInputError, match=r"shape \(n, 7\)"):
        model(torch.zeros(3, 5).numpy())
    with pytest.raises(WorldModelInputError, match="NaN"):
        model([[float("nan")] * 7])
    with pytest.raises(WorldModelInputError, match="NaN"):
        model(torch.full((2, 7), float("inf")))


def test_reference_training_is_sgd_and_keeps_adam_fingerprints():
    """CARMA's classifier training (plain SGD, constant lr 1e-3) is a named option: it
    trains with SGD (a different model from Adam's on the same data), records its optimizer,
    and adding the option leaves the Adam configuration's dict (hence the fingerprints of
    every cached model) unchanged."""
    ref = DecisionConfig.reference()
    assert (ref.optimizer, ref.lr, ref.schedule, ref.epochs, ref.batch_size, ref.hidden) == (
        "sgd", 1e-3, "constant", 500, 256, (32, 32))
    assert ref.to_dict()["optimizer"] == "sgd" and "optimizer" not in DecisionConfig().to_dict()
    assert DecisionConfig.from_dict(ref.to_dict()) == ref
    loan = get_scenario("loan")
    (xt, yt), (xv, yv) = loan.dataset["train"], loan.dataset["validation"]
    small = {"epochs": 2, "hidden": (8,), "lr": 1e-3, "schedule": "constant"}
    sgd, _ = train_decision_model(xt[:500], yt[:500], xv[:200], yv[:200],
                                  DecisionConfig(optimizer="sgd", **small))
    adam, _ = train_decision_model(xt[:500], yt[:500], xv[:200], yv[:200], DecisionConfig(**small))
    assert not torch.equal(sgd(xv), adam(xv))
    with pytest.raises(ValueError, match="optimizer must be one of adam, sgd"):
        DecisionConfig(optimizer="rmsprop")


def test_reference_scenario_uses_the_reference_decision_training():
    from engine.artifact_builders import configs

    scenario = get_scenario("loan-carma-reference")
    assert scenario.extras["decision"] == "reference"
    assert torch.equal(scenario.dataset["test"][0], get_scenario("loan-carma").dataset["test"][0])
    assert configs(False, scenario.extras["decision"])["decision"] == DecisionConfig.reference()
    assert configs(True, "reference")["decision"].optimizer == "sgd"
    assert configs(False)["decision"] == DecisionConfig()


def test_a_cost_sensitive_model_rejects_more_and_plain_bce_keeps_its_fingerprint():
    loan = get_scenario("loan")
    (xt, yt), (xv, yv) = loan.dataset["train"], loan.dataset["validation"]
    small = {"epochs": 5, "batch_size": 128, "hidden": (8,)}
    plain, _ = train_decision_model(xt[:800], yt[:800], xv[:300], yv[:300],
                                    DecisionConfig(**small))
    costly, _ = train_decision_model(xt[:800], yt[:800], xv[:300], yv[:300],
                                     DecisionConfig(unfavourable_weight=8.0, **small))
    assert int((~costly.decision(xv)).sum()) > int((~plain.decision(xv)).sum())
    assert "unfavourable_weight" not in DecisionConfig().to_dict()
    weighted = DecisionConfig(unfavourable_weight=5.0)
    assert DecisionConfig.from_dict(weighted.to_dict()) == weighted
    with pytest.raises(ValueError, match="unfavourable_weight must be positive"):
        DecisionConfig(unfavourable_weight=0.0)
