"""The observed-category cumulative-logit likelihood (analysis.ordinal) is PyMC's
OrderedLogistic likelihood: the same log-density everywhere (also far in the tails, where a
plain difference of sigmoids rounds to 0), and draws with the model's category shares."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from analysis import ordinal

CUTS = np.array([-2.5, -1.2, -0.4, 0.3, 1.5, 2.8])


def test_log_density_equals_ordered_logistic():
    rng = np.random.default_rng(0)
    eta = rng.normal(0, 3, 400)
    y = rng.integers(0, 7, 400)
    ours = pm.logp(pm.CustomDist.dist(eta, CUTS, logp=ordinal.logp, signature="(),(k)->()",
                                      dtype="int64"), y).eval()
    theirs = pm.logp(pm.OrderedLogistic.dist(eta=eta, cutpoints=CUTS), y).eval()
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)


def test_tails_stay_finite_and_exact():
    # eta far above every cutpoint: P(y = 0) = sigmoid(c_1 - eta), about e^-42.5
    eta = np.array([40.0, -40.0, 40.0])
    y = np.array([0, 6, 6])
    lp = pm.logp(pm.CustomDist.dist(eta, CUTS, logp=ordinal.logp, signature="(),(k)->()",
                                    dtype="int64"), y).eval()
    np.testing.assert_allclose(lp[:2], [CUTS[0] - 40.0, -(40.0 + CUTS[-1])], rtol=1e-9)
    assert abs(lp[2]) < 1e-12


def test_draws_follow_the_category_probabilities():
    eta = np.full(20000, 0.7)
    draws = ordinal.random(eta, CUTS, np.random.default_rng(1))
    probs = ordinal.probabilities(pt.as_tensor(eta[:1]), pt.as_tensor(CUTS)).eval()[0]
    shares = np.bincount(draws, minlength=7) / draws.size
    np.testing.assert_allclose(shares, probs, atol=0.012)
    assert abs(probs.sum() - 1) < 1e-12


def test_model_log_likelihood_and_predictive_draws_work():
    """PSIS-LOO needs the pointwise log-likelihood, the report posterior predictive draws."""
    rng = np.random.default_rng(2)
    y = rng.integers(0, 7, 30)
    with pm.Model() as model:
        eta = pm.Normal("eta", 0, 1)
        ordinal.observe("y", pt.ones(30) * eta, pt.as_tensor(CUTS), y)
    point = {"eta": np.array(0.3)}
    lp = model.compile_logp(vars=[model["y"]], sum=False)(point)[0]
    np.testing.assert_allclose(lp, pm.logp(pm.OrderedLogistic.dist(
        eta=np.full(30, 0.3), cutpoints=CUTS), y).eval())
    with model:
        prior = pm.sample_prior_predictive(draws=5, random_seed=3)
    values = prior.prior_predictive["y"].values
    assert values.shape == (1, 5, 30) and values.min() >= 0 and values.max() <= 6
