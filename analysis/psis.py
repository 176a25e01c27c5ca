"""Pareto-smoothed importance-sampling LOO (PSIS-LOO) of every rating at once.

ArviZ's ``az.loo(idata, pointwise=True)`` (Vehtari, Gelman & Gabry 2017; Vehtari et al.
2024) with its numbers, computed in array operations over all N observations instead of one
observation at a time. With S posterior draws and log-likelihoods ll_is:

**Relative efficiency** r = mean over every scalar of the posterior of its ESS for the mean
(split chains, analysis.convergence.ess_split) / S; 1 with one chain.

**Smoothed weights** of observation i from the log importance ratios x_s = -ll_is (minus
their max): the M = ceil(min(S / 5, 3 sqrt(S / r))) largest ratios above the cutoff
c = max(x_(S - M), log(tiny)) (x_(j): the j-th smallest, 1-based) form the tail of length
L (fewer with ties at the cutoff). With L > 4 a generalized Pareto distribution is fitted
to exp(x_tail) - exp(c) (Zhang & Stephens' empirical Bayes estimate, m = 30 + floor(sqrt L)
grid points theta_j = 1 / a_L + (1 - sqrt(m / (j - 1/2))) / (3 a_q), a_q the
floor(L / 4 + 1/2)-th smallest; the profile log-likelihood l_j = L (log(-theta_j / k_j) -
k_j - 1), k_j = mean(log1p(-theta_j a)); weights w_j = 1 / sum_t exp(l_t - l_j), those below
10 eps dropped, renormalized; theta = sum w_j theta_j; k = mean(log1p(-theta a)),
sigma = -k / theta, then k shrunk to (L k + 5) / (L + 10)). A finite k replaces the tail, in
its order, by log(F^-1((t - 1/2) / L) + exp(c)), t = 1..L (F the fitted GPD), capped at 0;
k is the observation's Pareto k (infinite when L <= 4). The weights are normalized:
lw_s = x_s - logsumexp(x).

**LOO**: elpd_i = logsumexp_s(lw_s + ll_is); elpd = sum_i elpd_i, se = sqrt(N var(elpd_i));
lppd = sum_i (logsumexp_s ll_is - log S); p_loo = lppd - elpd; a warning when any
k > min(1 - 1 / log10 S, 0.7).
"""

from __future__ import annotations

import arviz as az
import numpy as np
import xarray as xr

from analysis.convergence import ess_split, parameter_draws, split_chains

PRIOR_BS, PRIOR_K = 3.0, 10.0  # the GPD fit's weakly informative prior (Zhang & Stephens)
BLOCK = 256  # observations smoothed together: bounds the memory of the work arrays


def logsumexp_rows(x: np.ndarray) -> np.ndarray:
    """log(sum_s exp(x_is)) of every row i, stabilized by the row's max."""
    top = x.max(axis=1, keepdims=True)
    return np.log(np.exp(x - top).sum(axis=1)) + top[:, 0]


def relative_efficiency(posterior: xr.Dataset) -> float:
    """r of the module docstring: the mean relative ESS over every scalar of ``posterior``."""
    chains, draws = posterior.sizes["chain"], posterior.sizes["draw"]
    if chains == 1:
        return 1.0
    ess = ess_split(split_chains(parameter_draws(posterior, posterior.data_vars)))
    return float(ess.mean() / (chains * draws))


