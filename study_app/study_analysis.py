"""A study's whole analysis: the study read from its database, the stored protocol's distance
and exclusions, the quality flags asked for, the languages, the Bayesian models with R's
mgcv GAMMs beside them, the preregistration's deviations, summary.json and report.html.

The one home where protocols and analysis meet: ``recourse-study analyze`` parses its options
into an ``AnalysisRequest`` and calls ``analyse_study``; the Python API and other commands
(``reproduce tominaga``, ``export --format psych-ds``, ``prereg``) use its parts. Bad input
raises ``StudyAnalysisInputError`` before anything is written (the CLI's exit 2).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analysis.mgcv import DEFAULT_METHOD as MGCV_DEFAULT_METHOD

if TYPE_CHECKING:
    import pandas as pd

    from analysis.pipeline import Analysis


class StudyAnalysisInputError(ValueError):
    """The request cannot be analysed as asked (a missing study, a bad option, a prereg of
    another protocol); nothing was written."""


EXCLUDE_NAMES = {"speeders": "speeder", "straightliners": "straightliner",
                 "attention": "failed_attention"}
# analyze's option for each setting analysis.model_data.SettingError can name
SETTING_OPTIONS = {"backend": "--backend", "ess_target": "--ess-target", "distance": "--distance"}


@dataclass(frozen=True)
class Sampler:
    """The sampler's settings (analysis.pipeline.sampler_settings fills the defaults)."""

    backend: str = "nutpie"
    draws: int | None = None
    tune: int | None = None
    chains: int = 4
    seed: int = 0
    target_accept: float | None = None
    ess_target: int | None = None  # draw again until every model reaches it


@dataclass(frozen=True)
class AnalysisRequest:
    """What ``analyse_study`` fits and where it writes (the options of ``analyze``)."""

    db: str
    out: Path
    study: str | None = None
    distance: str | None = None  # default: the stored protocol's
    sampler: Sampler = field(default_factory=Sampler)
    gaussian: bool = True
    families: tuple[str, ...] = ()  # fitted beside the defaults (analysis.FAMILIES' names)
    resume: bool = False
    trace: str = "compact"
    exclude: tuple[str, ...] = ()  # quality-flag rules: speeder, straightliner, ...
    mgcv: str = "auto"
    mgcv_method: str = MGCV_DEFAULT_METHOD
    language: str | None = None
    prereg: Path | None = None


@dataclass
class StudyAnalysis:
    """The finished analysis: its summary (= summary.json) and whether the mgcv part
    failed as the request counts failure (``mgcv: require`` makes a skip one)."""

    summary: dict[str, Any]
    mgcv_failed: bool
    draws: int


def exclusion_flags(exclude: str | None) -> tuple[str, ...]:
    """The quality-flag rules a comma-separated list of EXCLUDE_NAMES asks for."""
    names = [n.strip() for n in (exclude or "").split(",") if n.strip()]
    unknown = [n for n in names if n not in EXCLUDE_NAMES]
    if unknown:
        raise StudyAnalysisInputError(
            f"--exclude: unknown {', '.join(unknown)}; expected a comma-separated list of "
            f"{', '.join(EXCLUDE_NAMES)}")
    return tuple(dict.fromkeys(EXCLUDE_NAMES[n] for n in names))


def protocol_distance(settings: dict[str, Any]) -> str:
    """The stored protocol's proximity (tominaga design) or distance (stratified design):
    the distance its plans were chosen by; l1_profile when the protocol cannot be read."""
    from protocols.definition.schema import Protocol
    from study_app.prereg_analysis import plan_distance

    try:
        protocol = Protocol.model_validate_json(settings.get("protocol_json") or "")
    except Exception:  # noqa: BLE001 - imported studies or older protocol versions
        return "l1_profile"
    return plan_distance(protocol)


def load_study(db: str, study: str | None) -> tuple[str, pd.DataFrame, pd.DataFrame,
                                                     dict[str, Any]]:
    """(study id, ratings, plans, the study's row: protocol and simulation settings) of
    ``study`` in ``db`` (study_app.study_reader)."""
    from study_app.study_reader import StudyReadError, read_study

    try:
        return read_study(db, study)
    except StudyReadError as e:
        raise StudyAnalysisInputError(str(e)) from e


