"""Rank-normalized split R-hat and bulk / tail ESS of every parameter at once.

ArviZ's ``az.rhat`` (method "rank") and ``az.ess`` ("bulk", "tail"; Vehtari et al. 2021)
for all P parameters at once in array operations. ``draws`` is (P, C, N). **Split chains**:
each chain's first and last floor(N / 2) draws become two (M = 2C chains of n draws).

**Rank normalization**: with r the average rank of a draw among all S = M n draws of its
parameter, z = Phi^-1((r - 3/8) / (S + 1/4)) (Blom's offset).

**R-hat** of split chains x_mj (chain m, draw j):

    B = n var_m(mean_j x_mj),  W = mean_m var_j(x_mj)   (variances with ddof 1)
    R = sqrt((B / W + n - 1) / n)

computed on the rank-normalized draws (bulk) and on the rank-normalized |x - median(x)|
(tail); the reported R-hat is the larger. It needs at least 2 chains of 4 draws (else NaN).

**ESS** of split chains x_mj: the autocovariance acov_m(t) of every chain (by FFT, divided
by n), W' = mean_m acov_m(0) n / (n - 1), var+ = W' (n - 1) / n + var_m(mean_j x_mj), the
autocorrelation rho(t) = 1 - (W' - mean_m acov_m(t)) / var+ (rho(0) = 1). Geyer's initial
positive sequence keeps the pairs (rho(t+1), rho(t+2)), t = 1, 3, ..., while the previous
pair's sum is positive (a pair with a negative sum is dropped and ends it); the initial
monotone sequence then lowers each pair's sum to the one before it where it is larger.
tau = -1 + 2 sum_{t <= t_max} rho(t) + rho(t_max + 1), at least 1 / log10(S), and
ESS = S / tau (S when the draws are constant, NaN when any is NaN).

- bulk ESS: ESS of the rank-normalized split chains;
- tail ESS: the smaller ESS of the indicators x <= q_0.05 and x <= q_0.95 (the quantiles
  over all draws, R's type 7) on the split chains.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from scipy.fft import next_fast_len
from scipy.special import ndtri

BLOCK = 256  # parameters per block: bounds the memory of the FFT and rank arrays


def parameter_draws(posterior: Any, names: Iterable[str]) -> np.ndarray:
    """(P, C, N) draws of every scalar of the variables ``names`` of an ArviZ ``posterior``
    group (chain and draw dimensions first; the variables' other dimensions flattened)."""
    chains, draws = posterior.sizes["chain"], posterior.sizes["draw"]
    values = np.concatenate([np.asarray(posterior[v].transpose("chain", "draw", ...).values,
                                        dtype=float).reshape(chains, draws, -1)
                             for v in names], axis=2)
    return values.transpose(2, 0, 1)


def split_chains(draws: np.ndarray) -> np.ndarray:
    """(P, C, N) -> (P, 2C, N // 2): the first and the last half of every chain."""
    half = draws.shape[2] // 2
    return np.concatenate([draws[:, :, :half], draws[:, :, draws.shape[2] - half:]], axis=1)


def average_ranks(flat: np.ndarray) -> np.ndarray:
    """The average rank (1-based; tied values share the mean of their ranks) of every value
    of each row of (P, S) ``flat``: SciPy's ``rankdata(method="average", axis=1)`` for rows
    without NaN, from one sort per row (a tie run at sorted positions i..j gets
    (i + j) / 2 + 1)."""
    p, s = flat.shape
    order = np.argsort(flat, axis=1)
    ordered = np.take_along_axis(flat, order, axis=1)
    starts = np.ones((p, s), dtype=bool)
    np.not_equal(ordered[:, 1:], ordered[:, :-1], out=starts[:, 1:])
    ends = np.ones((p, s), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    position = np.broadcast_to(np.arange(s), (p, s))
    first = np.maximum.accumulate(np.where(starts, position, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, position, s - 1)[:, ::-1], axis=1)[:, ::-1]
    ranks = np.empty((p, s))
    np.put_along_axis(ranks, order, (first + last) / 2.0 + 1.0, axis=1)
    return ranks


def rank_normalize(draws: np.ndarray) -> np.ndarray:
    """Blom's normal scores of each parameter's average ranks (module docstring; a
    parameter with a NaN draw gets meaningless scores: ``convergence`` reports it NaN)."""
    p = draws.shape[0]
    flat = draws.reshape(p, -1)
    ranks = average_ranks(flat)
    return ndtri((ranks - 0.375) / (flat.shape[1] + 0.25)).reshape(draws.shape)


def _rhat_basic(x: np.ndarray) -> np.ndarray:
    n = x.shape[2]
    between = n * x.mean(axis=2).var(axis=1, ddof=1)
    within = x.var(axis=2, ddof=1).mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt((between / within + n - 1) / n)


def convergence(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(R-hat, bulk ESS, tail ESS) of each parameter of (P, C, N) ``draws`` (module
    docstring; R-hat NaN with fewer than 2 chains, everything NaN with fewer than 4 draws or
    a NaN draw)."""
    p, c, n = draws.shape
    rhats, bulks, tails = np.full(p, np.nan), np.full(p, np.nan), np.full(p, np.nan)
    if n < 4:
        return rhats, bulks, tails
    for lo in range(0, p, BLOCK):
        block = np.asarray(draws[lo:lo + BLOCK], dtype=float)
        bad = np.isnan(block).any(axis=(1, 2))
        split = split_chains(block)
        z = rank_normalize(split)
        bulk = ess_split(z)
        bulk[bad] = np.nan
        bulks[lo:lo + BLOCK] = bulk
        if c >= 2:
            median = np.median(split.reshape(len(split), -1), axis=1)[:, None, None]
            r = np.maximum(_rhat_basic(z), _rhat_basic(rank_normalize(np.abs(split - median))))
            r[bad] = np.nan
            rhats[lo:lo + BLOCK] = r
        q05, q95 = np.quantile(block.reshape(len(block), -1), [0.05, 0.95], axis=1)
        tail = np.minimum(ess_split(split_chains((block <= q05[:, None, None]).astype(float))),
                          ess_split(split_chains((block <= q95[:, None, None]).astype(float))))
        tail[bad] = np.nan
        tails[lo:lo + BLOCK] = tail
    return rhats, bulks, tails


def _autocov(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    m = next_fast_len(2 * n)
    centred = x - x.mean(axis=-1, keepdims=True)
    f = np.fft.rfft(centred, n=m, axis=-1)
    return np.fft.irfft(f * np.conjugate(f), n=m, axis=-1)[..., :n] / n


def ess_split(x: np.ndarray) -> np.ndarray:
    """ESS of each parameter of (P, M, n) split chains ``x`` (module docstring)."""
    x = np.asarray(x, dtype=float)
    p, m, n = x.shape
    out = np.full(p, np.nan)
    finite = ~np.isnan(x).any(axis=(1, 2))
    flat = x.reshape(p, -1)
    constant = finite & ((flat.max(axis=1) - flat.min(axis=1)) < np.finfo(float).resolution)
    out[constant] = m * n
    todo = finite & ~constant
    if not todo.any():
        return out
    x = x[todo]
    acov = _autocov(x)
    mean_var = acov[:, :, 0].mean(axis=1) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if m > 1:
        var_plus = var_plus + x.mean(axis=2).var(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = 1.0 - (mean_var[:, None] - acov.mean(axis=1)) / var_plus[:, None]
    q = len(x)
    kept = np.zeros((q, n))
    kept[:, 0], kept[:, 1] = 1.0, rho[:, 1]
    even, odd = np.ones(q), rho[:, 1].copy()
    active = even + odd > 0
    t_end = np.ones(q, dtype=int)
    t = 1
    while t < n - 3 and active.any():  # Geyer's initial positive sequence
        e, o = rho[:, t + 1], rho[:, t + 2]
        even, odd = np.where(active, e, even), np.where(active, o, odd)
        keep = active & (e + o >= 0)
        kept[keep, t + 1], kept[keep, t + 2] = e[keep], o[keep]
        t += 2
        t_end[active] = t
        active &= even + odd > 0
    max_t = t_end - 2
    rows = np.arange(q)
    improve = even > 0
    kept[rows[improve], max_t[improve] + 1] = even[improve]
    t = 1
    while t <= max_t.max() - 2:  # Geyer's initial monotone sequence
        lower = (t <= max_t - 2) & (kept[:, t + 1] + kept[:, t + 2] > kept[:, t - 1] + kept[:, t])
        mean_pair = (kept[lower, t - 1] + kept[lower, t]) / 2.0
        kept[lower, t + 1], kept[lower, t + 2] = mean_pair, mean_pair
        t += 2
    lags = np.arange(n)[None, :]
    total = m * n
    tau = (-1.0 + 2.0 * np.where(lags <= max_t[:, None], kept, 0.0).sum(axis=1)
           + np.where(lags == max_t[:, None] + 1, kept, 0.0).sum(axis=1))
    tau = np.maximum(tau, 1.0 / np.log10(total))
    ess = total / tau
    ess[np.isnan(kept).any(axis=1)] = np.nan
    out[todo] = ess
    return out
