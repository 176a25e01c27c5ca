"""`recourse-study analyze`: Bayesian analysis of a study's ratings, report and summary."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from study_app.cli.apps import app
from study_app.cli.output import emit, err, fail, json_file_option, json_option
from study_app.cli.prereg_check import prereg_for_study, study_deviations

if TYPE_CHECKING:
    import pandas as pd


@app.command("analyze")
def analyze(
    db: str = typer.Option(..., help="The study database: a DuckDB file or postgresql://..."),
    out: Path = typer.Option(..., help="Folder for report.html, summary.json, models/ and traces/."),
    study: str | None = typer.Option(None, help="Study id (default: the only study in the DB)."),
    distance: str | None = typer.Option(
        None, help="Main distance: l0_actions | l1_actions | l0_profile | l1_profile "
        "(default: the stored protocol's proximity, else l1_profile)."),
    backend: str = typer.Option("nutpie", help="Sampler: nutpie (fastest here) | pymc."),
    draws: int | None = typer.Option(
        None, min=50, help="Posterior draws per chain (default: the backend's own, nutpie 1500, "
        "PyMC 1000: analysis.fit.DEFAULT_DRAWS)."),
    tune: int | None = typer.Option(
        None, min=50, help="Tuning steps per chain (default: the backend's own, nutpie 300, PyMC 1000)."),
    chains: int = typer.Option(4, min=1, help="Chains."),
    seed: int = typer.Option(0, help="Sampling seed."),
    target_accept: float | None = typer.Option(
        None, min=0.5, max=0.999,
        help="NUTS step-size target (default 0.95, analysis.fit); raise it "
             "(e.g. 0.99) if a model reports divergences."),
    ess_target: int | None = typer.Option(
        None, min=1, help="Draw until every model reaches this bulk and tail ESS and R-hat "
        "<= 1.01: --draws is then the first try, and a model that misses is drawn again with "
        "more draws (at most 4x the first; analysis.fit.sample_to_target). Default: no "
        "target, one run of --draws."),
    gaussian: bool = typer.Option(
        True, help="Also fit the Gaussian GAMM (the reference study's Eq. 4: random "
        "smooths per participant) with L0 and with L1."),
    resume: bool = typer.Option(
        False, "--resume", help="Reuse every model result stored in OUT whose data, model and "
        "sampler settings are unchanged (fingerprint); fit only the missing or changed ones."),
    trace: str = typer.Option(
        "compact", help="Traces in OUT/traces: none | compact (a reduced posterior: at most "
        "1,000 draws, the smooth's curve draws instead of the GAMM's per-participant basis "
        "coefficients, the log-likelihood; float32: analysis.traces) | full (as sampled, with "
        "the per-rating category probabilities; ~0.5 GB per ordinal model)."),
    exclude: str | None = typer.Option(
        None, help="Also leave out participants the data-quality flags name, comma-separated: "
        "speeders, straightliners, attention (data.quality; thresholds from the protocol's "
        "quality block); counted per reason like the protocol's exclusions."),
    mgcv: str = typer.Option(
        "auto", help="The reference study's GAMMs in R's mgcv (Table S2, Figure 3): auto "
        "(when R is installed and there are enough ratings per participant; skipped with a "
        "note otherwise) | require (a skip fails the run: exit 1) | off."),
    mgcv_method: str = typer.Option(
        "GCV.Cp", help="mgcv's smoothing-parameter method: GCV.Cp (mgcv's default; the "
        "reference study names none) | REML | ML."),
    language: str | None = typer.Option(
        None, help="Fit the models on the ratings given in this language only (e.g. ja; "
        "ratings_long.language): run once per language to split the study by language. "
        "Default: every language, summarized per language in summary.json and the report."),
    prereg: Path | None = typer.Option(
        None, help="A prereg.json (recourse-study prereg) of the study's protocol: adds its "
        "deviations (N, exclusions, models, sampler, protocol hash) to the report and summary."),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Fit the hierarchical ordinal models of acceptance and action against L0 and L1 of the
    chosen family (plus the Gaussian variant), and write OUT/report.html (self-contained),
    OUT/summary.json, OUT/models/<model>.json and OUT/traces/<model>.nc.

    Each model is saved as soon as it finishes (summary.json is rewritten then, "complete":
    false until the end); if a model or the report fails, every finished model stays on disk
    and --resume continues with only what is missing.

    JSON (= summary.json): {study_id, complete, n_ratings, n_participants,
    participants_by_kind {kind: n}, recorded {validity, plausibility, cost, hap, method,
    arm, satisfaction, violation: rows holding it, 0 = not recorded}, sampler {backend,
    draws, tune, chains, seed, target_accept, ess_target (only with --ess-target)}, trace,
    models [{name, outcome, distance,
    likelihood, n, participants, smooth [{d, mean, lo, hi}] (95% band), coefficients [{name,
    group (effect | arm | variance | cutpoint | intercept), mean, lo, hi}] (central 94%
    interval), max_rhat, min_ess, min_ess_tail, divergences, seconds, backend, warnings,
    reused, ppc [{rating, observed, mean, lo, hi}] or null, loo {elpd_loo, se, p_loo,
    max_pareto_k, n_pareto_k_above_0_7} or null}], reused, fitted and pending (lists of
    model names), failed [{model, error}], loo {outcome: [{model, rank, elpd_loo, se, elpd_diff, dse, weight}]},
    recourse_table [{arm, method, plans, validity, plausibility, cost, hap, l0_actions,
    l1_actions, l0_profile, l1_profile, satisfaction, violation}] (null: not recorded),
    exclusions {rules {impossible_items, failed_attention, fewer_plans, speeder,
    straightliner}, counts {reason:
    participants}, ratings_excluded {rule: ratings}, n_ratings_before, n_ratings_kept,
    excluded [{participant_id, reason}], by_arm [{arm, ratings, excluded, rate (%),
    participants, participants_excluded}], uneven (two arms' rates differ by more than 10
    points)} (the stored protocol's exclusions; excluded participants are left out of every
    model; --exclude adds the flag rules), intention_to_treat (null unless the exclusions
    are uneven: {why, n_ratings, n_participants, models [the main ordinal model of each
    outcome fitted on every rating, shaped like models], failed [{model, error}]}),
    truth_vs_recovered (simulated studies, else
    null: {distance, outcomes [{outcome, model, truth_shape (falls | rises | flat),
    recovered, true_change, recovered_change (mean rating at d_min minus at d_max),
    curve [{d, truth, mean, lo, hi}], effects [{term, truth, mean, lo, hi, covered}]}]}),
    mgcv {status (fitted | skipped | failed | off), reason (null or why not), mode,
    method, r_version, mgcv_version, seconds, models [{name, outcome, distance, n,
    participants, k, intercept {estimate, se, t, p}, smooth, participant_intercept,
    participant_slope {edf, ref_df, F, p}, aic, deviance_explained, r_squared, scale,
    converged, curve {d, fit, se, lo, hi} (95%), seconds}], table_s2 [{model (Model-1..4),
    outcome, distance, variable, smooth, coef, se, t, edf, F, p, aic}], agreement [{model,
    mgcv_model, bayesian_model, mgcv_effect, bayesian_effect, points_agree, grid_points,
    sentence}]} (docs/analysis-mgcv.md), languages {analysed (the --language, or null),
    by_language [{language, name, participants, ratings, mean_acceptance, mean_action}],
    differences [{language, versus (the most common language), outcome, difference, lo,
    hi}] (95% participant bootstrap), sentence} (docs/languages.md), deviations (null
    without --prereg; else {none, prereg_protocol {id, title, sha256}, items [{kind
    (participants | exclusion | model | sampler | protocol), what, planned, actual,
    sentence}], sentence}: docs/prereg.md), report ("report.html" or null), report_error
    (null or the message)}.

    Exit status: 0 when every model, the mgcv part (or its skip under --mgcv auto: R or
    one of its packages missing, or too few ratings per participant for mgcv's GAMM with a
    random intercept and slope each; said on stderr and in mgcv.reason) and the report are
    done; 1 when a Bayesian model, the report or the mgcv part failed (an R error, or a skip
    under --mgcv require), after writing everything that was done; 2 for bad input (a
    --prereg of another protocol too).
    """
    from analysis.folder import TRACE_LEVELS
    from study_app.exclusion_rules import study_rules

    if trace not in TRACE_LEVELS:
        fail(f"--trace must be one of {', '.join(TRACE_LEVELS)}, got {trace!r}", 2)
    _check_mgcv(mgcv, mgcv_method)
    if distance is not None:
        _sampler(distance, backend, draws, tune, chains, seed, target_accept,  # fail early
                 ess_target)
    asked = exclusion_flags(exclude)
    study_id, ratings, plans, settings = load_study(db, study)
    planned = prereg_for_study(prereg, settings) if prereg else None
    ratings, languages = _languages(ratings, language)
    distance = distance or protocol_distance(settings)
    sampler = _sampler(distance, backend, draws, tune, chains, seed, target_accept, ess_target)
    flagged = load_flags(db, study_id) if asked else None
    everyone = ratings
    ratings, exclusions, truth = study_rules(
        ratings, settings, flagged=flagged, asked=asked,
        note=lambda m: err.print(m, highlight=False, markup=False))
    if exclusions["excluded"] or exclusions["ratings_excluded"]["impossible_items"]:
        dropped = ", ".join(f"{k}: {v}" for k, v in exclusions["ratings_excluded"].items())
        err.print(f"excluding {len(exclusions['excluded'])} participant(s) and "
                  f"{exclusions['n_ratings_before'] - exclusions['n_ratings_kept']} rating(s) "
                  f"by the protocol's exclusions{' and --exclude' if asked else ''} "
                  f"(ratings by rule: {dropped})", highlight=False)
    if exclusions["uneven"]:
        rates = ", ".join(f"{r['arm']} {r['rate']:.0f}%" for r in exclusions["by_arm"])
        err.print(f"warning: the exclusions leave out unevenly many ratings per arm ({rates}); "
                  "the main model is also fitted on every rating (intention to treat)",
                  highlight=False, markup=False)
    pending = _start_mgcv(ratings, distance, gaussian, mgcv, mgcv_method)
    result = _fit_all(ratings, plans, study_id, distance, sampler, gaussian, out, resume, trace,
                      truth=truth, exclusions=exclusions,
                      intention_to_treat=everyone if exclusions["uneven"] else None)
    result.mgcv = _mgcv(pending, result)
    result.languages = languages
    result.deviations = study_deviations(planned, result, settings) if planned else None
    summary = _write_outputs(result, out)
    _advise(summary, out, sampler["draws"])
    emit(summary, json_out=json_out, json_file=json_file)
    mgcv_failed = result.mgcv["status"] == "failed" or (
        mgcv == "require" and result.mgcv["status"] != "fitted")
    if not summary["complete"] or summary["report_error"] or mgcv_failed:
        raise typer.Exit(1)


