"""`recourse-study analyze`: fit every model of a study and summarize it, losing no work.

Models (``plan_models``): for each outcome (acceptance, action) and each model family fitted
(analysis.families: by default the main family, the ordinal model, and the reference
study's Gaussian GAMM; ``families`` adds others), the model with the L0 and with the L1
distance of the chosen distance family (L0/L1 over the profile or over actions); a family
with ``pointwise_loo`` computes each one's pointwise log-likelihood, one with
``predictive_check`` the posterior predictive check of the main ``distance``'s. PSIS-LOO
compares, per outcome, the main family's models with L0 and with L1 (same ratings, same
likelihood: which distance explains the ratings better).

No finished work is lost: every model's data are checked (``prepare``) before any model is
fitted; each model is written to the output folder (analysis.folder) as soon as it
finishes, and summary.json is rewritten then (``complete`` false until the end). With
``resume``, a stored result whose fingerprint matches (same data, model and sampler) is
reused instead of refitted. A model whose fit fails is listed in ``failed`` and the others
still run.

When the exclusions leave out unevenly many ratings per arm (analysis.exclusions.uneven),
the excluded ratings are not missing at random and the per-protocol fit may compare the arms
on different people; ``intention_to_treat`` (every rating, none excluded) then adds the main
ordinal model of each outcome (the main distance) fitted on all ratings, reported beside
the per-protocol fit (summary ``intention_to_treat``; kept in the summary only, refitted on
``resume``).

Models of one shape (the acceptance and the action model of one distance and likelihood)
are sampled on one compiled model (``compilers``: analysis.refit), the same posterior at
half the compilations. The fits are pipelined: while a model's chains run in nutpie's
threads, the previous model is summarized (``start_one`` / ``finish_one``), so the
post-processing no longer leaves a core idle; the draws are the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis import fit as fitting
from analysis import truth as truth_check
from analysis.families import FAMILIES, ModelFamily
from analysis.folder import DEFAULT_TRACE, TRACE_LEVELS, AnalysisFolder, fingerprint
from analysis.model_data import (
    DISTANCES,
    OUTCOMES,
    AnalysisDataError,
    ModelData,
    SettingError,
    prepare,
)
from analysis.refit import Refitter
from analysis.results import (
    ModelResult,
    ModelSpec,
    PendingFit,
    finish_one,
    fit_one,
    smooth_grid,
    start_one,
)
from analysis.tables import participants_by_kind, recorded, recourse_table
from data.jsonio import json_ready
from engine.synthetic.rating_model import RatingBehaviour


@dataclass
class Analysis:
    study_id: str
    ratings: pd.DataFrame
    plans: pd.DataFrame
    specs: list[ModelSpec] = field(default_factory=list)
    sampler: dict[str, Any] = field(default_factory=dict)
    trace: str = DEFAULT_TRACE
    models: list[ModelResult] = field(default_factory=list)
    failed: list[dict[str, str]] = field(default_factory=list)
    loo: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    truth: RatingBehaviour | None = None  # a simulated study's behaviour
    exclusions: dict[str, Any] | None = None  # analysis.exclusions' record
    mgcv: dict[str, Any] | None = None  # analysis.engines' mgcv block (null until run)
    languages: dict[str, Any] | None = None  # analysis.languages' summary
    deviations: dict[str, Any] | None = None  # analysis.deviations' (null: no prereg)
    itt_ratings: pd.DataFrame | None = None  # every rating, when the exclusions are uneven
    itt: list[ModelResult] = field(default_factory=list)  # the main models fitted on them
    itt_failed: list[dict[str, str]] = field(default_factory=list)

    def truth_vs_recovered(self) -> dict[str, Any] | None:
        """analysis.truth's comparison (None: not a simulated study, or nothing fitted)."""
        if self.truth is None:
            return None
        found = truth_check.compare(self.models, self.truth)
        return found if found["outcomes"] else None

    @property
    def pending(self) -> list[str]:
        done = {m.spec.name for m in self.models} | {f["model"] for f in self.failed}
        return [s.name for s in self.specs if s.name not in done]

    @property
    def complete(self) -> bool:
        return not self.failed and not self.pending

    def summary(self) -> dict[str, Any]:
        return json_ready({
            "study_id": self.study_id,
            "complete": self.complete,
            "n_ratings": int(len(self.ratings)),
            "n_participants": int(self.ratings["participant_id"].nunique()),
            "participants_by_kind": participants_by_kind(self.ratings),
            "recorded": recorded(self.ratings, self.plans),
            "sampler": self.sampler,
            "trace": self.trace,
            "models": [m.summary() for m in self.models],
            "reused": [m.spec.name for m in self.models if m.reused],
            "fitted": [m.spec.name for m in self.models if not m.reused],
            "failed": self.failed,
            "pending": self.pending,
            "loo": self.loo,
            "recourse_table": recourse_table(self.plans).to_dict(orient="records"),
            "exclusions": self.exclusions,
            "truth_vs_recovered": self.truth_vs_recovered(),
            "mgcv": self.mgcv,
            "languages": self.languages,
            "deviations": self.deviations,
            "intention_to_treat": self.intention_to_treat(),
        })

    def intention_to_treat(self) -> dict[str, Any] | None:
        """The intention-to-treat block of the summary (None: not asked for)."""
        if self.itt_ratings is None:
            return None
        return {"why": "the exclusions leave out unevenly many ratings per arm "
                       "(exclusions.by_arm): the main model is also fitted on every rating",
                "n_ratings": int(len(self.itt_ratings)),
                "n_participants": int(self.itt_ratings["participant_id"].nunique()),
                "models": [m.summary() for m in self.itt], "failed": self.itt_failed}


