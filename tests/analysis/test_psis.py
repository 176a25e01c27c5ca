"""analysis.psis computes ArviZ's PSIS-LOO for all observations at once: the same elpd,
standard error, p_loo, pointwise elpd and Pareto k as ``az.loo(pointwise=True)``."""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pytest

from analysis import psis


def _idata(chains: int, draws: int, seed: int = 1) -> az.InferenceData:
    """Log-likelihoods of 40 observations: light and heavy tails (Pareto k from ~0 to above
    0.7), a constant one (no tail: k infinite), one with many tied values, plus an
    autocorrelated posterior (relative efficiency below 1)."""
    rng = np.random.default_rng(seed)
    obs = 40
    scale = np.linspace(0.05, 3.0, obs)
    ll = -0.5 * (rng.standard_t(df=3, size=(chains, draws, obs)) * scale) ** 2 - 1.0
    ll[:, :, 0] = -2.0
    ll[:, :, 1] = np.round(ll[:, :, 1], 1)
    walk = np.cumsum(rng.normal(size=(chains, draws, 3)), axis=1) * 0.1
    return az.from_dict(posterior={"a": walk, "b": rng.normal(size=(chains, draws))},
                        log_likelihood={"y": ll})


@pytest.mark.parametrize(("chains", "draws"), [(4, 500), (2, 203), (1, 300)])
def test_the_same_as_arviz(chains: int, draws: int) -> None:
    idata = _idata(chains, draws)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = az.loo(idata, pointwise=True)
    ours = psis.loo(idata)
    assert list(ours.index) == list(theirs.index)
    for key in ("elpd_loo", "se", "p_loo", "good_k"):
        assert ours[key] == pytest.approx(theirs[key], rel=1e-10), key
    for key in ("n_samples", "n_data_points", "warning", "scale"):
        assert ours[key] == theirs[key], key
    assert ours["warning"]  # heavy tails: some k above the threshold
    np.testing.assert_allclose(ours["loo_i"].values, theirs["loo_i"].values, rtol=1e-10)
    np.testing.assert_allclose(ours["pareto_k"].values, theirs["pareto_k"].values,
                               rtol=1e-9, atol=1e-12)
    assert np.isinf(ours["pareto_k"].values[0])  # constant: no tail to fit
    assert ours["loo_i"].dims == theirs["loo_i"].dims


def test_relative_efficiency_is_arvizs() -> None:
    idata = _idata(4, 400)
    ess = az.ess(idata.posterior, method="mean")
    expected = np.hstack([ess[v].values.ravel() for v in ess.data_vars]).mean() / 1600
    assert psis.relative_efficiency(idata.posterior) == pytest.approx(expected, rel=1e-10)
    assert psis.relative_efficiency(_idata(1, 50).posterior) == 1.0


def test_two_models_compare_as_with_arviz() -> None:
    a, b = _idata(4, 300, seed=2), _idata(4, 300, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = az.compare({"a": az.loo(a, pointwise=True), "b": az.loo(b, pointwise=True)})
        ours = az.compare({"a": psis.loo(a), "b": psis.loo(b)})
    np.testing.assert_allclose(ours[["elpd_loo", "elpd_diff", "dse", "weight"]].values,
                               theirs[["elpd_loo", "elpd_diff", "dse", "weight"]].values,
                               rtol=1e-9, atol=1e-12)


def test_blocks_give_the_same_as_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    idata = _idata(4, 200)
    whole = psis.loo(idata)
    monkeypatch.setattr(psis, "BLOCK", 7)
    parts = psis.loo(idata)
    np.testing.assert_array_equal(parts["loo_i"].values, whole["loo_i"].values)
    np.testing.assert_array_equal(parts["pareto_k"].values, whole["pareto_k"].values)
