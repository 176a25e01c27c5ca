"""A pilot's posterior as synthetic participants: the truth of power from a real pilot.

``fit_pilot`` fits each outcome's ordinal model (analysis.models, ``fit_one`` as ``analyze``
does) to the pilot; each posterior draw becomes the synthetic participants' rating model
(engine.synthetic.rating_model), with the same cutpoints c on both sides:

    synthetic:  eta = a + g(d) + k s - nu v + u_p + b_p d,    g(d) = -drop (1 - exp(-d / scale))
    analysis:   eta = f(d) + beta_s s + beta_v v + gamma_arm + u_p' + b_p (d - dbar)

- **curve** a, drop, scale: h(d) = f(d) + sum_arm w_arm gamma_arm (w: the arms' shares of
  the ratings; synthetic participants have no arm term) projected on the synthetic family
  by least squares at 60 quantiles of the pilot's distances: min sum_q (h(d_q) - a + drop
  (1 - exp(-d_q / scale)))^2, linear in (a, drop) for fixed scale; the scale is profiled
  over 80 log-spaced values (1/200 of the range to 50 times the largest distance), then 41
  within one step of the best. ``rms``: each draw's root mean square residual.
- **preferences** k = beta_s, nu = -beta_v (0 without the term).
- **participant spread** sd_slope = sigma_b, sd_intercept = sqrt(max(0, sigma_u^2 -
  sigma_b^2 dbar^2)): the model's intercepts act at the mean distance dbar, where synthetic
  participants spread by sqrt(sd_intercept^2 + sd_slope^2 dbar^2).

``PilotPosterior`` holds them per draw and outcome: ``overrides`` gives one draw as a
protocol's ``simulation.ratings`` block, ``draw_for`` the draw simulated study s uses (a
seeded permutation: every study its own draw while draws are left), ``quantities`` their
summary (which posterior quantities drove the simulation).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analysis.families import FAMILIES
from analysis.folder import code_hashes, fingerprint
from analysis.models import OUTCOMES, ModelData, prepare, smooth_draws
from analysis.results import ModelSpec, fit_one

QUANTILES = 60  # distances the smooth is projected at
SCALES = 80  # candidate scales of the profile least squares
# The synthetic rating model's parameters a draw sets, each with the model quantity it comes from.
SOURCES: dict[str, str] = {
    "intercept": "smooth f(d) + arm effects gamma, projected: level at d = 0",
    "drop": "smooth f(d) + arm effects gamma, projected: fall from d = 0 to far away",
    "scale": "smooth f(d) + arm effects gamma, projected: distance scale of the fall",
    "satisfaction": "beta[satisfaction]",
    "violation": "-beta[violation]",
    "sd_intercept": "sqrt(max(0, sigma_u^2 - sigma_b^2 dbar^2))",
    "sd_slope": "sigma_b",
    "cutpoints": "cutpoints",
}
_SCALARS = ("intercept", "drop", "scale", "satisfaction", "violation", "sd_intercept",
            "sd_slope")


def project_curve(h: np.ndarray, d: np.ndarray) -> dict[str, np.ndarray]:
    """Least-squares (a, drop, scale) of a - drop (1 - exp(-d / scale)) to each row of
    ``h`` (draws, len(d)) at the distances ``d`` (module docstring), with the rms residual.

    >>> import numpy as np
    >>> from analysis.pilot import project_curve
    >>> d = np.linspace(0.0, 1.0, 40)
    >>> h = np.stack([0.5 - 1.2 * (1 - np.exp(-d / 0.2)), np.full(40, -0.3)])
    >>> p = project_curve(h, d)
    >>> np.round(p["intercept"], 2).tolist(), np.round(p["drop"], 2).tolist()
    ([0.5, -0.3], [1.2, 0.0])
    >>> round(float(p["scale"][0]), 2), bool(p["rms"].max() < 0.01)
    (0.2, True)
    """
    d = np.asarray(d, dtype=float)
    span = max(float(d.max() - d.min()), 1e-9)
    coarse = np.geomspace(span / 200.0, 50.0 * max(float(d.max()), span), SCALES)
    step = coarse[1] / coarse[0]
    out = _best_scale(h, d, np.broadcast_to(coarse, (len(h), SCALES)))
    fine = out["scale"][:, None] * step ** np.linspace(-1.0, 1.0, 41)[None, :]
    return _best_scale(h, d, fine)


def _best_scale(h: np.ndarray, d: np.ndarray, scales: np.ndarray) -> dict[str, np.ndarray]:
    """Per draw (row of ``h``), the candidate scale of its row of ``scales`` with the least
    squared residual; for a fixed scale, a - drop g(d) with g = 1 - exp(-d / scale) is a
    straight line in g: drop = -cov(g, h) / var(g), a = mean(h) + drop mean(g)."""
    best = np.full(len(h), np.inf)
    out = {k: np.zeros(len(h)) for k in ("intercept", "drop", "scale")}
    for j in range(scales.shape[1]):
        s = scales[:, j][:, None]
        g = 1.0 - np.exp(-d[None, :] / s)  # (draws, distances)
        gc = g - g.mean(axis=1, keepdims=True)
        slope = (gc * h).sum(axis=1) / np.maximum((gc ** 2).sum(axis=1), 1e-300)
        a = h.mean(axis=1) - slope * g.mean(axis=1)
        sse = ((a[:, None] + slope[:, None] * g - h) ** 2).sum(axis=1)
        better = sse < best - 1e-12
        best = np.where(better, sse, best)
        out["intercept"] = np.where(better, a, out["intercept"])
        out["drop"] = np.where(better, -slope, out["drop"])
        out["scale"] = np.where(better, s[:, 0], out["scale"])
    out["rms"] = np.sqrt(best / len(d))
    return out


def _flat(da: Any) -> np.ndarray:
    """Draws of a posterior variable with chain and draw stacked first: (draws, ...)."""
    values = np.asarray(da.values, dtype=float)
    return values.reshape(-1, *values.shape[2:])


def outcome_draws(data: ModelData, posterior: Any) -> dict[str, Any]:
    """The synthetic model's parameters per draw of one outcome's fit (module docstring):
    {parameter: (draws,) array, cutpoints: (draws, 6), rms: (draws,)}."""
    d_q = np.quantile(data.d, (np.arange(QUANTILES) + 0.5) / QUANTILES)
    h = smooth_draws(data, _flat(posterior["delta_f"]), d_q)
    if "gamma" in posterior:
        share = np.bincount(data.arm, minlength=len(data.arms)) / data.n
        h = h + (_flat(posterior["gamma"]) @ share)[:, None]
    out = project_curve(h, d_q)
    terms = list(posterior["beta"].coords["term"].values) if "beta" in posterior else []
    beta = _flat(posterior["beta"]) if terms else np.zeros((len(h), 0))
    zero = np.zeros(len(h))
    out["satisfaction"] = beta[:, terms.index("satisfaction")] if "satisfaction" in terms else zero
    out["violation"] = -beta[:, terms.index("violation")] if "violation" in terms else zero
    sigma_u, sigma_b = _flat(posterior["sigma_u"]), _flat(posterior["sigma_b"])
    out["sd_intercept"] = np.sqrt(np.maximum(sigma_u ** 2 - (sigma_b * data.d_centre) ** 2, 0.0))
    out["sd_slope"] = sigma_b
    out["cutpoints"] = _flat(posterior["cutpoints"])
    return out


@dataclass
class PilotPosterior:
    """Per outcome, the synthetic model's parameters of every posterior draw of the pilot
    (module docstring); ``fingerprint`` names the pilot data, model, sampler and code."""

    distance: str
    draws: dict[str, dict[str, np.ndarray]]
    fingerprint: str
    diagnostics: dict[str, dict[str, Any]]

    @property
    def size(self) -> int:
        return int(len(next(iter(self.draws.values()))["intercept"]))

    def draw_for(self, sim: int, seed: int) -> int:
        """The draw simulated study ``sim`` uses: the ``sim``-th of a permutation of the
        draws seeded by ``seed`` (cycling when there are more studies than draws)."""
        order = np.random.default_rng([seed, 0x5EED]).permutation(self.size)
        return int(order[sim % self.size])

    def overrides(self, index: int) -> dict[str, Any]:
        """Draw ``index`` as a protocol's ``simulation.ratings`` block: the typical
        participant's curve on the latent scale, on the pilot's distance."""
        block: dict[str, Any] = {"distance": self.distance}
        for outcome, p in self.draws.items():
            block[outcome] = {**{k: float(p[k][index]) for k in _SCALARS},
                              "cutpoints": [float(c) for c in p["cutpoints"][index]],
                              "curve_of": "typical"}
        return block

    def quantities(self, indices: list[int] | None = None) -> dict[str, Any]:
        """Mean, sd and central 95% interval of each parameter over the draws ``indices``
        (default: all), with the model quantity it comes from and the projection's rms."""
        idx = np.arange(self.size) if indices is None else np.asarray(indices, dtype=int)
        out: dict[str, Any] = {}
        for outcome, p in self.draws.items():
            rows = {}
            for k in (*_SCALARS, "cutpoints"):
                v = p[k][idx]
                lo, hi = np.quantile(v, [0.025, 0.975], axis=0)
                rows[k] = {"source": SOURCES[k], "mean": _num(v.mean(axis=0)),
                           "sd": _num(v.std(axis=0)), "lo": _num(lo), "hi": _num(hi)}
            rows["projection_rms"] = {"mean": _num(p["rms"][idx].mean()),
                                      "max": _num(p["rms"][idx].max())}
            out[outcome] = rows
        return out

    def to_json(self) -> dict[str, Any]:
        return {"distance": self.distance, "fingerprint": self.fingerprint,
                "diagnostics": self.diagnostics,
                "draws": {o: {k: np.asarray(v).tolist() for k, v in p.items()}
                          for o, p in self.draws.items()}}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> PilotPosterior:
        return cls(doc["distance"], {o: {k: np.asarray(v, dtype=float) for k, v in p.items()}
                                     for o, p in doc["draws"].items()},
                   doc["fingerprint"], doc["diagnostics"])


