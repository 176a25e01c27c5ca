"""`recourse-study power`: how many participants a protocol needs (study_app.power)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from study_app.cli.apps import app
from study_app.cli.choices import Backend, DecisionModel
from study_app.cli.output import (
    emit,
    err,
    fail,
    json_file_option,
    json_option,
    result_console,
)

_PROTOCOL = typer.Option(
        None, help="A shipped protocol id or a protocol YAML file (with --from: the pilot's "
        "own protocol is used; given, it must have the pilot's design).")
_FROM_DB = typer.Option(
        None, "--from", help="A pilot study's database (DuckDB file or postgresql://...): "
        "fit the analysis model to its ratings and simulate each study from a different "
        "posterior draw, with the pilot's design, instead of the protocol's simulation block.")
_STUDY = typer.Option(
        None, help="With --from: the pilot's study id (default: the only study).")
_PARTICIPANTS = typer.Option(
        "60,120,240,362", help="Sample sizes to try, comma-separated.")
_SIMS = typer.Option(100, help="Simulated studies per sample size.")
_EFFECT = typer.Option(
        "action.distance", help="What to detect: <outcome>.distance (the smooth), "
        "<outcome>.satisfaction, <outcome>.violation (with an elicitation), "
        "<outcome>.arm.<arm>-<reference> (several arms); outcome acceptance or action.")
_NULL = typer.Option(
        False, "--null", help="Simulate with the effect set to 0: the false-positive rate.")
_TARGET = typer.Option(0.8, help="Power to reach: the smallest N reaching it.")
_RULE = typer.Option(
        "band", help="Smooth effects: band (the simultaneous 95% band excludes 0 somewhere in "
        "the range) | contrast (the 95% interval of f(hi) - f(lo) excludes 0).")
_DISTANCE_RANGE = typer.Option(
        None, "--range", help="LO,HI: the distances a smooth effect is judged over (default: "
        "every distance the study observed).")
_DISTANCE = typer.Option(
        None, help="The model's distance (default: the one the synthetic ratings depend on).")
_OUT = typer.Option(
        None, help="Folder for results.jsonl, power.json, power.html, power.png (default: "
        "$RECOURSE_STUDY_HOME/power/<protocol>/<effect>, shared by the --null run). A "
        "rerun resumes there.")
_SEED = typer.Option(None, help="Seed (default: the protocol's simulation.seed).")
_DECISION_MODEL = typer.Option(
        None, help="Override the protocol's decision model: trained | bayes.")
_BACKEND = typer.Option("nutpie", help="Sampler: nutpie (compiled once) | pymc.")
_DRAWS = typer.Option(
        None, min=10, help="Posterior draws per chain (default: the backend's own, 1000: "
        "analysis.fit.DEFAULT_DRAWS).")
_TUNE = typer.Option(None, min=10, help="Tuning steps per chain (default: "
                                    "the backend's own, nutpie 300, PyMC 1000).")
_CHAINS = typer.Option(4, min=1, help="Chains per fit (run one after another).")
_TARGET_ACCEPT = typer.Option(None, min=0.5, max=0.999,
                                               help="NUTS step-size target (default 0.95).")
_ADDRESS = typer.Option(
        None, help="Join this Ray cluster (host:port of its head, or auto) instead of "
        "starting a local one.")
_WORKERS = typer.Option(
        None, min=1, help="Local Ray: worker processes (default: this machine's cores).")


@app.command("power")
def power(
    protocol: str | None = _PROTOCOL,
    from_db: str | None = _FROM_DB,
    study: str | None = _STUDY,
    participants: str = _PARTICIPANTS,
    sims: int = _SIMS,
    effect: str = _EFFECT,
    null: bool = _NULL,
    target: float = _TARGET,
    rule: str = _RULE,
    distance_range: str | None = _DISTANCE_RANGE,
    distance: str | None = _DISTANCE,
    out: Path | None = _OUT,
    seed: int | None = _SEED,
    decision_model: DecisionModel | None = _DECISION_MODEL,
    backend: Backend = _BACKEND,
    draws: int | None = _DRAWS,
    tune: int | None = _TUNE,
    chains: int = _CHAINS,
    target_accept: float | None = _TARGET_ACCEPT,
    address: str | None = _ADDRESS,
    workers: int | None = _WORKERS,
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Power of a protocol or a pilot per sample size.

    Simulated-study power: for each N, simulate the protocol --sims times with N
    synthetic participants (with --from, each simulated study's participants rate as one
    draw of the pilot's posterior: docs/power.md, "Power from a pilot"), fit the analysis
    model to each (Ray tasks, one core each; the
    model is compiled once per N and worker) and count the studies that detect --effect.
    Results stream to OUT/results.jsonl as each study finishes: rerunning the same command
    (after an interruption, even kill -9) fits only the studies not yet finished.

    JSON: OUT/power.json, its fields in docs/power.md ("power.json").
    """
    from analysis.power import PowerInputError
    from engine.artifacts import home
    from protocols.definition.schema import ProtocolError, load_protocol
    from protocols.running.resources import MethodUnavailableError
    from study_app.power import PowerRun, prepare_run

    if protocol is None and from_db is None:
        fail("give --protocol (simulate its simulation block) or --from (a pilot study)", 2)
    sizes, span = _sizes(participants, distance_range, sims)
    try:
        proto = load_protocol(protocol) if protocol is not None else None
    except ProtocolError as e:
        fail(e, 2, keep_lines=True)
    sampler = _resolved({"backend": backend, "draws": draws, "tune": tune, "chains": chains,
                         "target_accept": target_accept})
    pilot = _pilot(from_db, study, proto, sampler, distance) if from_db else None
    if pilot is not None:
        proto = pilot[0].protocol
    assert proto is not None
    # One folder for the effect and its --null run: each page then shows both curves.
    where = f"pilot-{pilot[0].study_id}" if pilot else None
    folder = out or home() / "power" / proto.id / (where or "") / effect
    run = PowerRun(proto, sizes, sims, effect, folder, null=null, target=target, rule=rule,
                   distance=distance, distance_range=tuple(span) if span else None, seed=seed,
                   decision_model=decision_model, sampler=sampler, address=address,
                   workers=workers, pilot=pilot[1] if pilot else None,
                   pilot_source=pilot[0].describe() if pilot else None)
    try:
        plan = prepare_run(run)
    except (PowerInputError, MethodUnavailableError, FileNotFoundError) as e:
        fail(e, 2)
    doc = _run_with_progress(run, plan, folder, json_out)
    emit(doc, json_out=json_out, json_file=json_file, human=lambda: _print(doc, json_out))
    if doc["fits"]["failed"]:
        first = doc["fits"]["failed"][0]
        fail(f"{len(doc['fits']['failed'])} simulated studies failed (first: {first['key']}: "
             f"{first['error']}); rerun the same command to retry only them", 1)