def distance_family(distance: str) -> tuple[str, str]:
    """(L0 name, L1 name) of the family of ``distance``."""
    if distance not in DISTANCES:
        raise SettingError(
            f"unknown distance {distance!r}; expected one of {', '.join(DISTANCES)}", "distance")
    scope = distance.split("_", 1)[1]
    return f"l0_{scope}", f"l1_{scope}"


def planned_families(gaussian: bool = True, families: tuple[str, ...] = ()
                     ) -> list[ModelFamily]:
    """The families ``analyze`` fits: the catalogue's defaults (without ``gaussian``, those
    on the logit scale only), then ``families`` (names in analysis.families.FAMILIES; an
    unknown one: AnalysisDataError naming the known ones)."""
    chosen = [f for f in FAMILIES.defaults() if gaussian or f.scale == "logit"]
    for name in families:
        try:
            extra = FAMILIES[name]
        except KeyError as e:
            raise AnalysisDataError(str(e)) from None
        if extra not in chosen:
            chosen.append(extra)
    return chosen


def plan_models(distance: str, gaussian: bool = True, families: tuple[str, ...] = ()
                ) -> list[ModelSpec]:
    """The models of the module docstring, in fitting order."""
    l0, l1 = distance_family(distance)
    return [ModelSpec(outcome, d, f.name, ppc=f.predictive_check and d == distance,
                      log_likelihood=f.pointwise_loo)
            for outcome in OUTCOMES for f in planned_families(gaussian, families)
            for d in (l0, l1)]


def smooth_grids(ratings: pd.DataFrame, distance: str, gaussian: bool = True
                 ) -> dict[str, np.ndarray]:
    """Each distance of ``distance``'s family -> the grid its models' smooths are summarized
    on (analysis.results.smooth_grid), known before any model is fitted (the mgcv curves are
    evaluated on it: analysis.engines.mgcv_beside)."""
    return {s.distance: smooth_grid(prepare(ratings, s.outcome, s.distance))
            for s in plan_models(distance, gaussian)}


