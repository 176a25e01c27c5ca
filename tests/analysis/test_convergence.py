"""analysis.convergence computes ArviZ's rank-normalized R-hat and bulk / tail ESS for all
parameters at once: the same numbers, parameter by parameter."""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest
import xarray as xr
from scipy.stats import rankdata

from analysis.convergence import average_ranks, convergence


def _ar1(params: int, chains: int, draws: int, seed: int = 3) -> np.ndarray:
    """(P, C, N) AR(1) chains with autocorrelations from -0.3 to 0.99 (short and long
    Geyer sequences), some chains shifted apart, one constant parameter, tied values."""
    rng = np.random.default_rng(seed)
    phi = np.linspace(-0.3, 0.99, params)
    x = np.zeros((params, chains, draws))
    noise = rng.normal(size=x.shape)
    for t in range(1, draws):
        x[:, :, t] = phi[:, None] * x[:, :, t - 1] + noise[:, :, t]
    x[:4] += np.arange(chains)[None, :, None] * 0.5  # chains that disagree: R-hat > 1.01
    x[4] = 1.0
    x[5] = np.round(x[5])
    return x


def _arviz(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ds = xr.Dataset({"v": (("chain", "draw", "p"), x.transpose(1, 2, 0))})
    with np.errstate(all="ignore"):
        return (az.rhat(ds)["v"].values, az.ess(ds, method="bulk")["v"].values,
                az.ess(ds, method="tail")["v"].values)


@pytest.mark.parametrize(("chains", "draws"), [(4, 400), (3, 251), (1, 300)])
def test_the_same_as_arviz_for_every_parameter(chains: int, draws: int) -> None:
    x = _ar1(24, chains, draws)
    x[6, 0, 3] = np.nan  # a NaN draw: NaN diagnostics for that parameter only
    ours = convergence(x)
    for name, theirs, mine in zip(("rhat", "bulk", "tail"), _arviz(x), ours, strict=True):
        assert np.allclose(mine, theirs, rtol=1e-9, equal_nan=True), name
    rhat, bulk, _ = ours
    if chains > 1:
        assert (rhat[:4] > 1.01).all() and np.isnan(rhat[6])
    else:
        assert np.isnan(rhat).all()
    assert bulk[4] == chains * (draws // 2) * 2  # constant: every draw counts


def test_blocks_give_the_same_as_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    from analysis import convergence as module

    x = _ar1(30, 4, 200, seed=5)
    whole = convergence(x)
    monkeypatch.setattr(module, "BLOCK", 7)
    for a, b in zip(whole, convergence(x), strict=True):
        assert np.allclose(a, b, rtol=1e-12, equal_nan=True)


def test_average_ranks_are_scipys_with_ties() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(6, 500))
    x[1, ::3] = x[1, 1]  # a long tie run
    x[2] = np.round(x[2] * 2)  # many short ones
    x[3] = 7.0  # all tied
    x[4, -2:] = x[4, 0]  # a tie with the first and the last values
    assert np.array_equal(average_ranks(x), rankdata(x, method="average", axis=1))