def load_flags(db: str, study_id: str) -> dict[str, tuple[str, ...]]:
    """participant id -> its data-quality flags (data.quality) in ``db``."""
    from data.quality import FLAGS, participant_flags
    from data.store import Store

    with Store(db, read_only=True) as store:
        flags = participant_flags(store, study_id)
    return {row["participant_id"]: tuple(f for f in FLAGS if row[f] is True)
            for row in flags.astype(object).where(flags.notna(), None).to_dict("records")}


def prereg_for_study(path: Path, settings: dict[str, Any]) -> dict[str, Any]:
    """The preregistration at ``path``, checked against the study's stored row: one of
    another protocol id is a different study's plan, not a deviation (the same id with
    another hash is a deviation, analysis.deviations)."""
    from study_app.prereg import PreregError, read_prereg

    try:
        doc = read_prereg(path)
    except PreregError as e:
        raise StudyAnalysisInputError(f"--prereg: {e}") from e
    planned, stored = doc["protocol"]["id"], settings.get("protocol_id")
    if stored is None or (not settings.get("protocol_json")):
        raise StudyAnalysisInputError(
            f"--prereg: the study has no stored protocol (imported ratings); a "
            f"preregistration of protocol {planned!r} cannot be checked against it")
    if planned != stored:
        raise StudyAnalysisInputError(
            f"--prereg: {path} preregisters protocol {planned!r}, but the study ran "
            f"protocol {stored!r}; nothing was written")
    return doc


def study_deviations(planned: dict[str, Any], result: Analysis,
                     settings: dict[str, Any]) -> dict[str, Any]:
    """analysis.deviations of the finished analysis from the preregistration ``planned``;
    N reached counts the excluded participants too."""
    from analysis.deviations import prereg_deviations

    excluded = {e["participant_id"] for e in (result.exclusions or {}).get("excluded", [])}
    reached = result.ratings["participant_id"].astype(str).nunique() + len(excluded)
    return prereg_deviations(planned, participants=int(reached),
                             exclusions=result.exclusions,
                             models=[s.name for s in result.specs], sampler=result.sampler,
                             protocol_hash=settings.get("protocol_hash"))


def check_request(req: AnalysisRequest) -> None:
    """The options that can be checked before the study is read."""
    from analysis.engines import MGCV_MODES
    from analysis.families import FAMILIES
    from analysis.folder import TRACE_LEVELS
    from analysis.mgcv import METHODS

    if req.trace not in TRACE_LEVELS:
        raise StudyAnalysisInputError(
            f"--trace must be one of {', '.join(TRACE_LEVELS)}, got {req.trace!r}")
    if req.mgcv not in MGCV_MODES:
        raise StudyAnalysisInputError(
            f"--mgcv must be one of {', '.join(MGCV_MODES)}, got {req.mgcv!r}")
    if req.mgcv_method not in METHODS:
        raise StudyAnalysisInputError(
            f"--mgcv-method must be one of {', '.join(METHODS)}, got {req.mgcv_method!r}")
    if req.distance is not None:
        sampler_settings(req.distance, req.sampler)
    for name in req.families:
        if name not in FAMILIES:
            raise StudyAnalysisInputError(f"--family: {FAMILIES.unknown(name)}")


def sampler_settings(distance: str, sampler: Sampler) -> dict[str, Any]:
    """The sampler's full settings for a main distance (its family checked too)."""
    from analysis import pipeline
    from analysis.model_data import SettingError

    try:
        pipeline.distance_family(distance)
        return pipeline.sampler_settings(sampler.backend, sampler.draws, sampler.tune,
                                         sampler.chains, sampler.seed, sampler.target_accept,
                                         sampler.ess_target)
    except SettingError as e:
        raise StudyAnalysisInputError(f"{SETTING_OPTIONS[e.setting]}: {e}") from e


