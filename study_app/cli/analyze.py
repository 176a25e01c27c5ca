"""`recourse-study analyze`: the options of a study's analysis (study_app.study_analysis does
it), its progress, advice and exit status."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import typer
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from study_app.cli.apps import app
from study_app.cli.choices import Backend, MgcvMethod, MgcvMode, TraceLevel
from study_app.cli.output import emit, err, fail, json_file_option, json_option

_DB = typer.Option(..., help="The study database: a DuckDB file or postgresql://...")
_OUT = typer.Option(..., help="Folder for report.html, summary.json, models/ and traces/.")
_STUDY = typer.Option(None, help="Study id (default: the only study in the DB).")
_DISTANCE = typer.Option(
        None, help="Main distance: l0_actions | l1_actions | l0_profile | l1_profile "
        "(default: the stored protocol's proximity, else l1_profile).")
_BACKEND = typer.Option("nutpie", help="Sampler: nutpie (fastest here) | pymc.")
_DRAWS = typer.Option(None, min=50, help="Posterior draws per chain: a single run of that many "
                      "(default: 1000 as a first try, more for a model that misses R-hat "
                      "<= 1.01 or ESS >= 400: --ess-target; analysis.fit.DEFAULT_DRAWS).")
_TUNE = typer.Option(
        None, min=50, help="Tuning steps per chain (default: the backend's own, nutpie 300, PyMC 1000).")
_CHAINS = typer.Option(4, min=1, help="Chains.")
_SEED = typer.Option(0, help="Sampling seed.")
_TARGET_ACCEPT = typer.Option(None, min=0.5, max=0.999, help="NUTS step-size target (default "
                              "0.95); raise it (e.g. 0.99) if a model reports divergences.")
_ESS_TARGET = typer.Option(
    None, min=0, help="Draw until every model reaches this bulk and tail ESS and R-hat <= 1.01 "
    "(--draws the first try; longer chains when R-hat misses, more chains when "
    "ESS does; at most 4x the first try's draws: analysis.fit.sample_to_target). Default: 400 "
    "without --draws, none with it; 0: none.")
_GAUSSIAN = typer.Option(True, help="Also fit the Gaussian GAMM (the reference study's Eq. 4: "
                         "random smooths per participant) with L0 and with L1.")
_FAMILY = typer.Option(None, help="Also fit this model family of analysis.FAMILIES (e.g. "
                       "ordinal_position) with L0 and L1, and report it; repeatable.")
_RESUME = typer.Option(False, "--resume", help="Reuse every model stored in OUT whose data, "
                       "model and sampler are unchanged (fingerprint); fit only the rest.")
_TRACE = typer.Option(
        "compact", help="Traces in OUT/traces: none | compact (a reduced posterior, float32: "
        "analysis.traces) | full (as sampled, ~0.5 GB per ordinal model).")
_EXCLUDE = typer.Option(
        None, help="Also leave out participants the data-quality flags name, comma-separated: "
        "speeders, straightliners, attention (data.quality; thresholds from the protocol's "
        "quality block); counted per reason like the protocol's exclusions.")
_MGCV = typer.Option(
        "auto", help="The reference study's GAMMs in R's mgcv (Table S2, Figure 3): auto "
        "(skipped with a note without R or enough ratings) | require (a skip: exit 1) | off.")
_MGCV_METHOD = typer.Option(
        "REML", help="mgcv's smoothing-parameter method: REML (the reference study names "
        "none; seconds per GAMM) | GCV.Cp (mgcv's gam() default; minutes per GAMM on data "
        "with the reference study's spread) | ML.")
_LANGUAGE = typer.Option(
        None, help="Fit on the ratings given in this language only (e.g. ja). Default: every "
        "language, summarized per language in summary.json and the report.")
_PREREG = typer.Option(
        None, help="A prereg.json (recourse-study prereg) of the study's protocol: adds its "
        "deviations (N, exclusions, models, sampler, protocol hash) to the report and summary.")


@app.command("analyze")
def analyze(
    db: str = _DB,
    out: Path = _OUT,
    study: str | None = _STUDY,
    distance: str | None = _DISTANCE,
    backend: Backend = _BACKEND,
    draws: int | None = _DRAWS,
    tune: int | None = _TUNE,
    chains: int = _CHAINS,
    seed: int = _SEED,
    target_accept: float | None = _TARGET_ACCEPT,
    ess_target: int | None = _ESS_TARGET,
    gaussian: bool = _GAUSSIAN,
    family: list[str] | None = _FAMILY,
    resume: bool = _RESUME,
    trace: TraceLevel = _TRACE,
    exclude: str | None = _EXCLUDE,
    mgcv: MgcvMode = _MGCV,
    mgcv_method: MgcvMethod = _MGCV_METHOD,
    language: str | None = _LANGUAGE,
    prereg: Path | None = _PREREG,
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Fit a study's analysis models and write the report.

    The hierarchical ordinal models of acceptance and action against L0 and L1 (plus the
    Gaussian GAMMs and R's mgcv), written to OUT/report.html, OUT/summary.json,
    OUT/models/ and OUT/traces/ as each finishes: after a failure --resume fits only what is
    missing. JSON: summary.json, its fields in docs/analysis.md ("summary.json").

    Exit status: 0 when every model, the mgcv part (or its skip under --mgcv auto, said on
    stderr and in mgcv.reason) and the report are done; 1 when one of them failed (or mgcv
    skipped under --mgcv require), after writing what was done; 2 for bad input.
    """
    from study_app.study_analysis import (
        AnalysisRequest,
        Sampler,
        StudyAnalysisInputError,
        advice,
        analyse_study,
        exclusion_flags,
        prepare_study,
    )

    note = partial(err.print, highlight=False, markup=False)
    try:
        req = AnalysisRequest(
            db=db, out=out, study=study, distance=distance,
            sampler=Sampler(backend, draws, tune, chains, seed, target_accept, ess_target),
            gaussian=gaussian, families=tuple(family or ()), resume=resume, trace=trace,
            exclude=exclusion_flags(exclude),
            mgcv=mgcv, mgcv_method=mgcv_method, language=language, prereg=prereg)
        prepared = prepare_study(req, note)
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                      console=err, transient=True) as progress:
            task = progress.add_task("checking the data", total=None)
            done = analyse_study(
                req, prepared=prepared, on_step=lambda m: progress.update(task, description=m),
                on_log=note)
    except StudyAnalysisInputError as e:
        fail(e, 2)
    except KeyboardInterrupt:
        fail(f"interrupted; the models finished so far are saved in {out / 'models'}: "
             "rerun with --resume to fit only the rest", 130)
    for line in advice(done.summary, out, done.draws):
        note(line)
    emit(done.summary, json_out=json_out, json_file=json_file)
    if not done.summary["complete"] or done.summary["report_error"] or done.mgcv_failed:
        raise typer.Exit(1)
