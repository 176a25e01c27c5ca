"""The cumulative-logit rating model of synthetic participants."""

from __future__ import annotations

import numpy as np
import pytest

from engine.synthetic.rating_model import DistanceCurve, OutcomeModel, RatingBehaviour


def test_reference_means_and_shapes():
    rb = RatingBehaviour.reference()
    rng = np.random.default_rng(0)
    n = 60_000
    eff = rb.draw_effects(n, rng)
    d = rng.uniform(0, 0.8, n)
    acc = rb.acceptance.sample(rb.acceptance.latent(d, np.nan, np.nan, eff["u_acc"]), rng)
    act = rb.action.sample(rb.action.latent(d, np.nan, np.nan, eff["u_act"], eff["b_act"]), rng)
    assert set(np.unique(acc)) <= set(range(1, 8)) and set(np.unique(act)) == set(range(1, 8))
    assert abs(acc.mean() - 3.3) < 0.05 and abs(act.mean() - 2.6) < 0.05
    near, mid, far = d < 0.05, (d > 0.3) & (d < 0.5), d > 0.6
    assert abs(acc[near].mean() - acc[far].mean()) < 0.1  # flat
    assert act[near].mean() - act[mid].mean() > 0.5  # steep over small distances
    assert abs(act[mid].mean() - act[far].mean()) < 0.15  # then flat


def test_probabilities_match_sampling():
    m = OutcomeModel(intercept=0.3, satisfaction=1.0, violation=2.0)
    eta = m.latent(np.zeros(3), np.array([0.0, 1.0, np.nan]), np.array([0.0, 0.0, 1.0]))
    assert np.allclose(eta, [0.3, 1.3, -1.7])
    p = m.probabilities(eta)
    assert p.shape == (3, 7) and np.allclose(p.sum(axis=1), 1)
    rng = np.random.default_rng(1)
    draws = m.sample(np.full(100_000, 0.3), rng)
    freq = np.bincount(draws, minlength=8)[1:] / len(draws)
    assert np.abs(freq - p[0]).max() < 0.01


def test_curve_and_validation():
    c = DistanceCurve(drop=2.0, scale=0.1)
    assert c(np.array([0.0]))[0] == 0 and c(np.array([10.0]))[0] == pytest.approx(-2.0)
    with pytest.raises(ValueError, match="strictly increasing"):
        OutcomeModel(intercept=0, cutpoints=(0, 0, 1, 2, 3, 4))
    with pytest.raises(ValueError, match="unknown distance"):
        RatingBehaviour(RatingBehaviour.reference().acceptance, RatingBehaviour.reference().action, "l2")
    with pytest.raises(ValueError, match="scale"):
        DistanceCurve(scale=0)


def test_curve_in_mean_ratings_hits_its_three_numbers() -> None:
    """at_zero / at_far / half_distance (the researcher's terms) give exactly those typical
    mean ratings; the latent names stay aliases of the same curve."""
    from engine.synthetic.rating_model import DistanceCurve, from_ratings, latent_for_mean

    a, curve = from_ratings(4.5, 2.0, 0.15)
    model = OutcomeModel(intercept=a, curve=curve)
    e = model.typical_curve(np.array([0.0, 0.15, 50.0]))
    assert e == pytest.approx([4.5, 3.25, 2.0], abs=1e-6)
    assert np.all(np.diff(model.typical_curve(np.linspace(0, 2, 50))) < 0)  # falls throughout
    rises_a, rises = from_ratings(2.0, 5.0, 0.3)
    assert OutcomeModel(intercept=rises_a, curve=rises).typical_curve(np.array([0.3]))[0] == \
        pytest.approx(3.5, abs=1e-6)
    flat_a, flat = from_ratings(3.5, 3.5, 0.2)
    assert flat.drop == pytest.approx(0.0, abs=1e-9)
    assert OutcomeModel(intercept=flat_a, curve=flat).typical_curve(np.array([0.0, 3.0])) == \
        pytest.approx([3.5, 3.5], abs=1e-6)
    assert latent_for_mean(4.0) == pytest.approx(0.0, abs=1e-8)  # symmetric default cutpoints
    with pytest.raises(ValueError, match="strictly between 1 and 7"):
        latent_for_mean(7.0)
    assert isinstance(curve, DistanceCurve)


def test_protocol_knobs_old_and_new_names_give_the_same_behaviour() -> None:
    from engine.synthetic.rating_model import from_ratings
    from protocols.definition.simulation import SimulationSpec

    new = SimulationSpec.model_validate(
        {"ratings": {"action": {"at_zero": 4.5, "at_far": 2.0, "half_distance": 0.15}}})
    a, curve = from_ratings(4.5, 2.0, 0.15)
    old = SimulationSpec.model_validate(
        {"ratings": {"action": {"intercept": a, "drop": curve.drop, "scale": curve.scale}}})
    got_new, got_old = new.behaviour().ratings.action, old.behaviour().ratings.action
    assert got_new.intercept == pytest.approx(got_old.intercept)
    assert got_new.curve.drop == pytest.approx(got_old.curve.drop)
    assert got_new.curve.scale == pytest.approx(got_old.curve.scale)
    # the other outcome and the other parameters keep the reference values
    ref = RatingBehaviour.reference()
    assert new.behaviour().ratings.acceptance == ref.acceptance
    assert got_new.sd_slope == ref.action.sd_slope
    # at_far alone: the fall is measured from the reference intercept
    only_far = SimulationSpec.model_validate({"ratings": {"action": {"at_far": 1.5}}})
    m = only_far.behaviour().ratings.action
    assert m.intercept == ref.action.intercept
    assert m.typical_curve(np.array([100.0]))[0] == pytest.approx(1.5, abs=1e-6)
