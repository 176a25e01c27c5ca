"""One fitted model's result: computed from a fit, summarized, stored and reloaded.

A ``ModelResult`` holds everything the summary and the report need from one model, so a
result reloaded from disk (``ModelResult.from_record``) serves them exactly as a fresh fit:

- the smooth f(d) on a grid of ``GRID`` distances: posterior mean and central 95% band
  (the reference study's Figure 3), from draws of the random-walk increments;
- ``coefficients``: mean and central 94% interval of every interpretable parameter
  (``Coefficient``: effects of satisfaction / violation, arm contrasts, variance components
  and the family's own, e.g. the ordinal cutpoints or the Gaussian intercept: its
  ``ModelFamily.coefficients``);
- the sampling diagnostics and time;
- ``loo``: the pointwise PSIS-LOO (ordinal models), elpd_i and Pareto k per rating, which
  is all ``az.compare`` needs, so the L0-vs-L1 comparison needs no trace;
- ``ppc``: the posterior predictive check per rating k = 1..7: the observed share and the
  mean and central 95% interval of the replicated shares over posterior draws.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import arviz as az
import numpy as np
import pandas as pd
import xarray as xr

from analysis import fit as fitting
from analysis.families import FAMILIES, Coefficient, ModelFamily
from analysis.model_data import ModelData, smooth_draws
from analysis.refit import PendingRefit, Refitter, padded_count

BAND = 0.95  # smooth bands and PPC intervals
GRID = 60
RATINGS = np.arange(1, 8)
_LOO_SCALARS = ("elpd_loo", "se", "p_loo", "n_samples", "n_data_points", "warning", "scale",
                "good_k")


@dataclass(frozen=True)
class ModelSpec:
    """Which model: the outcome, the distance, the family (``likelihood``: its name in the
    catalogue analysis.families.FAMILIES, as summaries store it), and the extras it
    computes."""

    outcome: str
    distance: str
    likelihood: str
    ppc: bool = False
    log_likelihood: bool = False

    @property
    def name(self) -> str:
        return f"{self.outcome}_{self.distance}_{self.likelihood}"

    @property
    def label(self) -> str:
        return f"{self.outcome} ~ s({self.distance}) {self.likelihood}"

    @property
    def family(self) -> ModelFamily:
        return FAMILIES[self.likelihood]


@dataclass
class ModelResult:
    spec: ModelSpec
    data: ModelData
    diagnostics: fitting.Diagnostics
    seconds: float
    backend: str
    smooth: pd.DataFrame  # d, mean, lo, hi
    coefficients: list[Coefficient]
    ppc: list[dict[str, float]] | None = None
    loo: az.ELPDData | None = None
    reused: bool = False

    @property
    def outcome(self) -> str:
        return self.spec.outcome

    @property
    def distance(self) -> str:
        return self.spec.distance

    @property
    def likelihood(self) -> str:
        return self.spec.likelihood

    @property
    def family(self) -> ModelFamily:
        return self.spec.family

    def summary(self) -> dict[str, Any]:
        """This model's entry of summary.json."""
        d = self.diagnostics
        return {
            "name": self.spec.name, "outcome": self.outcome, "distance": self.distance,
            "likelihood": self.likelihood, "n": self.data.n,
            "participants": len(self.data.participants),
            "smooth": self.smooth.to_dict(orient="records"),
            "coefficients": [c.as_dict() for c in self.coefficients],
            "max_rhat": d.max_rhat, "min_ess": d.min_ess_bulk, "min_ess_tail": d.min_ess_tail,
            "divergences": d.divergences, "chains": d.chains, "draws": d.draws,
            "seconds": self.seconds,
            "backend": self.backend, "warnings": d.problems(), "reused": self.reused,
            "ppc": self.ppc, "loo": _loo_brief(self.loo),
        }

    def record(self) -> dict[str, Any]:
        """Everything needed to rebuild this result without its trace (``from_record``)."""
        loo = None
        if self.loo is not None:
            loo = {k: _plain(self.loo[k]) for k in _LOO_SCALARS}
            loo["loo_i"] = np.asarray(self.loo["loo_i"]).tolist()
            loo["pareto_k"] = np.asarray(self.loo["pareto_k"]).tolist()
        return {"summary": self.summary(), "diagnostics": self.diagnostics.as_dict(),
                "loo_pointwise": loo}

    @classmethod
    def from_record(cls, spec: ModelSpec, data: ModelData, record: dict[str, Any]) -> ModelResult:
        s = record["summary"]
        # JSON null is a NaN R-hat or ESS (one chain, too few draws), an unknown count stays None
        diag = {k: float("nan") if v is None and k.startswith(("max_", "min_")) else v
                for k, v in record["diagnostics"].items()}
        return cls(spec, data, fitting.Diagnostics(**diag), s["seconds"],
                   s["backend"], pd.DataFrame(s["smooth"]),
                   [Coefficient(**c) for c in s["coefficients"]], s["ppc"],
                   _elpd(record["loo_pointwise"]), reused=True)


def smooth_grid(data: ModelData) -> np.ndarray:
    """The ``GRID`` distances a smooth is summarized on: the analysed ones' range."""
    return np.linspace(data.d.min(), data.d.max(), GRID)


def ppc_summary(y: np.ndarray, replicated: np.ndarray) -> list[dict[str, float]]:
    """Observed share of each rating 1..7 and the replicated shares' mean and 95% interval
    (``replicated``: (draws, n) ratings on the model's 0..6 scale)."""
    shares = np.stack([(replicated + 1 == k).mean(axis=1) for k in RATINGS], axis=1)
    lo, hi = np.quantile(shares, [(1 - BAND) / 2, 1 - (1 - BAND) / 2], axis=0)
    return [{"rating": int(k), "observed": float((y == k).mean()),
             "mean": float(shares[:, i].mean()), "lo": float(lo[i]), "hi": float(hi[i])}
            for i, k in enumerate(RATINGS)]


