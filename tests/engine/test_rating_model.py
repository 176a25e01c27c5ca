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
