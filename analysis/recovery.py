"""Parameter recovery: simulate studies with known effects, fit, check the intervals.

For each of ``studies`` simulated studies (analysis.simdata, reference behaviour of
engine.synthetic.rating_model unless given) both ordinal models (smooth of L1 over the profile) are
fitted and we record, per parameter, whether the central 90% interval covers the truth:

- beta[satisfaction] = k and beta[violation] = -nu of each outcome;
- variance components with a non-zero truth: sigma_u = sqrt(sd_u^2 + sd_b^2 mean(d)^2) (the
  model's intercepts sit at the mean distance, analysis.models) and sigma_b = sd_b;
- shape: a flat truth (drop = 0) should give a smooth whose 95% band contains 0 everywhere;
  a decreasing-then-flat truth should give f(0) - f(d_knee) > 0 with 95% probability, where
  d_knee = 3 x the curve's scale (95% of the drop), and a 95% interval of
  f(d_knee) - f(d_max) that contains 0 (flat afterwards).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from analysis.fit import SamplingWarning, sample
from analysis.models import build_model, prepare, smooth_draws
from analysis.simdata import simulate_ratings
from engine.synthetic.rating_model import OutcomeModel, RatingBehaviour

LEVEL = 0.90


@dataclass(frozen=True)
class RecoveryConfig:
    studies: int = 20
    participants: int = 362
    plans: int = 5
    draws: int = 1000
    tune: int | None = None
    chains: int = 4
    backend: str = "nutpie"
    seed: int = 0


def truths(model: OutcomeModel, d: np.ndarray) -> dict[str, float]:
    out = {"satisfaction": model.satisfaction, "violation": -model.violation,
           "sigma_u": float(np.sqrt(model.sd_intercept**2 + model.sd_slope**2 * d.mean() ** 2))}
    if model.sd_slope > 0:
        out["sigma_b"] = model.sd_slope
    return out


def _interval(v: np.ndarray, level: float) -> tuple[float, float]:
    lo, hi = np.quantile(v, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(lo), float(hi)


def check_study(
    behaviour: RatingBehaviour, config: RecoveryConfig, seed: int
) -> list[dict[str, Any]]:
    """One simulated study: a row per (outcome, check) with ``covered`` / ``passed``."""
    ratings = simulate_ratings(config.participants, config.plans, behaviour=behaviour,
                               seed=seed)
    rows: list[dict[str, Any]] = []
    for outcome in ("acceptance", "action"):
        truth_model: OutcomeModel = getattr(behaviour, outcome)
        data = prepare(ratings, outcome, behaviour.distance)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SamplingWarning)
            fit = sample(build_model(data), backend=config.backend,  # type: ignore[arg-type]
                         draws=config.draws, tune=config.tune, chains=config.chains, seed=seed)
        post = fit.idata.posterior.stack(sample=("chain", "draw"))
        base = {"study": seed, "outcome": outcome, "max_rhat": fit.diagnostics.max_rhat,
                "min_ess": fit.diagnostics.min_ess_bulk, "seconds": fit.seconds}
        for name, truth in truths(truth_model, data.d).items():
            v = (post["beta"].sel(term=name).values if name in ("satisfaction", "violation")
                 else post[name].values)
            lo, hi = _interval(np.asarray(v), LEVEL)
            rows.append({**base, "check": name, "truth": truth, "mean": float(np.mean(v)),
                         "lo": lo, "hi": hi, "passed": lo <= truth <= hi})
        delta = np.asarray(post["delta_f"].values).T
        curve = truth_model.curve
        if curve.drop == 0:
            grid = np.linspace(data.d.min(), data.d.max(), 40)
            f = smooth_draws(data, delta, grid)
            lo, hi = np.quantile(f, [0.025, 0.975], axis=0)
            rows.append({**base, "check": "flat", "truth": 0.0, "mean": float(np.abs(f.mean(0)).max()),
                         "lo": float(lo.max()), "hi": float(hi.min()),
                         "passed": bool((lo <= 0).all() and (hi >= 0).all())})
        else:
            knee = min(3 * curve.scale, float(data.d.max()))
            f = smooth_draws(data, delta, np.array([data.d.min(), knee, data.d.max()]))
            fall, after = f[:, 0] - f[:, 1], f[:, 1] - f[:, 2]
            a_lo, a_hi = _interval(after, 0.95)
            rows.append({**base, "check": "falls then flat", "truth": curve.drop * 0.95,
                         "mean": float(fall.mean()), "lo": float(np.quantile(fall, 0.05)),
                         "hi": float(np.quantile(fall, 0.95)),
                         "passed": bool((fall > 0).mean() >= 0.95 and a_lo <= 0 <= a_hi)})
    return rows


def recovery_study(
    config: RecoveryConfig, behaviour: RatingBehaviour | None = None, on_study: Any = None
) -> dict[str, Any]:
    """Run ``config.studies`` studies; coverage per check and the raw rows."""
    behaviour = behaviour or RatingBehaviour.reference()
    rows: list[dict[str, Any]] = []
    for s in range(config.studies):
        rows += check_study(behaviour, config, config.seed + s)
        if on_study is not None:
            on_study(s, rows)
    coverage: dict[str, float] = {}
    for key in sorted({(r["outcome"], r["check"]) for r in rows}):
        hits = [r["passed"] for r in rows if (r["outcome"], r["check"]) == key]
        coverage[f"{key[0]}:{key[1]}"] = float(np.mean(hits))
    return {"config": config.__dict__, "level": LEVEL, "coverage": coverage, "rows": rows}