def fit_one(spec: ModelSpec, data: ModelData, sampler: dict[str, Any], *,
            keep_probabilities: bool = False,
            refitter: Refitter | None = None) -> tuple[ModelResult, az.InferenceData]:
    """Sample ``spec``'s model on ``data`` and summarize it; also return the InferenceData
    (with the posterior predictive draws added when ``keep_probabilities``: a full trace).
    With a ``refitter`` (analysis.refit, of ``spec``'s family and ``sampler``'s
    settings), a model of a shape it compiled before is not compiled again: the same
    posterior, sampled on the model compiled once."""
    return finish_one(start_one(spec, data, sampler, keep_probabilities=keep_probabilities,
                                refitter=refitter))


@dataclass
class PendingFit:
    """A model whose sampling ``start_one`` started; ``finish_one`` completes it."""

    spec: ModelSpec
    data: ModelData
    sampler: dict[str, Any]
    keep_probabilities: bool
    refit: PendingRefit | None  # None: sampled in finish_one (no refitter)

    def cancel(self) -> None:
        """Stop the chains if they still run (a fit that will not be finished)."""
        if self.refit is not None:
            self.refit.cancel()


def start_one(spec: ModelSpec, data: ModelData, sampler: dict[str, Any], *,
              keep_probabilities: bool = False,
              refitter: Refitter | None = None) -> PendingFit:
    """``fit_one``'s first half: with a ``refitter``, compile if needed and start the chains
    (nutpie's run in its own threads: the caller may finish another model meanwhile). The
    model is compiled for the participants padded to analysis.refit.padded_count, so a study
    of about the same size reuses it (the trace holds the study's own participants)."""
    pending = (refitter.start(data, seed=sampler.get("seed", 0),
                              pad_participants=padded_count(len(data.participants)))
               if refitter else None)
    return PendingFit(spec, data, sampler, keep_probabilities, pending)


def finish_one(pending: PendingFit) -> tuple[ModelResult, az.InferenceData]:
    """``fit_one``'s second half: wait for the chains and summarize the model."""
    spec, data, sampler = pending.spec, pending.data, pending.sampler
    keep_probabilities = pending.keep_probabilities
    # the log-likelihood and the posterior predictive draws come from a model of this data
    # alone: PyMC's posterior predictive sampling leaves a model with data containers
    # unable to build its log-density again, which the refitter's next fit needs
    model = spec.family.build(data, keep_probabilities=keep_probabilities)
    if pending.refit is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fitting.SamplingWarning)  # reported in the summary
            fit = fitting.sample(model, log_likelihood=spec.log_likelihood,
                                 low_rank=spec.family.low_rank_mass, **sampler)
    else:
        refit = pending.refit.result()
        if spec.log_likelihood:
            fitting.add_log_likelihood(model, refit.idata)
        fit = fitting.Fit(refit.idata, refit.backend, refit.compile_seconds + refit.seconds,
                          refit.diagnostics)
    if keep_probabilities:  # a full trace: the integrated random effects drawn too
        integrated = spec.family.integrated_draws(data, fit.idata.posterior,
                                                  sampler.get("seed", 0))
        fit.idata.posterior = fit.idata.posterior.assign(integrated)
    post = fit.idata.posterior.stack(sample=("chain", "draw"))
    grid = smooth_grid(data)
    draws_f = smooth_draws(data, np.asarray(post["delta_f"].values).T, grid)
    lo, hi = np.quantile(draws_f, [(1 - BAND) / 2, 1 - (1 - BAND) / 2], axis=0)
    smooth = pd.DataFrame({"d": grid, "mean": draws_f.mean(axis=0), "lo": lo, "hi": hi})
    ppc = None
    if spec.ppc:
        pp = fitting.posterior_predictive(model, fit, sampler.get("seed", 0))
        y_rep = pp.posterior_predictive["y"].stack(sample=("chain", "draw"))
        ppc = ppc_summary(data.y, np.asarray(y_rep.transpose("sample", ...).values))
        if keep_probabilities:
            fit.idata.extend(pp)
    loo = fitting.loo(fit.idata) if spec.log_likelihood else None
    result = ModelResult(spec, data, fit.diagnostics, fit.seconds, fit.backend, smooth,
                         spec.family.coefficients(data, fit.idata.posterior), ppc, loo)
    return result, fit.idata


def _loo_brief(elpd: az.ELPDData | None) -> dict[str, Any] | None:
    if elpd is None:
        return None
    k = np.asarray(elpd["pareto_k"])
    return {"elpd_loo": float(elpd["elpd_loo"]), "se": float(elpd["se"]),
            "p_loo": float(elpd["p_loo"]), "max_pareto_k": float(np.max(k)),
            "n_pareto_k_above_0_7": int((k > 0.7).sum())}


def _elpd(record: dict[str, Any] | None) -> az.ELPDData | None:
    if record is None:
        return None
    index = [*_LOO_SCALARS[:6], "loo_i", "pareto_k", *_LOO_SCALARS[6:]]
    values = {**record, "loo_i": xr.DataArray(np.asarray(record["loo_i"]), name="loo_i"),
              "pareto_k": xr.DataArray(np.asarray(record["pareto_k"]), name="pareto_k")}
    return az.ELPDData(data=[values[k] for k in index], index=index)


def _plain(v: Any) -> Any:
    """A JSON-ready scalar from a numpy / python one."""
    if isinstance(v, np.generic):
        return v.item()
    return v
