"""`recourse-study analyze`: fit every model of a study and summarize it.

For each outcome (acceptance, action) and each distance of the chosen family (L0 and L1 over
the profile, or over actions) the ordinal model of analysis.models is fitted; the Gaussian
variant is fitted for the main distance (``distance``). PSIS-LOO compares, per outcome, the
ordinal models with L0 and with L1 (same ratings, same likelihood: which distance explains
the ratings better). Every trace is saved as NetCDF; ``summary`` is what summary.json holds.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import arviz as az
import numpy as np
import pandas as pd

from analysis import fit as fitting
from analysis.models import (
    DISTANCES,
    OUTCOMES,
    AnalysisDataError,
    ModelData,
    build_model,
    prepare,
    smooth_draws,
)
from analysis.tables import recourse_table

HDI = 0.94  # central coefficient intervals (ArviZ's default level)
BAND = 0.95  # smooth bands (the reference study's Figure 3)
GRID = 60


@dataclass
class ModelResult:
    outcome: str
    distance: str
    likelihood: str
    data: ModelData
    fit: fitting.Fit
    smooth: pd.DataFrame  # d, mean, lo, hi
    coefficients: list[dict[str, Any]]
    ppc: np.ndarray | None = None

    def summary(self) -> dict[str, Any]:
        d = self.fit.diagnostics
        return {
            "outcome": self.outcome, "distance": self.distance, "likelihood": self.likelihood,
            "n": self.data.n, "participants": len(self.data.participants),
            "smooth": self.smooth.to_dict(orient="records"),
            "coefficients": self.coefficients,
            "max_rhat": d.max_rhat, "min_ess": d.min_ess_bulk, "min_ess_tail": d.min_ess_tail,
            "divergences": d.divergences, "seconds": self.fit.seconds,
            "backend": self.fit.backend, "warnings": d.problems(),
        }


@dataclass
class Analysis:
    study_id: str
    ratings: pd.DataFrame
    plans: pd.DataFrame
    models: list[ModelResult] = field(default_factory=list)
    loo: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {
            "study_id": self.study_id,
            "n_ratings": int(len(self.ratings)),
            "n_participants": int(self.ratings["participant_id"].nunique()),
            "models": [m.summary() for m in self.models],
            "loo": self.loo,
            "recourse_table": _records(recourse_table(self.plans)),
        }


def distance_family(distance: str) -> tuple[str, str]:
    """(L0 name, L1 name) of the family of ``distance``."""
    if distance not in DISTANCES:
        raise AnalysisDataError(
            f"unknown distance {distance!r}; expected one of {', '.join(DISTANCES)}")
    scope = distance.split("_", 1)[1]
    return f"l0_{scope}", f"l1_{scope}"


def coefficients(model_data: ModelData, idata: az.InferenceData) -> list[dict[str, Any]]:
    """Mean and central 94% interval of every interpretable parameter."""
    post = idata.posterior
    out = []

    def add(name: str, values: np.ndarray, group: str) -> None:
        lo, hi = np.quantile(np.asarray(values), [(1 - HDI) / 2, 1 - (1 - HDI) / 2])
        out.append({"name": name, "group": group, "mean": float(np.mean(values)),
                    "lo": float(lo), "hi": float(hi)})

    if "beta" in post:
        for t in model_data.terms:
            add(t, post["beta"].sel(term=t).values, "effect")
    if "gamma" in post:
        for a in model_data.arms[1:]:
            add(f"arm[{a}] - arm[{model_data.arms[0]}]", post["gamma"].sel(arm=a).values, "arm")
    for v in ("sigma_u", "sigma_b", "sigma_f", "sigma_y"):
        if v in post:
            add(v, post[v].values, "variance")
    return out


def fit_one(
    ratings: pd.DataFrame, outcome: str, distance: str, likelihood: str, *,
    backend: str, draws: int, tune: int | None, chains: int, seed: int, ppc: bool,
    log_likelihood: bool, target_accept: float | None = None,
) -> ModelResult:
    data = prepare(ratings, outcome, distance)
    model = build_model(data, likelihood)  # type: ignore[arg-type]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fitting.SamplingWarning)  # reported in the summary
        result = fitting.sample(model, backend=backend, draws=draws, tune=tune,  # type: ignore[arg-type]
                                chains=chains, seed=seed, log_likelihood=log_likelihood,
                                target_accept=target_accept)
    post = result.idata.posterior.stack(sample=("chain", "draw"))
    grid = np.linspace(data.d.min(), data.d.max(), GRID)
    draws_f = smooth_draws(data, np.asarray(post["delta_f"].values).T, grid)
    lo, hi = np.quantile(draws_f, [(1 - BAND) / 2, 1 - (1 - BAND) / 2], axis=0)
    smooth = pd.DataFrame({"d": grid, "mean": draws_f.mean(axis=0), "lo": lo, "hi": hi})
    pp = fitting.posterior_predictive(model, result, seed) if ppc else None
    return ModelResult(outcome, distance, likelihood, data, result, smooth,
                       coefficients(data, result.idata), pp)


def run_analysis(
    ratings: pd.DataFrame,
    plans: pd.DataFrame,
    *,
    study_id: str,
    distance: str = "l1_profile",
    backend: str = "nutpie",
    draws: int = 1000,
    tune: int | None = None,
    chains: int = 4,
    seed: int = 0,
    target_accept: float | None = None,
    gaussian: bool = True,
    traces: Path | None = None,
    on_step: Callable[[str], None] | None = None,
) -> Analysis:
    """Fit every model (module docstring); write traces under ``traces`` when given."""
    note = on_step or (lambda _m: None)
    l0, l1 = distance_family(distance)
    result = Analysis(study_id, ratings, plans)
    sampler = {"backend": backend, "draws": draws, "tune": tune, "chains": chains, "seed": seed,
               "target_accept": target_accept}
    for outcome in OUTCOMES:
        for dist in (l0, l1):
            note(f"{outcome} ~ s({dist}) ordinal")
            result.models.append(fit_one(
                ratings, outcome, dist, "ordinal", ppc=dist == distance, log_likelihood=True,
                **sampler))
        if gaussian:
            note(f"{outcome} ~ s({distance}) gaussian")
            result.models.append(fit_one(
                ratings, outcome, distance, "gaussian", ppc=False, log_likelihood=False,
                **sampler))
        ordinal = {m.distance: m.fit for m in result.models
                   if m.outcome == outcome and m.likelihood == "ordinal"}
        if len(ordinal) == 2:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # ArviZ's Pareto-k notes are in the table
                result.loo[outcome] = fitting.compare(ordinal)
    if traces is not None:
        traces.mkdir(parents=True, exist_ok=True)
        for m in result.models:
            m.fit.idata.to_netcdf(str(traces / f"{m.outcome}_{m.distance}_{m.likelihood}.nc"))
    return result


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: (None if isinstance(v, float) and not np.isfinite(v) else v)
             for k, v in r.items()} for r in df.to_dict(orient="records")]