def sampler_settings(backend: str = "nutpie", draws: int | None = None,
                     tune: int | None = None, chains: int = 4, seed: int = 0,
                     target_accept: float | None = None,
                     ess_target: int | None = None) -> dict[str, Any]:
    """The sampler's settings with each default resolved (they enter the fingerprint);
    ``ess_target`` (analysis.fit.sample_to_target: ``draws`` is then the first try; its
    default: analysis.fit.resolve) is among them only when there is one."""
    resolved = fitting.resolve(backend, draws, tune, target_accept, ess_target)
    out = {"backend": backend, "draws": resolved["draws"], "tune": resolved["tune"],
           "chains": chains, "seed": seed, "target_accept": resolved["target_accept"]}
    target = resolved["ess_target"]
    return out if target is None else {**out, "ess_target": target}


def run_analysis(
    ratings: pd.DataFrame,
    plans: pd.DataFrame,
    *,
    study_id: str,
    distance: str = "l1_profile",
    backend: str = "nutpie",
    draws: int | None = None,
    tune: int | None = None,
    chains: int = 4,
    seed: int = 0,
    target_accept: float | None = None,
    ess_target: int | None = None,
    gaussian: bool = True,
    families: tuple[str, ...] = (),
    out: Path | None = None,
    resume: bool = False,
    trace: str = DEFAULT_TRACE,
    on_step: Callable[[str], None] | None = None,
    on_log: Callable[[str], None] | None = None,
    truth: RatingBehaviour | None = None,
    exclusions: dict[str, Any] | None = None,
    intention_to_treat: pd.DataFrame | None = None,
) -> Analysis:
    """Fit (or, with ``resume``, reuse) every model; results go to ``out`` as they finish.
    Sampler defaults: ``sampler_settings``; ``trace``: analysis.folder's levels; ``truth``:
    a simulated study's rating behaviour (adds truth_vs_recovered); ``exclusions``: the
    record of analysis.exclusions for the summary (``ratings`` are already the kept ones);
    ``intention_to_treat``: every rating, to fit the main models on them too (module
    docstring); ``families``: model families fitted beside the defaults (``plan_models``)."""
    if trace not in TRACE_LEVELS:
        raise AnalysisDataError(f"trace must be one of {', '.join(TRACE_LEVELS)}, got {trace!r}")
    step, log = on_step or (lambda _m: None), on_log or (lambda _m: None)
    sampler = sampler_settings(backend, draws, tune, chains, seed, target_accept, ess_target)
    specs = plan_models(distance, gaussian, families)
    inputs = {s.name: prepare(ratings, s.outcome, s.distance) for s in specs}  # check all first
    folder = AnalysisFolder(out) if out is not None else None
    itt_specs = [ModelSpec(o, distance, FAMILIES.main.name) for o in OUTCOMES]
    itt_inputs = ({s.name: prepare(intention_to_treat, s.outcome, s.distance)
                   for s in itt_specs} if intention_to_treat is not None else {})
    refitters = compilers(sampler, keep_probabilities=trace == "full")
    result = Analysis(study_id, ratings, plans, specs, sampler, trace, truth=truth,
                      exclusions=exclusions, itt_ratings=intention_to_treat)
    _fit_models(result, inputs, folder, refitters, resume=resume, step=step, log=log)
    for spec in itt_specs if itt_inputs else []:
        step(f"fitting {spec.label} on every rating (intention to treat)")
        try:
            model, _ = fit_one(spec, itt_inputs[spec.name], result.sampler)
        except Exception as e:  # noqa: BLE001 - like _finish: the per-protocol models stay
            _failed(result.itt_failed, spec, e, log, " (intention to treat)")
            continue
        result.itt.append(model)
        log(f"fitted {spec.label} on every rating in {model.seconds:.1f} s")
        if folder is not None:
            folder.write_summary(result.summary())
    return result


def compilers(sampler: dict[str, Any], *, keep_probabilities: bool = False
              ) -> dict[str, Refitter]:
    """One analysis.refit.Refitter per model family with ``sampler``'s settings: the
    acceptance and the action model of one distance and family have the same shape
    (participants, arms, basis functions, terms), so the second samples on the model the
    first compiled (compilation is most of a fit's time)."""
    return {name: Refitter(name, sampler["backend"], sampler["draws"], sampler["tune"],
                           sampler["chains"], cores=2, target_accept=sampler["target_accept"],
                           keep_probabilities=keep_probabilities,
                           ess_target=sampler.get("ess_target"))
            for name in FAMILIES}