@dataclass
class PreparedStudy:
    """A study read and checked, its exclusions applied: what ``analyse_study`` fits."""

    study_id: str
    ratings: pd.DataFrame  # the kept ratings
    everyone: pd.DataFrame  # every rating (the intention-to-treat fit's, when uneven)
    plans: pd.DataFrame
    settings: dict[str, Any]
    planned: dict[str, Any] | None  # the preregistration
    languages: dict[str, Any]
    distance: str
    sampler: dict[str, Any]
    truth: Any
    exclusions: dict[str, Any]


def prepare_study(req: AnalysisRequest, on_log: Callable[[str], None]) -> PreparedStudy:
    """Check the request, read the study, apply the language and the exclusions (saying
    what they left out); StudyAnalysisInputError before anything is written."""
    from analysis.languages import by_language, only
    from analysis.models import AnalysisDataError
    from study_app.exclusion_rules import study_rules

    check_request(req)
    study_id, ratings, plans, settings = load_study(req.db, req.study)
    planned = prereg_for_study(req.prereg, settings) if req.prereg else None
    languages = by_language(ratings, analysed=req.language)
    if req.language is not None:
        try:
            ratings = only(ratings, req.language)
        except AnalysisDataError as e:
            raise StudyAnalysisInputError(f"--language: {e}") from e
    distance = req.distance or protocol_distance(settings)
    sampler = sampler_settings(distance, req.sampler)
    flagged = load_flags(req.db, study_id) if req.exclude else None
    kept, exclusions, truth = study_rules(ratings, settings, flagged=flagged,
                                          asked=req.exclude, note=on_log)
    _say_exclusions(exclusions, bool(req.exclude), on_log)
    return PreparedStudy(study_id, kept, ratings, plans, settings, planned, languages,
                         distance, sampler, truth, exclusions)


def analyse_study(req: AnalysisRequest, *, on_step: Callable[[str], None],
                  on_log: Callable[[str], None],
                  prepared: PreparedStudy | None = None) -> StudyAnalysis:
    """Fit the prepared study (``prepare_study``'s, made here when not given) with mgcv
    beside the sampler, compare with the preregistration and write OUT (module docstring).
    ``on_step``: what runs now; ``on_log``: notes and warnings."""
    from analysis.models import AnalysisDataError
    from analysis.pipeline import run_analysis

    p = prepared or prepare_study(req, on_log)
    pending = _start_mgcv(p.ratings, p.distance, req)
    try:
        result = run_analysis(
            p.ratings, p.plans, study_id=p.study_id, distance=p.distance, **p.sampler,
            gaussian=req.gaussian, families=req.families, out=req.out, resume=req.resume,
            trace=req.trace,
            truth=p.truth, exclusions=p.exclusions,
            intention_to_treat=p.everyone if p.exclusions["uneven"] else None,
            on_step=on_step, on_log=on_log)
    except AnalysisDataError as e:
        raise StudyAnalysisInputError(f"study {p.study_id!r}: {e}") from e
    result.mgcv = _join_mgcv(pending, result, on_step, on_log)
    result.languages = p.languages
    result.deviations = (study_deviations(p.planned, result, p.settings) if p.planned
                         else None)
    summary = write_outputs(result, req.out)
    failed = result.mgcv["status"] == "failed" or (
        req.mgcv == "require" and result.mgcv["status"] != "fitted")
    return StudyAnalysis(summary, failed, p.sampler["draws"])


def _say_exclusions(exclusions: dict[str, Any], flags: bool,
                    on_log: Callable[[str], None]) -> None:
    """What the exclusions left out, and a warning when they are uneven across arms."""
    if exclusions["excluded"] or exclusions["ratings_excluded"]["impossible_items"]:
        dropped = ", ".join(f"{k}: {v}" for k, v in exclusions["ratings_excluded"].items())
        on_log(f"excluding {len(exclusions['excluded'])} participant(s) and "
               f"{exclusions['n_ratings_before'] - exclusions['n_ratings_kept']} rating(s) "
               f"by the protocol's exclusions{' and --exclude' if flags else ''} "
               f"(ratings by rule: {dropped})")
    if exclusions["uneven"]:
        rates = ", ".join(f"{r['arm']} {r['rate']:.0f}%" for r in exclusions["by_arm"])
        on_log(f"warning: the exclusions leave out unevenly many ratings per arm ({rates}); "
               "the main model is also fitted on every rating (intention to treat)")