def _check_mgcv(mode: str, method: str) -> None:
    from analysis.engines import MGCV_MODES
    from analysis.mgcv import METHODS

    if mode not in MGCV_MODES:
        fail(f"--mgcv must be one of {', '.join(MGCV_MODES)}, got {mode!r}", 2)
    if method not in METHODS:
        fail(f"--mgcv-method must be one of {', '.join(METHODS)}, got {method!r}", 2)


def _start_mgcv(ratings: pd.DataFrame, distance: str, gaussian: bool, mode: str,
                method: str) -> Future[dict[str, Any]] | None:
    """The mgcv part's R fits started beside the Bayesian models (analysis.engines.
    mgcv_beside); None when the data cannot be analysed (``_fit_all`` then says why)."""
    from analysis.engines import mgcv_beside
    from analysis.models import AnalysisDataError
    from analysis.pipeline import distance_family, smooth_grids

    try:
        grids = smooth_grids(ratings, distance, gaussian)
    except AnalysisDataError:
        return None
    return mgcv_beside(ratings, distance_family(distance), grids, mode=mode, method=method)


def _mgcv(pending: Future[dict[str, Any]] | None, result: Any) -> dict[str, Any]:
    """The mgcv part (``_start_mgcv``'s) with its agreement to the Bayesian models; a skip
    or failure is one line on stderr, never an exception."""
    from analysis.engines import with_agreement

    assert pending is not None  # the data were analysable: the models were fitted
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=err, transient=True) as progress:
        progress.add_task("mgcv: waiting for R's four GAMMs", total=None)
        block = with_agreement(pending.result(), result.models)
    if block["status"] in ("skipped", "failed"):
        err.print(f"mgcv part {block['status']}: {block['reason']}", highlight=False,
                  markup=False)
    elif block["status"] == "fitted":
        err.print(f"mgcv: Table S2 and Figure 3 from mgcv {block['mgcv_version']} "
                  f"({block['seconds']:.0f} s, beside the Bayesian models)", highlight=False)
    return block


