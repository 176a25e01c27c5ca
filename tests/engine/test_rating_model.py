"""The cumulative-logit rating model of synthetic participants."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.synthetic.rating_model import (
    DistanceCurve,
    OutcomeModel,
    RatingBehaviour,
    from_ratings,
)


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


def test_population_curve_is_the_mean_rating_over_participants() -> None:
    """With random slopes a flat typical curve drifts in the mean rating (the spread pulls it
    toward 4); ``curve_of: population`` makes the mean rating over participants the stated
    curve, checked against sampled participants at near and far distances."""
    typical = OutcomeModel(intercept=-0.8, sd_intercept=1.5, sd_slope=0.35)
    population = dataclasses.replace(typical, curve_of="population")
    rng = np.random.default_rng(3)
    n = 200_000

    def sampled_mean(m: OutcomeModel, d: float) -> float:
        u, b = rng.normal(0, m.sd_intercept, n), rng.normal(0, m.sd_slope, n)
        return float(m.sample(m.latent(np.full(n, d), np.nan, np.nan, u, b), rng).mean())

    stated = float(typical.expected(np.array([-0.8]))[0])
    assert sampled_mean(typical, 8.0) - sampled_mean(typical, 0.0) > 0.15  # drifts up
    near, far = sampled_mean(population, 0.0), sampled_mean(population, 8.0)
    assert near == pytest.approx(stated, abs=0.02) and far == pytest.approx(stated, abs=0.02)
    assert population.population_mean(np.array([0.0, 8.0])) == pytest.approx([stated] * 2)
    assert population.location(np.array([8.0]))[0] < population.location(np.array([0.0]))[0]
    assert population.typical_curve(np.array([8.0]))[0] < stated  # the u = b = 0 person's
    # without slopes the spread does not grow: one shift at every distance (the random
    # intercept alone still pulls the mean toward 4, so the typical person sits lower)
    flat = OutcomeModel(intercept=-0.8, sd_slope=0.0, curve_of="population")
    loc = flat.location(np.array([0.0, 8.0]))
    assert loc[0] == pytest.approx(loc[1], abs=1e-9) and loc[0] < -0.8
    # a falling population curve keeps its three numbers in mean ratings
    a, curve = from_ratings(4.7, 2.5, 0.3)
    act = OutcomeModel(intercept=a, curve=curve, sd_intercept=1.5, sd_slope=0.3,
                       curve_of="population")
    assert act.population_mean(np.array([0.0, 0.3, 60.0])) == pytest.approx(
        [4.7, 3.6, 2.5], abs=1e-4)
    with pytest.raises(ValueError, match="curve_of"):
        OutcomeModel(intercept=0.0, curve_of="median")  # type: ignore[arg-type]


def test_curve_of_round_trips_and_is_a_protocol_knob() -> None:
    from protocols.definition.simulation import SimulationSpec

    spec = SimulationSpec.model_validate(
        {"ratings": {"acceptance": {"at_zero": 3.28, "sd_slope": 0.35,
                                    "curve_of": "population"}}})
    rb = spec.behaviour().ratings
    assert rb.acceptance.curve_of == "population" and rb.action.curve_of == "typical"
    assert RatingBehaviour.from_dict(dataclasses.asdict(rb)) == rb
    stored = dataclasses.asdict(RatingBehaviour.reference())  # stored before the knob
    for outcome in ("acceptance", "action"):
        del stored[outcome]["curve_of"]
    assert RatingBehaviour.from_dict(stored) == RatingBehaviour.reference()
    with pytest.raises(ValueError, match="curve_of"):
        SimulationSpec.model_validate({"ratings": {"action": {"curve_of": "median"}}})