def _start_mgcv(ratings: pd.DataFrame, distance: str, req: AnalysisRequest
                ) -> Future[dict[str, Any]] | None:
    """The mgcv part's R fits started beside the Bayesian models (analysis.engines.
    mgcv_beside); None when the data cannot be analysed (the models' fit then says why)."""
    from analysis.engines import mgcv_beside
    from analysis.models import AnalysisDataError
    from analysis.pipeline import distance_family, smooth_grids

    try:
        grids = smooth_grids(ratings, distance, req.gaussian)
    except AnalysisDataError:
        return None
    return mgcv_beside(ratings, distance_family(distance), grids, mode=req.mgcv,
                       method=req.mgcv_method)


def _join_mgcv(pending: Future[dict[str, Any]] | None, result: Analysis,
               on_step: Callable[[str], None], on_log: Callable[[str], None]
               ) -> dict[str, Any]:
    """The mgcv part with its agreement to the Bayesian models; a skip or failure is a
    note, never an exception."""
    from analysis.engines import with_agreement

    assert pending is not None  # the data were analysable: the models were fitted
    on_step("mgcv: waiting for R's four GAMMs")
    block = with_agreement(pending.result(), result.models)
    if block["status"] in ("skipped", "failed"):
        on_log(f"mgcv part {block['status']}: {block['reason']}")
    elif block["status"] == "fitted":
        on_log(f"mgcv: Table S2 and Figure 3 from mgcv {block['mgcv_version']} "
               f"({block['seconds']:.0f} s, beside the Bayesian models)")
    return block


def write_outputs(result: Analysis, out: Path) -> dict[str, Any]:
    """summary.json, then report.html; a report failure is recorded, never raised, so the
    summary and every model stay on disk."""
    from analysis.folder import AnalysisFolder
    from analysis.report import render

    folder = AnalysisFolder(out)
    summary = {**result.summary(), "report": None, "report_error": None}
    folder.write_summary(summary)
    try:
        (out / "report.html").write_text(render(result), encoding="utf-8")
        summary["report"] = "report.html"
    except Exception as e:  # noqa: BLE001 - the fits must survive a broken report
        summary["report_error"] = " ".join(f"{type(e).__name__}: {e}".split())
    folder.write_summary(summary)
    return summary


def advice(summary: dict[str, Any], out: Path, draws: int) -> list[str]:
    """What a researcher should know after an analysis, as lines for the terminal: each
    model's warnings with how to fix them, failed models and a failed report with how to
    continue (``--resume``), and where the report is."""
    lines = [f"warning: {m['outcome']} ~ s({m['distance']}) {m['likelihood']}: "
             f"{'; '.join(m['warnings'])}" for m in summary["models"] if m["warnings"]]
    if lines:
        lines.append(f"  treat those models' intervals with care; more draws usually fix low "
                     f"ESS or R-hat (e.g. --draws {2 * draws} --tune 1000), a higher "
                     f"--target-accept (e.g. 0.99) divergences")
    saved = f"{len(summary['models'])} finished model(s) are saved in {out / 'models'}"
    lines += [f"error: model {f['model']} failed: {f['error']}" for f in summary["failed"]]
    if summary["failed"]:
        lines.append(f"{saved}; fix the cause and rerun the same command with --resume to fit "
                     "only the failed model(s)")
    if summary["report_error"]:
        lines.append(f"error: the report step failed: {summary['report_error']}; {saved} and "
                     f"{out / 'summary.json'} is written; rerun with --resume to make the "
                     "report without refitting")
    elif summary["report"]:
        lines.append(f"report written to {out / 'report.html'}")
    return lines