def _languages(ratings: pd.DataFrame, language: str | None
               ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """(the ratings to analyse, the per-language summary: analysis.languages); exit 2 for a
    language with no ratings."""
    from analysis.languages import by_language, only
    from analysis.models import AnalysisDataError

    summary = by_language(ratings, analysed=language)
    if language is None:
        return ratings, summary
    try:
        return only(ratings, language), summary
    except AnalysisDataError as e:
        fail(f"--language: {e}", 2)


def _sampler(distance: str, backend: str, draws: int | None, tune: int | None, chains: int,
             seed: int, target_accept: float | None,
             ess_target: int | None = None) -> dict[str, Any]:
    from analysis.models import AnalysisDataError
    from analysis.pipeline import distance_family, sampler_settings

    try:
        distance_family(distance)
        return sampler_settings(backend, draws, tune, chains, seed, target_accept, ess_target)
    except AnalysisDataError as e:
        fail(f"{'--distance' if 'distance' in str(e) else '--backend'}: {e}", 2)


def load_study(db: str, study: str | None) -> tuple[str, pd.DataFrame, pd.DataFrame,
                                                     dict[str, Any]]:
    """(study id, ratings, plans, the study's row: protocol and simulation settings) of
    ``study`` in ``db``; a one-line error and exit 2 when the database is missing,
    unreadable or held by another process, or the study does not exist or has no ratings."""
    from data.store import Store, StoreError, is_postgres

    if not is_postgres(db) and not Path(db).exists():
        fail(f"no database at {db}", 2)
    try:
        with Store(db, read_only=True) as store:
            studies = list(store.studies()["study_id"])
            study = _choose_study(db, studies, study)
            ratings, plans = store.ratings_long(study), store.plans(study)
            row = store.studies().set_index("study_id").loc[study].to_dict()
    except typer.Exit:
        raise
    except StoreError as e:
        fail(e, 2)
    except Exception as e:  # noqa: BLE001 - not a DuckDB file, or not one of ours
        fail(f"cannot read {db} as a study database: {e}", 2)
    if ratings.empty:
        fail(f"study {study!r} in {db} has no ratings yet: nothing to analyse", 2)
    return study, ratings, plans, row


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


EXCLUDE_NAMES = {"speeders": "speeder", "straightliners": "straightliner",
                 "attention": "failed_attention"}


def exclusion_flags(exclude: str | None) -> tuple[str, ...]:
    """The rules ``--exclude`` asks for (exit 2 naming an unknown one)."""
    names = [n.strip() for n in (exclude or "").split(",") if n.strip()]
    unknown = [n for n in names if n not in EXCLUDE_NAMES]
    if unknown:
        fail(f"--exclude: unknown {', '.join(unknown)}; expected a comma-separated list of "
             f"{', '.join(EXCLUDE_NAMES)}", 2)
    return tuple(dict.fromkeys(EXCLUDE_NAMES[n] for n in names))


def load_flags(db: str, study_id: str) -> dict[str, tuple[str, ...]]:
    """participant id -> its data-quality flags (data.quality) in ``db``."""
    from data.quality import FLAGS, participant_flags
    from data.store import Store

    with Store(db, read_only=True) as store:
        flags = participant_flags(store, study_id)
    return {row["participant_id"]: tuple(f for f in FLAGS if row[f] is True)
            for row in flags.astype(object).where(flags.notna(), None).to_dict("records")}


def _choose_study(db: str, studies: list[str], study: str | None) -> str:
    held = ", ".join(studies) or "none"
    if study is None:
        if not studies:
            fail(f"{db} holds no study yet: simulate or import one first", 2)
        if len(studies) > 1:
            fail(f"{db} holds {len(studies)} studies ({held}); name one with --study", 2)
        return studies[0]
    if study not in studies:
        fail(f"no study {study!r} in {db} (it holds: {held})", 2)
    return study


def _fit_all(ratings: pd.DataFrame, plans: pd.DataFrame, study_id: str, distance: str,
             sampler: dict[str, Any], gaussian: bool, out: Path, resume: bool, trace: str,
             **extra: Any) -> Any:
    from analysis.models import AnalysisDataError
    from analysis.pipeline import run_analysis

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=err) as progress:
        task = progress.add_task("checking the data", total=None)
        try:
            return run_analysis(
                ratings, plans, study_id=study_id, distance=distance, **sampler,
                gaussian=gaussian, out=out, resume=resume, trace=trace, **extra,
                on_step=lambda m: progress.update(task, description=m),
                on_log=lambda m: progress.console.print(m, highlight=False, markup=False))
        except AnalysisDataError as e:
            fail(f"study {study_id!r}: {e}", 2)
        except KeyboardInterrupt:
            fail(f"interrupted; the models finished so far are saved in {out / 'models'}: "
                 "rerun with --resume to fit only the rest", 130)


