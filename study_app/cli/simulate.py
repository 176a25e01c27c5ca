"""`recourse-study simulate`: run a protocol with N synthetic participants into a database."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from study_app.cli.apps import app
from study_app.cli.choices import Backend, StudyDecisionModel
from study_app.cli.output import emit, err, fail, json_file_option, json_option

_PROTOCOL = typer.Option(
        None, help="A shipped protocol id or a protocol YAML file (with --like: the pilot's "
        "own protocol is used; given, it must have the pilot's design).")
_LIKE = typer.Option(
        None, "--like", help="A pilot study's database: the synthetic participants rate as "
        "one draw of the posterior of the analysis model fitted to the pilot (chosen by "
        "--seed), with the pilot's design, instead of the protocol's simulation block.")
_LIKE_STUDY = typer.Option(
        None, help="With --like: the pilot's study id (default: the only study).")
_LIKE_BACKEND = typer.Option("nutpie", help="With --like: the pilot fit's sampler: "
                                     "nutpie | pymc.")
_LIKE_DRAWS = typer.Option(
        None, min=10, help="With --like: posterior draws per chain of the pilot fit (default: "
        "the backend's own).")
_LIKE_TUNE = typer.Option(
        None, min=10, help="With --like: tuning steps per chain of the pilot fit (default: the "
        "backend's own).")
_LIKE_CHAINS = typer.Option(4, min=1, help="With --like: chains of the pilot fit.")
_PARTICIPANTS = typer.Option(100, min=1, help="Number of synthetic participants.")
_DB = typer.Option(..., help="The study database: a DuckDB file (created if missing) or postgresql://...")
_SEED = typer.Option(
        None, help="Seed of the synthetic participants (default: the protocol's simulation.seed)."
    )
_STUDY = typer.Option(None, help="Study id in the database (default: protocol id).")
_DECISION_MODEL = typer.Option(
        None, help="Override the protocol's decision model: trained | bayes | rule."
    )
_CHUNK = typer.Option(100, min=1, help="Participants moved through the study together.")
_SPEEDERS = typer.Option(
        0.0, min=0.0, max=1.0, help="Share of synthetic speeders (pages at a quarter of the "
        "usual time); who is one is stored as simulation truth.")
_STRAIGHTLINERS = typer.Option(
        0.0, min=0.0, max=1.0, help="Share of synthetic straight-liners (one rating on every "
        "plan and question); stored as simulation truth.")
_LANGUAGES = typer.Option(
        None, help="Comma-separated languages the synthetic participants take part in, in "
        "turn (e.g. en,ja; each one the protocol is translated into). Default: English.")
_DROPOUT = typer.Option(  # noqa: B008 - typer's way of a repeatable option
        [], help="ARM=P: participants of arm ARM leave mid-study with probability P (like "
        "closing the tab; with the protocol's time_limit they time out). Repeatable.")
_ARRIVAL_SECONDS = typer.Option(
        60.0, min=0.0, help="Simulated seconds between the arrivals of two chunks (one "
        "participant each under the protocol's quotas).")


@app.command()
def simulate(
    protocol: str | None = _PROTOCOL,
    like: str | None = _LIKE,
    like_study: str | None = _LIKE_STUDY,
    like_backend: Backend = _LIKE_BACKEND,
    like_draws: int | None = _LIKE_DRAWS,
    like_tune: int | None = _LIKE_TUNE,
    like_chains: int = _LIKE_CHAINS,
    participants: int = _PARTICIPANTS,
    db: str = _DB,
    seed: int | None = _SEED,
    study: str | None = _STUDY,
    decision_model: StudyDecisionModel | None = _DECISION_MODEL,
    chunk: int = _CHUNK,
    speeders: float = _SPEEDERS,
    straightliners: float = _STRAIGHTLINERS,
    languages: str | None = _LANGUAGES,
    dropout: list[str] = _DROPOUT,
    arrival_seconds: float = _ARRIVAL_SECONDS,
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Simulate a study with synthetic participants.

    Synthetic participants answer the same pages people would.

    Participants get sequence numbers 0..N-1; running again on the same database continues an
    interrupted run (complete participants are kept, started ones resume). Needs the
    scenario's trained artifacts when the protocol uses them (`recourse-study train`).
    Time is simulated (each page takes its simulated time), so a protocol's time_limit
    applies; under the protocol's quotas participants arrive one after another.

    JSON: its fields in docs/participants.md ("simulate's JSON").
    """
    from data.store import Store, StoreError
    from protocols.definition.translation import TranslationError
    from protocols.running.resources import MethodUnavailableError
    from protocols.running.session import StudyMismatchError, UnknownLanguageError
    from study_app.simulator import check_dropout
    from study_app.simulator import simulate as run

    if speeders + straightliners > 1:
        raise typer.BadParameter(f"--speeders {speeders} and --straightliners "
                                 f"{straightliners} add up to more than 1",
                                 param_hint="--speeders")
    langs = [x.strip() for x in languages.split(",") if x.strip()] if languages else None
    leave = _dropout(dropout)
    proto, protocol_arg, liked = _protocol_to_run(protocol, like, like_study, seed, {
        "backend": like_backend, "draws": like_draws, "tune": like_tune,
        "chains": like_chains, "target_accept": None})
    try:
        check_dropout(proto, leave)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--dropout") from None
    try:
        store = Store(db)
    except StoreError as e:
        fail(e, 2)
    try:
        with Progress(TextColumn("[bold]simulating {task.description}"), BarColumn(),
                      MofNCompleteColumn(), TimeElapsedColumn(), console=err,
                      transient=json_out) as progress:
            task = progress.add_task(proto.id, total=participants)
            report = partial(_advance, progress, task)
            summary = run(protocol_arg, store, participants, seed=seed, study_id=study,
                          decision_model=decision_model, chunk=chunk, progress=report,
                          speeders=speeders, straightliners=straightliners,
                          languages=langs, dropout=leave, arrival_seconds=arrival_seconds)
    except (StudyMismatchError, MethodUnavailableError, FileNotFoundError,
            UnknownLanguageError, TranslationError) as e:
        fail(e, 2)
    finally:
        store.close()
    summary["like"] = liked
    emit(summary, json_out=json_out, json_file=json_file, human=lambda: _report(summary, db))




