"""`recourse-study serve`: the participant study and the researcher dashboard (Streamlit)."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from study_app.cli.apps import app
from study_app.cli.choices import DecisionModel
from study_app.cli.output import fail as _fail

_console = Console(stderr=True)


def _log_to_stderr() -> None:
    """The app's log (errors with their ids, refused sign-ins) on stderr, with times."""
    import logging

    logger = logging.getLogger("study_app")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


def _port_free(address: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
        except OSError:
            return False
    return True


def _ensure_artifacts(scenario: str, quick: bool) -> None:
    from engine.artifacts import ensure_artifacts
    from study_app.cli.training_progress import announce_training, training_progress

    announce_training(_console, scenario, quick)
    with training_progress(_console) as report:
        records = ensure_artifacts(scenario, quick=quick, progress=report)
    built = [r.name for r in records if not r.cache_hit]
    shipped = [r.name for r in records if r.shipped]
    done = [f"built {', '.join(built)}"] if built else []
    done += [f"installed the shipped {', '.join(shipped)}"] if shipped else []
    _console.print(f"artifacts of {scenario!r}: " + ("; ".join(done) or "all cached"),
                   highlight=False)


_PROTOCOL = typer.Option(..., help="A shipped protocol id or a protocol YAML file.")
_DB = typer.Option(..., help="The study database: a DuckDB file (created if missing) or postgresql://... (needed for --workers > 1).")
_PORT = typer.Option(8501, min=1, max=65535, help="Port to listen on.")
_ADDRESS = typer.Option(
    "localhost", help="Address to listen on (0.0.0.0 to accept other machines)."
)
_STUDY = typer.Option(None, help="Study id in the database (default: protocol id).")
_DECISION_MODEL = typer.Option(
    None, help="Override the protocol's decision model: trained | bayes."
)
_COMPLETION_URL = typer.Option(
    None, help="Where the debrief sends participants; {code} becomes their completion "
    "code (e.g. https://app.prolific.com/submissions/complete?cc={code})."
)
_ID_PARAM = typer.Option(
    "PROLIFIC_PID", help="URL parameter holding the recruitment platform's participant id "
    "(stored only as a salted hash)."
)
_SESSION_PARAM = typer.Option(
    "SESSION_ID", help="URL parameter holding the recruitment session; a participant id "
    "that returns must carry the session of its first visit (stored as a salted hash)."
)
_HASH_PARAM = typer.Option(
    ["STUDY_ID", "SESSION_ID"], "--hash-param",
    help="Further URL parameters recorded with a participant, hashed (repeatable).",
)
_REQUIRE_ID = typer.Option(
    None, "--require-id/--no-require-id", help="Refuse links without a participant id "
    "(no participant is created). Default: on when --completion-url is set."
)
_ALLOWED_HOST = typer.Option(
    [], "--allowed-host", help="Host name participants' links use (repeatable; the "
    "listening address and, on loopback, localhost are always allowed; '*' allows any). "
    "Needed with --address 0.0.0.0."
)
_REPORTS = typer.Option(
    None, help="Folder the dashboard searches for the newest analysis report.html "
    "(default: $RECOURSE_STUDY_HOME/reports)."
)
_QUICK = typer.Option(
    False, "--quick", help="Use reduced ('quick') artifacts, as `train --quick` builds them "
    "(tests and smoke runs)."
)
_WORKERS = typer.Option(
    1, min=1, help="Server processes. K > 1 starts K `serve` processes on internal ports "
    "behind HAProxy (deploy/haproxy.cfg, sticky sessions) on --address:--port, all on the "
    "PostgreSQL store of --db; a worker that dies is restarted."
)


@app.command()
def serve(
    protocol: str = _PROTOCOL,
    db: str = _DB,
    port: int = _PORT,
    address: str = _ADDRESS,
    study: str | None = _STUDY,
    decision_model: DecisionModel | None = _DECISION_MODEL,
    completion_url: str | None = _COMPLETION_URL,
    id_param: str = _ID_PARAM,
    session_param: str = _SESSION_PARAM,
    hash_param: list[str] = _HASH_PARAM,
    require_id: bool | None = _REQUIRE_ID,
    allowed_host: list[str] = _ALLOWED_HOST,
    reports: Path | None = _REPORTS,
    quick: bool = _QUICK,
    workers: int = _WORKERS,
) -> None:
    """Serve a protocol to participants, with the dashboard.

    Serve a protocol to participants at http://ADDRESS:PORT/ and the researcher dashboard at
    /dashboard.

    Validates the protocol, makes the trained artifacts ready (a new home copies those shipped
    with the code when they fit, engine/shipped_artifacts; what is missing or stale is trained,
    with what and an estimate stated first, then progress and the time left), opens the
    database and loads every model BEFORE the server starts: the app never trains or loads a
    model on a participant's click.

    Participant links: ?PROLIFIC_PID=...&STUDY_ID=...&SESSION_ID=... (hashed, never stored
    raw); the app adds ?p=<token>, which brings a participant back to their exact page after a
    refresh or a server restart. A participant id that returns without its first visit's
    SESSION_ID is refused (ids identify, they do not authenticate). The dashboard needs the
    password in RECOURSE_STUDY_DASHBOARD_PASSWORD (or `dashboard_password` in Streamlit
    secrets; at least 12 characters) and is locked without it. Files the command writes are
    private to its user (umask 077). docs/security.md: what is protected and what the
    deployment must add (TLS, the reverse proxy).
    """
    from protocols.definition.schema import ProtocolError, load_protocol
    from protocols.definition.translation import TranslationError, translations_dir, translators
    from study_app.web import runtime
    from study_app.web.auth import password_problem
    from study_app.web.hardening import allowed_hosts

    try:
        proto = load_protocol(protocol)
        translators(proto, translations_dir(protocol))  # a broken translation fails here
    except (ProtocolError, TranslationError) as e:
        _fail(e, 2, keep_lines=True)
    try:
        config = runtime.make_config(
            protocol, db, study_id=study, decision_model=decision_model,
            completion_url=completion_url, id_param=id_param, session_param=session_param,
            hash_params=tuple(hash_param), require_id=require_id, reports=reports)
        hosts = allowed_hosts(address, allowed_host)
    except (runtime.ConfigError, ValueError) as e:
        raise typer.BadParameter(str(e)) from None
    weak = password_problem()
    if weak:
        _fail(weak, 2)
    if not _port_free(address, port):
        _fail(f"port {port} on {address} is in use; choose another with --port")
    from protocols.definition.registries import method_capabilities

    methods = {a.method for a in proto.arms} | {a.base for a in proto.arms if a.base}
    trained = any((caps := method_capabilities(m)) is not None and caps.artifacts
                  for m in methods)
    needs_artifacts = (decision_model or proto.decision_model) == "trained" or trained
    if workers > 1:
        # the workers see the public Host header through HAProxy: they allow the same hosts
        forwarded = _forwarded(protocol, db, id_param, session_param, hash_param, hosts,
                               require_id, study, decision_model, completion_url, reports, quick)
        _serve_workers(proto.scenario if needs_artifacts else None, config.db, forwarded,
                       workers, address, port, quick)
        return
    if needs_artifacts:
        _ensure_artifacts(proto.scenario, quick)
    _serve_here(proto, config, address, port, hosts)


def _forwarded(protocol: str, db: str, id_param: str, session_param: str,
               hash_param: list[str], hosts: list[str], require_id: bool | None,
               study: str | None, decision_model: str | None, completion_url: str | None,
               reports: Path | None, quick: bool) -> list[str]:
    """The options every worker of ``serve --workers K`` is started with."""
    return ["--protocol", protocol, "--db", db, "--id-param", id_param,
            "--session-param", session_param,
            *[a for h in hash_param for a in ("--hash-param", h)],
            *[a for h in hosts for a in ("--allowed-host", h)],
            *([] if require_id is None else ["--require-id" if require_id else "--no-require-id"]),
            *(["--study", study] if study else []),
            *(["--decision-model", decision_model] if decision_model else []),
            *(["--completion-url", completion_url] if completion_url else []),
            *(["--reports", str(reports)] if reports else []),
            *(["--quick"] if quick else [])]


def _serve_here(proto: Any, config: Any, address: str, port: int, hosts: list[str]) -> None:
    """One server process: every model loaded first, then the server until it stops."""
    import torch

    from data.store import StoreError, is_postgres
    from engine.artifacts import ArtifactMissingError
    from protocols.running.resources import MethodUnavailableError
    from protocols.running.session import StudyMismatchError
    from study_app import live_server
    from study_app.web import runtime
    from study_app.web.auth import PASSWORD_ENV
    from study_app.web.control_routes import ROUTES, set_token

    # Every request computes on tiny tensors (one participant): intra-op threads only add
    # contention between concurrent participants (docs/benchmarks.md, "Findings behind the
    # code").
    torch.set_num_threads(1)
    with _console.status(f"loading study {proto.id!r} into {config.db}"):
        try:
            served = runtime.preload(config)
        except (StudyMismatchError, MethodUnavailableError, StoreError,
                ArtifactMissingError) as e:
            _fail(str(e))
    os.environ.update(config.env())
    host = "localhost" if address in ("0.0.0.0", "") else address
    _console.print(f"study [bold]{served.study_id}[/] at http://{host}:{port}/ , dashboard at "
                   f"http://{host}:{port}/dashboard", highlight=False)
    if not os.environ.get(PASSWORD_ENV):
        _console.print(f"dashboard: set {PASSWORD_ENV} (or Streamlit secrets) to unlock it",
                       highlight=False)
    if not config.require_id:
        _console.print("links without a participant id start anonymous participants "
                       "(--require-id refuses them)", highlight=False)
    _log_to_stderr()
    # the researcher's withdraw / export / backup reach a served DuckDB file through this
    # process (study_app.live_server); PostgreSQL takes them directly
    if not is_postgres(config.db):
        set_token(live_server.write_control(config.db, address, port).token)
    try:
        runtime.run_server(address, port, hosts, ROUTES)
    finally:
        runtime.release_all()  # close the database cleanly when the server stops
        if not is_postgres(config.db):
            live_server.remove_control(config.db)


def _serve_workers(scenario: str | None, db: str, forwarded: list[str], workers: int,
                   address: str, port: int, quick: bool) -> None:
    """``serve --workers K``: migrate the store once, build missing artifacts once, then K
    workers behind HAProxy until interrupted (study_app.web.cluster)."""
    import signal
    import time

    from data.store import Store, StoreError, describe, is_postgres
    from study_app.web.cluster import Cluster, ClusterError, temporary_workdir

    if not is_postgres(db):
        _fail("--workers > 1 needs a store several processes can write: --db "
              "postgresql://... (DuckDB allows one writing process per file)", 2)
    try:
        Store(db).close()  # migrations run once, before the workers start
    except StoreError as e:
        _fail(str(e))
    if scenario is not None:  # trained once here, not by every worker at once
        _ensure_artifacts(scenario, quick)
    workdir = temporary_workdir()
    cluster = Cluster(forwarded, workers, workdir, address=address, port=port)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    with _console.status(f"starting {workers} workers (logs in {workdir})"):
        try:
            cluster.start()
        except ClusterError as e:
            _fail(str(e), keep_lines=True)
    _console.print(f"{workers} workers on {describe(db)} behind HAProxy at {cluster.url}/ "
                   f"(dashboard {cluster.url}/dashboard); logs in {workdir}", highlight=False)
    try:
        while True:
            time.sleep(1.0)
            dead = [w.port for w in cluster.workers if not w.alive()]
            if dead:
                _console.print(f"worker(s) on port(s) {dead} died; restarting", highlight=False)
                cluster.restart_dead()
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()