def _num(v: Any) -> Any:
    a = np.asarray(v, dtype=float)
    return [round(float(x), 4) for x in a] if a.ndim else round(float(a), 4)


def pilot_inputs(ratings: pd.DataFrame, distance: str) -> dict[str, ModelData]:
    """Each outcome's model data (analysis.models.AnalysisDataError when they cannot be
    analysed: too few ratings, a missing column)."""
    return {o: prepare(ratings, o, distance) for o in OUTCOMES}


def pilot_fingerprint(inputs: dict[str, ModelData], sampler: dict[str, Any]) -> str:
    """SHA-256 of each outcome's model fingerprint (analysis.folder) and this module."""
    parts = {o: fingerprint(ModelSpec(o, data.distance, FAMILIES.main.name), data, sampler)
             for o, data in inputs.items()}
    doc = {"models": parts, "code": code_hashes(("pilot.py",))}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def fit_pilot(inputs: dict[str, ModelData], sampler: dict[str, Any],
              on_log: Callable[[str], None] | None = None) -> PilotPosterior:
    """Fit each outcome's ordinal model to the pilot's model data (``pilot_inputs``) and
    convert its draws (module docstring). ``sampler``: analysis.pipeline.sampler_settings."""
    say = on_log or (lambda _m: None)
    distance = next(iter(inputs.values())).distance
    draws, diagnostics = {}, {}
    for outcome, data in inputs.items():
        spec = ModelSpec(outcome, distance, FAMILIES.main.name)
        say(f"fitting the pilot's {spec.label}")
        result, idata = fit_one(spec, data, sampler)
        draws[outcome] = outcome_draws(data, idata.posterior)
        diagnostics[outcome] = {"max_rhat": result.diagnostics.max_rhat,
                                "min_ess_bulk": result.diagnostics.min_ess_bulk,
                                "divergences": result.diagnostics.divergences,
                                "n_ratings": data.n, "participants": len(data.participants),
                                "seconds": round(result.seconds, 1)}
    return PilotPosterior(distance, draws, pilot_fingerprint(inputs, sampler), diagnostics)