def _write_outputs(result: Any, out: Path) -> dict[str, Any]:
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


def _advise(summary: dict[str, Any], out: Path, draws: int) -> None:
    """Warnings, failures and how to continue, on stderr."""
    for m in summary["models"]:
        if m["warnings"]:
            err.print(f"[yellow]warning:[/yellow] {m['outcome']} ~ s({m['distance']}) "
                      f"{m['likelihood']}: {'; '.join(m['warnings'])}", highlight=False)
    if any(m["warnings"] for m in summary["models"]):
        err.print(f"  treat those models' intervals with care; more draws usually fix low "
                  f"ESS or R-hat (e.g. --draws {2 * draws} --tune 1000), a higher "
                  f"--target-accept (e.g. 0.99) divergences", highlight=False)
    saved = f"{len(summary['models'])} finished model(s) are saved in {out / 'models'}"
    for f in summary["failed"]:
        err.print(f"error: model {f['model']} failed: {f['error']}", highlight=False)
    if summary["failed"]:
        err.print(f"{saved}; fix the cause and rerun the same command with --resume to fit "
                  "only the failed model(s)", highlight=False)
    if summary["report_error"]:
        err.print(f"error: the report step failed: {summary['report_error']}; {saved} and "
                  f"{out / 'summary.json'} is written; rerun with --resume to make the report "
                  "without refitting", highlight=False)
    elif summary["report"]:
        err.print(f"report written to {out / 'report.html'}", highlight=False)
