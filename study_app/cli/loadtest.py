"""`recourse-study loadtest`: concurrent participants against real servers, then the
database check (study_app.web.load)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from study_app.cli.apps import app
from study_app.cli.output import emit, err, fail, json_file_option, json_option

_PROTOCOL = typer.Option(..., help="A shipped protocol id or a protocol YAML file.")
_PARTICIPANTS = typer.Option(50, min=1, help="Participants in total (N).")
_CONCURRENCY = typer.Option(10, min=1, help="Participants in the study at once (C).")
_DB = typer.Option(..., help="The store: a DuckDB file or postgresql://... "
                       "(a study of its own is created in it).")
_WORKERS = typer.Option(1, min=1, help="Server processes (K > 1: behind HAProxy, "
                            "needs PostgreSQL).")
_THINK = typer.Option(0.0, min=0.0, help="Mean seconds a participant reads a page "
                            "before answering (0: answer at once, the worst case).")
_ACT = typer.Option(0.0, min=0.0, help="Mean seconds each action on a page takes "
                          "once it is read: every widget change, button and the click on "
                          "Continue, uniform between half and 1.5 times it (a person "
                          "pointing and clicking: about 1.2; 0: one right after another).")
_KILL_ONE_AT = typer.Option(
    None, min=0.0, max=1.0, help="SIGKILL one worker once this share of participants "
    "finished (its participants reconnect with their resume link).")
_BATCH_ANSWERS = typer.Option(
    False, "--batch-answers", help="Send a page's answers with its Continue in one "
    "script run (default: as a browser, one run per change of a widget outside a form, "
    "then the click with the form's widgets; only the click is timed).")
_LINGER_SHARE = typer.Option(
    0.0, min=0.0, max=1.0, help="Share of participants who go away mid-study (close "
    "the connection before their 2nd to 4th page) and come back --linger seconds later "
    "by their resume link; past the protocol's time_limit they land on the time-is-up "
    "page.")
_LINGER = typer.Option(0.0, min=0.0, help="Seconds a lingering participant stays "
                             "away (--linger-share).")
_SEED = typer.Option(0, help="Seed of the participants' answers.")
_TIMEOUT = typer.Option(120.0, min=1.0, help="Seconds one page may take.")
_QUICK = typer.Option(False, "--quick", help="Serve with the reduced ('quick') "
                           "artifacts (tests and smoke runs).")
_KEEP_LOGS = typer.Option(None, help="Keep the servers' logs in this folder.")


@app.command()
def loadtest(
    protocol: str = _PROTOCOL,
    participants: int = _PARTICIPANTS,
    concurrency: int = _CONCURRENCY,
    db: str = _DB,
    workers: int = _WORKERS,
    think: float = _THINK,
    act: float = _ACT,
    kill_one_at: float | None = _KILL_ONE_AT,
    batch_answers: bool = _BATCH_ANSWERS,
    linger_share: float = _LINGER_SHARE,
    linger: float = _LINGER,
    seed: int = _SEED,
    timeout: float = _TIMEOUT,
    quick: bool = _QUICK,
    keep_logs: Path | None = _KEEP_LOGS,
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Load-test a protocol with simulated participants.

    Load-test a protocol: start the servers, let N participants (C at a time) walk it
    over Streamlit's own websocket protocol (no browser), stop, check the database.

    Exit 1 when a participant failed or the database check found a problem.

    --json prints: protocol, study_id, backend, participants, concurrency, workers,
    think_s, act_s, widget_reruns, server_start_s, wall_s, pages_per_s, complete, lingered
    (participants who went away mid-study, --linger-share), timed_out (of them, landed on
    the time-is-up page), errors,
    error_list, reconnects, transitions {n, p50_ms, p95_ms, max_ms, by_kind {kind: {...}}},
    first_page {...}, killed_worker (null or {port, pid, after_finished,
    participants_mid_study}), server_memory {processes, rss_mb, pss_mb} (the peak of the
    servers' processes and their children together), database_check {exact, participants_checked,
    answers_checked, problem_count, problems}, machine {cpus, load_avg_1m_before,
    load_avg_1m_end}.
    """
    from protocols.definition.schema import ProtocolError, load_protocol
    from study_app.web.cluster import ClusterError
    from study_app.web.load.run import LoadSettings, is_postgres, run_load

    try:
        proto = load_protocol(protocol)
    except ProtocolError as e:
        fail(e, 2, keep_lines=True)
    if workers > 1 and not is_postgres(db):
        fail("--workers > 1 needs a store several processes can write: --db postgresql://... "
             "(DuckDB allows one writing process)", 2)
    if kill_one_at is not None and workers < 2:
        fail("--kill-one-at needs --workers 2 or more (someone must take over)", 2)
    settings = LoadSettings(proto, protocol, participants, concurrency, db, workers, think,
                            quick, kill_one_at, seed, timeout,
                            widget_reruns=not batch_answers, act=act,
                            linger_share=linger_share, linger=linger)
    workdir = Path(tempfile.mkdtemp(prefix="rs-loadtest-"))
    try:
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=err, transient=json_out) as progress:
            task = progress.add_task("participants", total=participants)
            result = run_load(
                settings, workdir,
                on_progress=lambda d, t: progress.update(task, completed=d, total=t),
                on_status=lambda m: progress.console.print(m, highlight=False))
    except ClusterError as e:
        fail(e, 1, keep_lines=True)
    finally:
        if keep_logs is not None:
            shutil.copytree(workdir, keep_logs, dirs_exist_ok=True)
        shutil.rmtree(workdir, ignore_errors=True)

    emit(result, json_out=json_out, json_file=json_file,
         human=lambda: _print(result, participants))
    if result["errors"] or not result["database_check"]["exact"]:
        raise typer.Exit(1)


def _print(result: dict[str, Any], participants: int) -> None:
    """The run's figures and problems, readable (stderr)."""
    t = result["transitions"]
    check = result["database_check"]
    err.print(f"{result['complete']} of {participants} complete, {result['errors']} errors, "
              f"{result['reconnects']} reconnects in {result['wall_s']} s "
              f"({result['pages_per_s']} pages/s)", highlight=False)
    err.print(f"page transitions: n={t.get('n')} p50 {t.get('p50_ms')} ms, p95 "
              f"{t.get('p95_ms')} ms, max {t.get('max_ms')} ms", highlight=False)
    for kind, s in t.get("by_kind", {}).items():
        err.print(f"  {kind:22s} n={s['n']:4d} p50 {s['p50_ms']:8.1f} ms  p95 "
                  f"{s['p95_ms']:8.1f} ms  max {s['max_ms']:8.1f} ms", highlight=False)
    err.print(f"database check: {'exact' if check['exact'] else 'PROBLEMS'} "
              f"({check['answers_checked']} answers of {check['participants_checked']} "
              "participants)", highlight=False)
    for line in check["problems"]:
        err.print(f"  {line}", highlight=False)
    for e in result["error_list"]:
        err.print(f"  participant {e['participant']}: {e['error']}", highlight=False)