def gpd_fit(tails: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(k, sigma) of a generalized Pareto fit to each row of (G, L) ``tails`` (each row
    sorted ascending, positive; the module docstring's estimate)."""
    n = tails.shape[1]
    m = 30 + int(n ** 0.5)
    grid = 1 - np.sqrt(m / (np.arange(1, m + 1, dtype=float) - 0.5))
    theta = grid[None, :] / (PRIOR_BS * tails[:, int(n / 4 + 0.5) - 1])[:, None]
    theta += 1 / tails[:, -1][:, None]
    k_grid = np.log1p(-theta[:, :, None] * tails[:, None, :]).mean(axis=2)
    profile = n * (np.log(-(theta / k_grid)) - k_grid - 1)
    with np.errstate(over="ignore"):  # an overflow is a weight of 0, as meant
        weights = 1 / np.exp(profile[:, None, :] - profile[:, :, None]).sum(axis=2)
    weights = np.where(weights >= 10 * np.finfo(float).eps, weights, 0.0)
    weights /= weights.sum(axis=1, keepdims=True)
    theta_post = (theta * weights).sum(axis=1)
    k = np.log1p(-theta_post[:, None] * tails).mean(axis=1)
    sigma = -k / theta_post
    return (n * k + PRIOR_K * 0.5) / (n + PRIOR_K), sigma


def gpd_quantiles(probs: np.ndarray, k: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """F^-1(probs) of the GPD (k_g, sigma_g) of each row g (probs in (0, 1)); NaN where
    sigma <= 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        tiny = np.abs(k) < np.finfo(float).eps
        safe_k = np.where(tiny, 1.0, k)[:, None]
        general = np.expm1(-safe_k * np.log1p(-probs)[None, :]) / safe_k
        x = np.where(tiny[:, None], -np.log1p(-probs)[None, :], general) * sigma[:, None]
    x[sigma <= 0] = np.nan
    return x


def smoothed_log_weights(log_ratios: np.ndarray, reff: float) -> tuple[np.ndarray, np.ndarray]:
    """(normalized smoothed log weights (N, S), Pareto k (N,)) of (N, S) ``log_ratios``
    (module docstring)."""
    x = np.array(log_ratios, dtype=float)
    x -= x.max(axis=1, keepdims=True)
    n, s = x.shape
    # Python's min, as ArviZ: a NaN efficiency leaves S / 5
    cutoff = -int(np.ceil(min(s / 5.0, 3 * (s / reff) ** 0.5))) - 1
    order = np.argsort(x, axis=1)
    ordered = np.take_along_axis(x, order, axis=1)
    x_cut = np.maximum(ordered[:, cutoff], np.log(np.finfo(float).tiny))
    lengths = (x > x_cut[:, None]).sum(axis=1)
    k = np.full(n, np.inf)
    for length in np.unique(lengths[lengths > 4]):
        rows = np.flatnonzero(lengths == length)
        exp_cut = np.exp(x_cut[rows])[:, None]
        tails = np.exp(ordered[rows, s - length:]) - exp_cut
        k_rows, sigma = gpd_fit(tails)
        k[rows] = k_rows
        fitted = np.isfinite(k_rows)
        rows, exp_cut = rows[fitted], exp_cut[fitted]
        probs = np.arange(0.5, length) / length
        with np.errstate(invalid="ignore"):
            smoothed = np.log(gpd_quantiles(probs, k_rows[fitted], sigma[fitted]) + exp_cut)
        x[rows[:, None], order[rows, s - length:]] = smoothed
    with np.errstate(invalid="ignore"):
        x[x > 0] = 0
    return x - logsumexp_rows(x)[:, None], k


def loo(idata: az.InferenceData) -> az.ELPDData:
    """``az.loo(idata, pointwise=True)``'s result (module docstring) for an InferenceData
    with one log-likelihood variable."""
    names = list(idata.log_likelihood.data_vars)
    if len(names) != 1:
        raise ValueError(f"PSIS-LOO needs one log-likelihood variable, found {names}")
    stacked = idata.log_likelihood[names[0]].stack(__sample__=("chain", "draw"))
    pointwise_dims = [d for d in stacked.dims if d != "__sample__"]
    ll = np.asarray(stacked.transpose(*pointwise_dims, "__sample__").values,
                    dtype=float).reshape(-1, stacked.sizes["__sample__"])
    n, s = ll.shape
    scale = az.rcParams["stats.ic_scale"]
    sign = {"deviance": -2, "log": 1, "negative_log": -1}[scale]
    reff = relative_efficiency(idata.posterior)
    elpd_i, k = np.empty(n), np.empty(n)
    for lo in range(0, n, BLOCK):
        part = ll[lo:lo + BLOCK]
        lw, k[lo:lo + BLOCK] = smoothed_log_weights(-part, reff)
        elpd_i[lo:lo + BLOCK] = sign * logsumexp_rows(lw + part)
    elpd = elpd_i.sum()
    lppd = (logsumexp_rows(ll) - np.log(s)).sum()
    good_k = min(1 - 1 / np.log10(s), 0.7)
    template = stacked.isel(__sample__=0, drop=True)
    shape = template.shape

    def pointwise(values: np.ndarray, name: str) -> xr.DataArray:
        return xr.DataArray(values.reshape(shape), dims=template.dims,
                            coords=template.coords, name=name)

    return az.ELPDData(
        data=[elpd, (n * np.var(elpd_i)) ** 0.5, lppd - elpd / sign, s, n,
              bool(np.any(k > good_k)), pointwise(elpd_i, "loo_i"),
              pointwise(k, "pareto_shape"), scale, good_k],
        index=["elpd_loo", "se", "p_loo", "n_samples", "n_data_points", "warning", "loo_i",
               "pareto_k", "scale", "good_k"])