def _protocol_to_run(protocol: str | None, like: str | None, like_study: str | None,
                     seed: int | None, like_sampler: dict[str, Any]
                     ) -> tuple[Any, Any, dict[str, Any] | None]:
    """(the protocol, what the simulator is given: the protocol's id or file so that its
    translations next to the file are found, or with --like the drawn protocol itself; the
    --like record or None); exit 2 for a bad protocol or neither option."""
    from protocols.definition.schema import ProtocolError, load_protocol

    if protocol is None and like is None:
        fail("give --protocol (simulate its simulation block) or --like (a pilot study)", 2)
    try:
        proto = load_protocol(protocol) if protocol is not None else None
    except ProtocolError as e:
        fail(e, 2, keep_lines=True)
    if like is None:
        return proto, protocol, None
    proto, liked = _like(like, like_study, proto, seed, like_sampler)
    return proto, proto, liked


def _advance(progress: Progress, task: Any, done: int, total: int) -> None:
    progress.update(task, completed=done, total=total)


def _like(db: str, study: str | None, protocol: Any, seed: int | None,
          sampler: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """(the pilot's protocol with one posterior draw as its synthetic participants' ratings,
    the ``like`` block of the summary); exit 2 naming what is wrong with the pilot."""
    from analysis.fit import resolve
    from analysis.power import PowerInputError
    from study_app.power import pilot_protocol
    from study_app.power_pilot import pilot_posterior, read_pilot

    if sampler["backend"] not in ("nutpie", "pymc"):
        fail(f"--like-backend must be nutpie or pymc, got {sampler['backend']!r}", 2)
    sampler.update(resolve(sampler["backend"], sampler["draws"], sampler["tune"], None))
    try:
        pilot = read_pilot(db, study, protocol)
        err.print(f"fitting the analysis model to pilot {pilot.study_id} (once: the fit is "
                  "kept for reruns)", highlight=False)
        posterior = pilot_posterior(pilot, sampler,
                                    on_log=lambda m: err.print(m, highlight=False, markup=False))
    except PowerInputError as e:
        fail(f"--like: {e}", 2)
    base = pilot.protocol
    draw = posterior.draw_for(0, base.simulation.seed if seed is None else seed)
    liked = pilot_protocol(base, posterior, draw)
    return liked, {**pilot.describe(), "fingerprint": posterior.fingerprint, "draw": draw,
                   "ratings_block": posterior.overrides(draw)}


def _dropout(given: list[str]) -> dict[str, float]:
    """{arm: P} of the --dropout ARM=P options."""
    out: dict[str, float] = {}
    for item in given:
        arm, sep, prob = item.partition("=")
        try:
            if not sep or not arm.strip():
                raise ValueError
            out[arm.strip()] = float(prob)
        except ValueError:
            raise typer.BadParameter(f"{item!r} is not ARM=P (e.g. carma=0.25)",
                                     param_hint="--dropout") from None
    return out


def _report(summary: dict, db: Path) -> None:
    """The human-readable summary, data-quality problems spelled out."""
    err.print(f"{summary['complete']} of {summary['participants']} participants complete, "
              f"{summary['plans']} plans, {summary['ratings']} ratings in "
              f"{summary['seconds']:.1f} s -> {db}", highlight=False)
    if summary["quota"]:
        for arm, row in summary["quota"].items():
            err.print(f"  arm {arm}: {row['counted']} of {row['target']} counted, "
                      f"{row['in_progress']} in progress, shortfall {row['shortfall']}",
                      highlight=False, markup=False)
    if summary["statuses"].get("full"):
        err.print(f"{summary['statuses']['full']} participant(s) found the study full",
                  highlight=False)
    if summary["participants_short"]:
        err.print(f"warning: {summary['participants_short']} participant(s) got fewer plans "
                  "than the protocol asks:", highlight=False, markup=False)
    for row in summary["plan_shortfalls"]:
        filled = f", {row['fallback']} filled by the fallback" if row["fallback"] else ""
        err.print(f"  - arm {row['arm']}: {row['participants']} participant(s), "
                  f"{row['missing']} plan(s) missing{filled}: {row['reason']}",
                  highlight=False, markup=False)
    for flag, r in summary["flag_recovery"].items():
        if r["truth"]:
            err.print(f"{flag} flag: {r['both']} of {r['truth']} synthetic {flag}s found, "
                      f"{r['flagged']} flagged", highlight=False)
    if summary["attention_failed"]:
        err.print(f"note: {summary['attention_failed']} participant(s) failed an attention "
                  "check (ratings_long.attention_passed; analyze excludes them when the "
                  "protocol's exclusions.failed_attention is on)", highlight=False)