def _fit_models(result: Analysis, inputs: dict[str, ModelData],
                folder: AnalysisFolder | None, refitters: dict[str, Refitter], *,
                resume: bool, step: Callable[[str], None], log: Callable[[str], None]) -> None:
    """Fit (or, with ``resume``, reuse) ``result``'s models in order, pipelined: model i + 1
    compiles and its chains run (nutpie's threads) while model i is waited for and
    summarized on this thread (diagnostics, log-likelihood, LOO, checks, its trace saved), so
    both cores stay busy; results, failures and the summary keep the models' order."""
    started: list[tuple[PendingFit, str]] = []  # started, not yet finished: at most two

    def saved(outcome: str) -> None:
        _compare(result, outcome)
        if folder is not None:
            folder.write_summary(result.summary())

    def finish_previous(keep: int = 0) -> None:
        """Finish every started model but the last ``keep``."""
        while len(started) > keep:
            pending, fp = started[0]
            _finish(result, pending, fp, folder, log)
            started.pop(0)
            saved(pending.spec.outcome)

    try:
        for i, spec in enumerate(result.specs, 1):
            data = inputs[spec.name]
            fp = fingerprint(spec, data, result.sampler)
            stored = folder.reusable(spec, data, fp, result.trace) if folder else None
            if stored is not None and resume:
                finish_previous()
                result.models.append(stored)
                log(f"reused {spec.label} (fingerprint {fp[:12]} unchanged)")
                saved(spec.outcome)
                continue
            if stored is not None:
                log(f"refitting {spec.label}: a matching fit is stored; --resume reuses it")
            step(f"fitting {spec.label} ({i}/{len(result.specs)})")
            try:
                started.append((start_one(spec, data, result.sampler,
                                          keep_probabilities=result.trace == "full",
                                          refitter=refitters[spec.likelihood]), fp))
            except Exception as e:  # noqa: BLE001 - one model's failure must not lose the others
                finish_previous()
                _failed(result.failed, spec, e, log)
                saved(spec.outcome)
                continue
            finish_previous(keep=1)
        finish_previous()
    finally:  # interrupted: no chains left running behind the caller
        for pending, _ in started:
            pending.cancel()


def _finish(result: Analysis, started: PendingFit, fp: str, folder: AnalysisFolder | None,
            log: Callable[[str], None]) -> None:
    """Finish one started model into ``result``; a failure is recorded, not raised (the
    others go on)."""
    spec = started.spec
    try:
        model, idata = finish_one(started)
        if folder is not None:
            folder.save(model, idata, fp, result.trace)
    except Exception as e:  # noqa: BLE001 - one model's failure must not lose the others
        _failed(result.failed, spec, e, log)
        return
    result.models.append(model)
    drawn = model.diagnostics.drawn()
    log(f"fitted {spec.label} in {model.seconds:.1f} s" + (f" ({drawn})" if drawn else ""))


def _failed(failed: list[dict[str, str]], spec: ModelSpec, e: Exception,
            log: Callable[[str], None], what: str = "") -> None:
    """Record a model's failure (its error on one line) in ``failed`` and the log."""
    message = " ".join(f"{type(e).__name__}: {e}".split())
    failed.append({"model": spec.name, "error": message})
    log(f"FAILED {spec.label}{what}: {message}")


def _compare(result: Analysis, outcome: str) -> None:
    """PSIS-LOO of the outcome's two models of the main family once both are there."""
    elpds = {m.distance: m.loo for m in result.models
             if m.outcome == outcome and m.family.main and m.loo is not None}
    if len(elpds) == 2 and outcome not in result.loo:
        result.loo[outcome] = fitting.compare(elpds)
