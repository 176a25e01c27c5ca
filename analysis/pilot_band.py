"""How far power from a pilot may lie from power from the truth: the posterior's spread.

Power from a pilot (study_app.power_pilot) is a mixture: with g(theta) the power at N of a
study whose participants rate as theta says, it is

    P_pilot(N) = E_theta~posterior [g(theta)],

estimated by one simulated study per posterior draw, while power from the truth is
g(theta*) at the one true theta*. The two differ by more than Monte Carlo error whenever g
varies over the posterior; this module follows g along the quantity the distance effect is
about, the curve's **fall over the observed distances** [lo, hi],

    F = f(lo) - f(hi) = drop (exp(-lo / scale) - exp(-hi / scale))

for the synthetic curve f(d) = -drop (1 - exp(-d / scale)) (engine.synthetic). The
posterior's terciles of F cut it into three strata of equal posterior mass; stratum k's
midpoint quantile q_k (1/6, 1/2, 5/6) is where the **band** runs simulate the truth with
only the fall changed (``drop_for_fall`` at the truth's scale), giving g_k. Then

- each stratum's detection rate r_k among the pilot's simulated studies whose draw falls
  in it estimates E[g | stratum k], comparable with g_k (the same fall, the rest of theta
  drawn in one and true in the other);
- P_pilot = (r_1 + r_2 + r_3) / 3 when the strata hold equal counts, and the three-point
  quantile rule (g_1 + g_2 + g_3) / 3 approximates E[g(F)] over the posterior of F
  (the midpoint rule on u = F_posterior(F));
- g(F*) at the truth's fall lies within the range of g over the posterior's strata when
  F* does. Differences of two rates: ``rate_difference``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats

from analysis.power import LEVEL, clopper_pearson

TERCILE_MIDPOINTS = (1 / 6, 1 / 2, 5 / 6)


def curve_fall(drop: Any, scale: Any, lo: float, hi: float) -> np.ndarray:
    """F = drop (exp(-lo / scale) - exp(-hi / scale)), elementwise (module docstring).

    >>> from analysis.pilot_band import curve_fall
    >>> round(float(curve_fall(1.0, 1.0, 0.0, 50.0)), 6)
    1.0
    >>> round(float(curve_fall(-2.0, 2.0, 0.0, 2.0)), 4)
    -1.2642
    """
    drop, scale = np.asarray(drop, dtype=float), np.asarray(scale, dtype=float)
    return drop * (np.exp(-lo / scale) - np.exp(-hi / scale))


def drop_for_fall(fall: float, scale: float, lo: float, hi: float) -> float:
    """The drop whose curve at ``scale`` falls by ``fall`` over [lo, hi] (inverse of
    ``curve_fall`` in drop)."""
    if not 0 <= lo < hi:
        raise ValueError(f"need 0 <= lo < hi, got lo={lo}, hi={hi}")
    return float(fall / (math.exp(-lo / scale) - math.exp(-hi / scale)))


def posterior_falls(drop: np.ndarray, scale: np.ndarray, lo: float, hi: float,
                    quantiles: Sequence[float] = TERCILE_MIDPOINTS) -> dict[str, Any]:
    """The posterior of F over the draws: its quantiles, the tercile edges and the share
    of draws at least as steep as any given fall (``steeper``)."""
    falls = curve_fall(drop, scale, lo, hi)
    return {"lo": lo, "hi": hi, "median": float(np.median(falls)),
            "interval_95": [float(v) for v in np.quantile(falls, [0.025, 0.975])],
            "quantiles": {f"{q:.4f}": float(np.quantile(falls, q)) for q in quantiles},
            "tercile_edges": [float(v) for v in np.quantile(falls, [1 / 3, 2 / 3])],
            "falls": falls}


def stratum_of(fall: float, edges: Sequence[float]) -> int:
    """0, 1 or 2: the posterior tercile (``edges``: its two inner edges) ``fall`` is in."""
    return int(np.searchsorted(np.asarray(edges), fall, side="right"))


def rate_cell(detected: int, sims: int) -> dict[str, Any]:
    """A detection rate with its Clopper-Pearson 95% interval."""
    lo, hi = clopper_pearson(detected, sims)
    return {"detected": detected, "sims": sims,
            "rate": detected / sims if sims else None, "lo": lo, "hi": hi}


def wilson(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Wilson's score interval for k successes in n trials.

    >>> from analysis.pilot_band import wilson
    >>> [round(v, 4) for v in wilson(0, 10)]
    [0.0, 0.2775]
    """
    z = float(stats.norm.ppf(0.5 + level / 2))
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def rate_difference(k1: int, n1: int, k2: int, n2: int,
                    level: float = LEVEL) -> tuple[float, float, float]:
    """p1 - p2 with Newcombe's hybrid score interval (his method 10):
    [d - sqrt((p1 - l1)^2 + (u2 - p2)^2), d + sqrt((u1 - p1)^2 + (p2 - l2)^2)], (l, u)
    each rate's Wilson interval; unlike the normal approximation it keeps its coverage at
    counts near 0 or n.

    >>> from analysis.pilot_band import rate_difference
    >>> [round(v, 4) for v in rate_difference(56, 70, 48, 80)]
    [0.2, 0.0524, 0.3339]
    """
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1, level)
    l2, u2 = wilson(k2, n2, level)
    d = p1 - p2
    return (d, d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
            d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


def compare(truth: tuple[int, int], pilot: Sequence[tuple[float, bool]],
            band: Sequence[tuple[float, int, int]], edges: Sequence[float],
            truth_fall: float) -> dict[str, Any]:
    """The comparison at one N (module docstring). ``truth``: (detected, sims) from the
    truth; ``pilot``: (F of the study's draw, detected) per simulated study of the pilot;
    ``band``: (F_k, detected, sims) of the band runs at the tercile midpoints, in order;
    ``edges``: the posterior's tercile edges of F."""
    if len(band) != 3:
        raise ValueError(f"need the three tercile midpoints' runs, got {len(band)}")
    strata = []
    for k, (fall_k, det_k, sims_k) in enumerate(band):
        hits = [d for f, d in pilot if stratum_of(f, edges) == k]
        r = rate_cell(sum(hits), len(hits))
        diff = rate_difference(r["detected"], r["sims"], det_k, sims_k) if hits else None
        strata.append({"stratum": k, "fall": fall_k, "pilot": r,
                       "band": rate_cell(det_k, sims_k),
                       "difference": None if diff is None else list(diff)})
    n_pilot = len(pilot)
    k_pilot = sum(d for _f, d in pilot)
    g = [det / sims for _f, det, sims in band]
    # The three-point rule's Monte Carlo interval: each g_k a Wilson interval's half-width,
    # combined as independent errors (the runs share no studies).
    half = [(u - lo) / 2 for lo, u in (wilson(det, sims) for _f, det, sims in band)]
    mixture = sum(g) / 3
    mixture_half = math.sqrt(sum(h * h for h in half)) / 3
    p_pilot = k_pilot / n_pilot
    pl, pu = wilson(k_pilot, n_pilot)
    pilot_half = (pu - pl) / 2
    gap = p_pilot - mixture
    gap_half = math.sqrt(pilot_half ** 2 + mixture_half ** 2)
    return {
        "truth": {**rate_cell(*truth), "fall": truth_fall,
                  "stratum": stratum_of(truth_fall, edges)},
        "pilot": rate_cell(k_pilot, n_pilot),
        "strata": strata,
        "band_range": [min(g), max(g)],
        "mixture": {"three_point": mixture, "pilot_minus_three_point":
                    [gap, gap - gap_half, gap + gap_half]},
        "pilot_minus_truth": list(rate_difference(k_pilot, n_pilot, *truth)),
    }
