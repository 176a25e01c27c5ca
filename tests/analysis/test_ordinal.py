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


def _logp_and_grads(logp_fn, mode: str, y: np.ndarray, eta: np.ndarray, cut: np.ndarray):
    import pytensor

    e, c = pt.dvector("eta"), pt.dvector("cut")
    lp = logp_fn(pt.as_tensor(y), e, c)
    total = lp.sum()
    f = pytensor.function([e, c], [lp, *pytensor.grad(total, [e, c])], mode=mode)
    return f(eta, cut)


def test_kernel_equals_the_graph_in_value_and_gradient_on_both_backends():
    """The fused kernel (ObservedLogp: nutpie's numba backend and PyMC's C backend through
    perform) against the difference-of-sigmoids graph and its automatic gradient; every
    category, latent scores far beyond the cutpoints included."""
    rng = np.random.default_rng(4)
    y = np.concatenate([np.arange(7), rng.integers(0, 7, 300)])
    eta = np.concatenate([np.linspace(-9, 9, 7), rng.normal(0, 3, 300)])
    graph = _logp_and_grads(lambda k, e, c: ordinal.graph_logp(k, e, c[None, :]), "FAST_RUN",
                            y, eta, CUTS)
    for mode in ("FAST_RUN", "NUMBA"):
        fused = _logp_and_grads(ordinal.observed_logp, mode, y, eta, CUTS)
        for ours, theirs in zip(fused, graph, strict=True):
            np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-9)


def test_kernel_gradient_is_the_derivative_of_its_value():
    """Central differences of the kernel's own log-density (a wrong sign or a dropped gap term
    in the cutpoint derivatives fails here even where the graph agrees in value)."""
    rng = np.random.default_rng(5)
    y = rng.integers(0, 7, 50)
    eta = rng.normal(0, 2, 50)
    cut = CUTS + rng.normal(0, 0.05, 6)
    _, d_eta, d_cut = _logp_and_grads(ordinal.observed_logp, "NUMBA", y, eta, cut)
    h = 1e-6

    def total(e, c):
        return _logp_and_grads(ordinal.observed_logp, "NUMBA", y, e, c)[0].sum()

    for j in range(6):
        step = np.eye(6)[j] * h
        assert abs((total(eta, cut + step) - total(eta, cut - step)) / (2 * h) - d_cut[j]) < 1e-5
    for r in range(5):
        step = np.eye(50)[r] * h
        assert abs((total(eta + step, cut) - total(eta - step, cut)) / (2 * h) - d_eta[r]) < 1e-6


def test_kernel_at_extreme_cutpoint_gaps():
    """A gap so wide that e^-gap underflows (the direct exp path) and a gap of 0 (probability 0:
    -inf, not an exception, so a sampler rejects the point)."""
    wide = np.array([-2.5, -1.2, 100.0, 1000.0, 1001.5, 1002.8])
    lp = ordinal.observed_logp(pt.as_tensor(np.array([3, 3])), pt.as_tensor(np.array([0.0, 1.0])),
                               pt.as_tensor(wide)).eval()
    np.testing.assert_allclose(lp, [-100.0, -99.0], rtol=1e-12)
    flat = np.array([-2.5, -1.2, 0.0, 0.0, 1.0, 2.0])
    lp = ordinal.observed_logp(pt.as_tensor(np.array([3])), pt.as_tensor(np.array([0.0])),
                               pt.as_tensor(flat)).eval()
    assert lp[0] == -np.inf


def test_kernel_refuses_ratings_and_scores_of_different_lengths():
    import pytest

    with pytest.raises(ValueError, match="differ in length"):
        ordinal.observed_logp(pt.as_tensor(np.array([1, 2, 3])), pt.as_tensor(np.zeros(2)),
                              pt.as_tensor(CUTS)).eval()


def test_polynomial_exp_and_log_agree_with_libm():
    """The kernel's own exp (v <= 0) and log (1 <= x <= 4), written to vectorize
    (analysis.ordinal_kernel), against the C library: a wrong coefficient, reduction constant
    or exponent assembly shows as an error far above a few units in the last place."""
    from analysis.ordinal_kernel import EXP_FLOOR, exp_nonpositive, log_1_to_4

    v = np.concatenate([np.linspace(EXP_FLOOR, 0.0, 200_001), [0.0, -1e-300, -0.3466, -0.3467,
                                                               -0.6931471805599453, -49.99]])
    np.testing.assert_allclose(exp_nonpositive(v), np.exp(v), rtol=2e-15, atol=0)
    assert exp_nonpositive(np.array([-60.0, -1e6]))[0] == np.exp(EXP_FLOOR)  # clamped
    x = np.concatenate([np.linspace(1.0, 4.0, 200_001), [np.sqrt(2), 2 * np.sqrt(2),
                                                         1 + 1e-15, np.nextafter(4, 0)]])
    np.testing.assert_allclose(log_1_to_4(x), np.log(x), rtol=0, atol=5e-16)


def test_numba_cache_key_follows_the_kernels_module(tmp_path, monkeypatch):
    """A kernel's compiled code is cached under a key of its module's source: editing a helper
    the kernel calls (not the kernel itself) gives a new key, so nutpie never runs stale code."""
    import importlib

    from analysis.fused import cache_key

    module = tmp_path / "kernel_for_key.py"
    monkeypatch.syspath_prepend(str(tmp_path))
    keys = []
    for constant in ("1.0", "2.0"):
        module.write_text(f"def helper(x):\n    return x * {constant}\n\n\n"
                          "def kernel(x):\n    return helper(x)\n")
        mod = importlib.reload(importlib.import_module("kernel_for_key")) if keys else \
            importlib.import_module("kernel_for_key")
        keys.append(cache_key("Op", mod.kernel))
    assert keys[0] != keys[1] and all(k.startswith("Op_") for k in keys)