def _sizes(participants: str, distance_range: str | None, sims: int
           ) -> tuple[list[int], list[float] | None]:
    """The sample sizes and the --range span asked for (exit 2 naming a bad one)."""
    sizes = _numbers(participants, "--participants", int)
    span = _numbers(distance_range, "--range", float) if distance_range else None
    if span is not None and len(span) != 2:
        fail(f"--range must be LO,HI, got {distance_range!r}", 2)
    if sims < 1:
        fail(f"--sims must be at least 1, got {sims}", 2)
    return sizes, span


def _run_with_progress(run: Any, plan: Any, folder: Path, json_out: bool) -> dict[str, Any]:
    """study_app.power.run_power with a progress bar of the simulated studies; a bad input
    found while running exits 2, an interruption 130 (the finished studies are kept)."""
    from analysis.power import PowerInputError
    from protocols.running.resources import MethodUnavailableError
    from study_app.power import run_power

    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    try:
        with Progress(*columns, console=err, transient=json_out) as progress:
            bar = progress.add_task(f"power {run.protocol.id} {run.effect}", total=None)
            return run_power(
                run, plan=plan, on_start=lambda total, reused: progress.update(
                    bar, total=total, completed=reused),
                on_result=lambda r: progress.advance(bar),
                on_log=lambda m: progress.console.print(m, highlight=False, markup=False))
    except (PowerInputError, MethodUnavailableError, FileNotFoundError) as e:
        fail(e, 2)
    except KeyboardInterrupt:
        fail(f"interrupted; the finished simulated studies are saved in "
             f"{folder / 'results.jsonl'}: rerun the same command to fit only the rest", 130)


def _pilot(db: str, study: str | None, protocol: Any, sampler: dict, distance: str | None
           ) -> tuple[Any, Any]:
    """(the pilot, its posterior as synthetic participants: study_app.power_pilot); exit 2
    naming what is wrong with the pilot."""
    from analysis.power import PowerInputError
    from study_app.power_pilot import pilot_posterior, read_pilot

    try:
        pilot = read_pilot(db, study, protocol)
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                      console=err, transient=True) as progress:
            task = progress.add_task(f"fitting the analysis model to pilot {pilot.study_id}",
                                     total=None)
            posterior = pilot_posterior(
                pilot, sampler, distance,
                on_log=lambda m: progress.update(task, description=m))
    except PowerInputError as e:
        fail(f"--from: {e}", 2)
    except KeyboardInterrupt:
        fail("interrupted while fitting the pilot; nothing was written", 130)
    err.print(f"pilot {pilot.study_id}: {posterior.size} posterior draws of "
              f"{pilot.describe()['participants']} participants' ratings", highlight=False)
    return pilot, posterior


def _numbers(text: str, option: str, kind: type) -> list:
    try:
        values = [kind(v) for v in text.split(",") if v.strip()]
    except ValueError:
        fail(f"{option} must be comma-separated numbers, got {text!r}", 2)
    if not values:
        fail(f"{option} is empty", 2)
    return values


def _resolved(sampler: dict) -> dict:
    """The sampler settings with each default resolved (they enter the fingerprint). A
    power curve's fits draw once, without an ESS target: its decisions need intervals, not
    R-hat <= 1.01 (analysis.power counts the fits above RHAT_FLAG), and drawing again would
    multiply a curve's time by what its smallest studies need."""
    from analysis.fit import resolve

    return {**sampler, **resolve(sampler["backend"], sampler["draws"], sampler["tune"],
                                 sampler["target_accept"], ess_target=0)}


def _print(doc: dict, json_out: bool) -> None:
    console = result_console(json_out)
    for r in doc["rows"]:
        parts = [f"N={r['participants']:>5}"]
        for key, label in (("power", "power"), ("false_positive", "false positives")):
            v = r[key]
            if v and v["rate"] is not None:
                parts.append(f"{label} {v['rate']:.2f} [{v['lo']:.2f}, {v['hi']:.2f}] "
                             f"({v['detected']}/{v['sims']})")
        console.print("  ".join(parts), highlight=False)
    f = doc["fits"]
    err.print(f"smallest N with power >= {doc['target']}: {doc['smallest_n']}; "
              f"{f['finished']}/{f['planned']} fits ({f['reused']} reused), "
              f"{f['rhat_above_1_05']} with R-hat > 1.05; {doc['wall_seconds']} s; "
              f"report {doc['files']['html']}", highlight=False)
