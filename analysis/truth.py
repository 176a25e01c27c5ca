"""Truth vs recovered: does the analysis of a simulated study find what its synthetic
participants were given?

A simulated study stores its participants' behaviour (engine.synthetic.rating_model). For
each outcome, the truth is the typical participant's mean rating of a plan at distance d
with no stated preference met or violated:

    E_true(d) = sum_k k P(k | eta = a + f(d); c_true)

(with ``curve_of: population`` the stated curve is the participants' mean rating and the
typical participant's eta is its location l(d) instead, engine.synthetic.rating_model).

The first fitted model of the same distance whose family reads its smooth on the rating
scale (``ModelFamily.expected_rating``; the ordinal families) recovers the same quantity for
the typical participant (u = b = 0) of the first arm with s = v = 0: the smooth f_hat(d)
(centred; the cutpoints absorb the level) read through the fitted cutpoints,

    E_hat(d) = sum_k k P(k | eta = f_hat(d); c_hat)

with the posterior mean smooth and its 95% band at the posterior mean cutpoints. The
verdict per outcome compares the change over the observed distances, E(d_min) - E(d_max):
a falling truth is *recovered* when the band at d_min lies wholly above the band at d_max;
a flat truth (no change beyond a tenth of a scale point) when the bands overlap. The
preference effects are compared on the latent scale: beta[satisfaction] against k and
beta[violation] against -nu, each with its 94% interval.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from analysis.model_data import OUTCOMES
from analysis.results import ModelResult
from engine.synthetic.rating_model import OutcomeModel, RatingBehaviour

FLAT = 0.1  # a change of the mean rating below this is "flat"


def recovered(models: list[ModelResult], outcome: str, distance: str
              ) -> tuple[ModelResult, list[np.ndarray]] | None:
    """The first of ``models`` of ``outcome`` and ``distance`` whose family reads its smooth
    on the rating scale, with E_hat at the smooth's mean, lower and upper band."""
    for m in models:
        if m.outcome != outcome or m.distance != distance:
            continue
        curves = [m.family.expected_rating(m, m.smooth[k].to_numpy(dtype=float))
                  for k in ("mean", "lo", "hi")]
        if curves[0] is not None:
            return m, curves  # type: ignore[return-value]
    return None


def compare(models: list[ModelResult], truth: RatingBehaviour) -> dict[str, Any]:
    """Per outcome: the curves on the model's grid and the verdicts (module docstring)."""
    out: dict[str, Any] = {"distance": truth.distance, "outcomes": []}
    for outcome in OUTCOMES:
        found = recovered(models, outcome, truth.distance)
        if found is None:
            continue
        m, (mean, lo, hi) = found
        true_model: OutcomeModel = getattr(truth, outcome)
        grid = m.smooth["d"].to_numpy(dtype=float)
        true_curve = true_model.typical_curve(grid)
        true_change = float(true_curve[0] - true_curve[-1])
        if true_change > FLAT:
            shape, ok = "falls", bool(lo[0] > hi[-1])
        elif true_change < -FLAT:
            shape, ok = "rises", bool(hi[0] < lo[-1])
        else:
            shape, ok = "flat", bool(lo[0] <= hi[-1] and lo[-1] <= hi[0])
        effects = []
        for term, value in (("satisfaction", true_model.satisfaction),
                            ("violation", -true_model.violation)):
            c = next((c for c in m.coefficients if c.group == "effect" and c.name == term), None)
            if c is not None:
                effects.append({"term": term, "truth": value, "mean": c.mean, "lo": c.lo,
                                "hi": c.hi, "covered": bool(c.lo <= value <= c.hi)})
        out["outcomes"].append({
            "outcome": outcome, "model": m.spec.name, "truth_shape": shape,
            "recovered": ok, "true_change": true_change,
            "recovered_change": float(mean[0] - mean[-1]),
            "curve": [{"d": float(d), "truth": float(t), "mean": float(a), "lo": float(b),
                       "hi": float(c)} for d, t, a, b, c in zip(grid, true_curve, mean, lo, hi,
                                                                strict=True)],
            "effects": effects,
        })
    return out
