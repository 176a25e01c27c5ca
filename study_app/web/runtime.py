"""What the running web app serves: its configuration and the one ``Study`` per process.

``recourse-study serve`` validates everything, builds the ``Study`` (models loaded, methods
built) BEFORE the server accepts connections and registers it here (``preload``), then runs
Streamlit in the same process; the app picks the ready study up, so no participant ever
waits for a model to load and nothing is trained on a click. Started any other way
(``streamlit run study_app/web/app.py`` with the environment below, or AppTest), the first
session builds the study once (``st.cache_resource``).

Environment (set by ``serve``):

- ``RECOURSE_STUDY_PROTOCOL``: a shipped protocol id or a protocol file (required);
- ``RECOURSE_STUDY_DB``: the DuckDB file (required);
- ``RECOURSE_STUDY_STUDY_ID``: the study id in the database (default: the protocol id);
- ``RECOURSE_STUDY_DECISION_MODEL``: override the protocol's decision model (trained|bayes);
- ``RECOURSE_STUDY_COMPLETION_URL``: where the debrief sends participants; ``{code}`` is
  replaced by their completion code (e.g. ``https://app.prolific.com/submissions/complete?cc={code}``);
- ``RECOURSE_STUDY_ID_PARAM``: the URL parameter with the recruitment platform's participant
  id (default ``PROLIFIC_PID``);
- ``RECOURSE_STUDY_SESSION_PARAM``: the URL parameter with the recruitment session (default
  ``SESSION_ID``): a returning participant id must carry the session of its first visit;
- ``RECOURSE_STUDY_HASH_PARAMS``: comma-separated further URL parameters recorded (hashed)
  with a new participant (default ``STUDY_ID,SESSION_ID``);
- ``RECOURSE_STUDY_REQUIRE_ID``: ``1`` refuses links without a participant id (default: on
  when a completion URL is set);
- ``RECOURSE_STUDY_REPORTS``: where the dashboard looks for the newest analysis
  ``report.html`` (default ``$RECOURSE_STUDY_HOME/reports``; ``reports/`` next to the
  database is searched too).
"""

from __future__ import annotations

import functools
import os
import signal
import threading
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from data.store import Store, resolve_target
from protocols.definition.schema import load_protocol, resolve
from protocols.definition.translation import translations_dir
from protocols.running.planning import PlanRequest, generate_plans
from protocols.running.resources import study_resources
from protocols.running.session import Study
from protocols.running.state import Participant
from study_app.web.links import LinkParams
from study_app.web.search_processes import SearchProcesses

PROTOCOL_ENV = "RECOURSE_STUDY_PROTOCOL"
DB_ENV = "RECOURSE_STUDY_DB"
STUDY_ID_ENV = "RECOURSE_STUDY_STUDY_ID"
DECISION_ENV = "RECOURSE_STUDY_DECISION_MODEL"
COMPLETION_URL_ENV = "RECOURSE_STUDY_COMPLETION_URL"
ID_PARAM_ENV = "RECOURSE_STUDY_ID_PARAM"
SESSION_PARAM_ENV = "RECOURSE_STUDY_SESSION_PARAM"
HASH_PARAMS_ENV = "RECOURSE_STUDY_HASH_PARAMS"
REQUIRE_ID_ENV = "RECOURSE_STUDY_REQUIRE_ID"
REPORTS_ENV = "RECOURSE_STUDY_REPORTS"
# "0" searches an interactive method's candidates on the server's own threads rather than in
# a worker process beside it (study_app.web.search_processes; the default "1").
SEARCH_WORKER_ENV = "RECOURSE_STUDY_SEARCH_WORKER"


class ConfigError(ValueError):
    """The app was started without (or with a broken) study configuration."""


@dataclass(frozen=True)
class WebConfig:
    protocol: str  # resolved protocol file
    db: str  # absolute database path
    study_id: str | None = None
    decision_model: str | None = None
    completion_url: str | None = None
    id_param: str = "PROLIFIC_PID"
    session_param: str = "SESSION_ID"
    hash_params: tuple[str, ...] = ("STUDY_ID", "SESSION_ID")
    require_id: bool = False
    reports: str | None = None

    @property
    def links(self) -> LinkParams:
        """The link parameters participants' links are read with (study_app.web.links)."""
        return LinkParams(self.id_param, self.session_param, self.hash_params, self.require_id)

    @property
    def key(self) -> tuple[str, str, str | None, str | None]:
        """What identifies the Study object serving this configuration."""
        return (self.protocol, self.db, self.study_id, self.decision_model)

    def env(self) -> dict[str, str]:
        """The environment that reproduces this configuration (``from_env``)."""
        out = {PROTOCOL_ENV: self.protocol, DB_ENV: self.db, ID_PARAM_ENV: self.id_param,
               SESSION_PARAM_ENV: self.session_param,
               HASH_PARAMS_ENV: ",".join(self.hash_params),
               REQUIRE_ID_ENV: "1" if self.require_id else "0"}
        for name, value in ((STUDY_ID_ENV, self.study_id), (DECISION_ENV, self.decision_model),
                            (COMPLETION_URL_ENV, self.completion_url),
                            (REPORTS_ENV, self.reports)):
            if value:
                out[name] = value
        return out


def make_config(
    protocol: str,
    db: str | Path,
    *,
    study_id: str | None = None,
    decision_model: str | None = None,
    completion_url: str | None = None,
    id_param: str = "PROLIFIC_PID",
    session_param: str = "SESSION_ID",
    hash_params: tuple[str, ...] = ("STUDY_ID", "SESSION_ID"),
    require_id: bool | None = None,
    reports: str | Path | None = None,
) -> WebConfig:
    """A checked configuration (ConfigError says what is wrong); ``require_id`` None: on
    exactly when a completion URL is set."""
    if decision_model not in (None, "trained", "bayes"):
        raise ConfigError(f"decision model must be trained or bayes, got {decision_model!r}")
    if completion_url and not completion_url.startswith(("https://", "http://")):
        raise ConfigError(f"the completion URL must start with https:// or http://, got "
                          f"{completion_url!r}")
    names = (id_param, session_param, *hash_params)
    bad = [n for n in names if not n or not n.replace("_", "").isalnum()]
    if bad:
        raise ConfigError(f"URL parameter names must be letters, digits and _; got {bad}")
    if session_param == id_param:
        raise ConfigError("the session parameter must differ from the participant id parameter")
    return WebConfig(
        protocol=str(resolve(protocol).resolve()), db=resolve_target(db),
        study_id=study_id or None, decision_model=decision_model,
        completion_url=completion_url or None, id_param=id_param,
        session_param=session_param, hash_params=tuple(hash_params),
        require_id=bool(completion_url) if require_id is None else require_id,
        reports=str(Path(reports).expanduser().resolve()) if reports else None,
    )


def from_env() -> WebConfig:
    """The configuration from the environment (module docstring); built once per distinct
    environment (every script run asks for it)."""
    return _config_of(tuple(os.environ.get(name) for name in _CONFIG_ENV))


def served_config() -> WebConfig | None:
    """The served study's configuration, or None where no study is configured: a page drawn
    by ``recourse-study preview`` (its ending pages then show the protocol's own return URL
    and id parameter)."""
    try:
        return from_env()
    except ConfigError:
        return None


_CONFIG_ENV = (PROTOCOL_ENV, DB_ENV, STUDY_ID_ENV, DECISION_ENV, COMPLETION_URL_ENV,
               ID_PARAM_ENV, SESSION_PARAM_ENV, HASH_PARAMS_ENV, REQUIRE_ID_ENV, REPORTS_ENV)


@functools.lru_cache(maxsize=8)
def _config_of(values: tuple[str | None, ...]) -> WebConfig:
    (protocol, db, study_id, decision, completion, id_param, session_param, hash_params,
     require_id, reports) = values
    if not protocol or not db:
        raise ConfigError(
            f"no study configured: start the app with `recourse-study serve --protocol ID "
            f"--db FILE` (or set {PROTOCOL_ENV} and {DB_ENV})"
        )
    names = tuple(p.strip() for p in (hash_params or "STUDY_ID,SESSION_ID").split(",")
                  if p.strip())
    require = (require_id or "").strip().lower()
    if require not in ("", "0", "1", "true", "false"):
        raise ConfigError(f"{REQUIRE_ID_ENV} must be 1 or 0, got {require!r}")
    return make_config(
        protocol, db, study_id=study_id, decision_model=decision, completion_url=completion,
        id_param=id_param or "PROLIFIC_PID", session_param=session_param or "SESSION_ID",
        hash_params=names, require_id=None if require == "" else require in ("1", "true"),
        reports=reports or None,
    )


_STUDIES: dict[tuple[str, str, str | None, str | None], Study] = {}
_SEARCHERS: list[SearchProcesses] = []
_LOCK = threading.Lock()


def search_worker() -> bool:
    """Whether interactive searches run in a worker process (``SEARCH_WORKER_ENV``)."""
    text = os.environ.get(SEARCH_WORKER_ENV, "1").strip()
    if text not in ("0", "1"):
        raise ConfigError(f"{SEARCH_WORKER_ENV} must be 1 or 0, got {text!r}")
    return text == "1"


def build_study(config: WebConfig) -> Study:
    """The Study of ``config`` (built once per process; ``serve`` builds it before starting).
    With search workers (``search_worker``), the study is warmed up in this process first and
    the workers are forked from it then (study_app.web.search_processes)."""
    with _LOCK:
        study = _STUDIES.get(config.key)
        if study is None:
            protocol = load_protocol(config.protocol)
            worker = search_worker() and any(arm.interactive for arm in protocol.arms)
            store = Store(config.db)
            try:
                resources = study_resources(protocol, decision_model=config.decision_model)
                study = Study(protocol, store, study_id=config.study_id, resources=resources,
                              prefetch=True, translations=translations_dir(config.protocol))
                if worker:
                    # as while a page is served, no prefetch starts here meanwhile: nothing
                    # computes in the resources while they are copied into the workers
                    with study.interactive.serving():
                        _warm_interactive(study)
                        # pages' searches and prefetches' in a worker each: a page's search
                        # never waits for a speculative one
                        searchers = [SearchProcesses(protocol, resources) for _ in range(2)]
                    _SEARCHERS.extend(searchers)
                    study.interactive.run_searches_with(*searchers)
            except BaseException:
                store.close()
                raise
            _STUDIES[config.key] = study
        return study


def _warm_interactive(study: Study) -> None:
    """One interaction of every interactive arm for a persona, its first searches in the
    search runners (both, at once: their first search pays torch's first use). A dry run:
    nothing is stored."""
    persona = study.persona(0)
    for arm in study.protocol.arms:
        if arm.interactive:
            p = Participant(study.study_id, "warm-up", 0, "web", arm.id, consent_seq=0)
            p.x = persona
            w = study.interactive.start(p)
            speculative = threading.Thread(target=study.interactive.complete,
                                           args=([(w.method, w.session)],),
                                           kwargs={"speculative": True})
            speculative.start()
            study.interactive.finish([study.interactive.start(p)])
            speculative.join()


def preload(config: WebConfig) -> Study:
    """Build the study and warm it up, so the first participant waits for nothing: the
    persona pool exists, every arm has generated plans (or started a HARE interaction) once
    for a persona. A dry run: the rows it would write are dropped."""
    study = build_study(config)
    _warm_interactive(study)
    requests = [PlanRequest("warm-up", 0, arm.id, study.persona(0), None)
                for arm in study.protocol.arms if not arm.interactive]
    if requests:
        generate_plans(study.protocol, study.resources, requests)
    return study


@st.cache_resource(show_spinner="Loading the study ...")
def _cached_study(key: tuple[str, str, str | None, str | None]) -> Study:
    return build_study(from_env())


def current_study() -> tuple[WebConfig, Study]:
    """This server's configuration and study (ConfigError when none is configured)."""
    config = from_env()
    return config, _cached_study(config.key)


def release_all() -> None:
    """Close every study's store and forget them (tests; a server shutting down)."""
    _cached_study.clear()
    with _LOCK:
        for study in _STUDIES.values():
            study.store.close()
        _STUDIES.clear()
        for searcher in _SEARCHERS:
            searcher.close()
        _SEARCHERS.clear()


APP_PATH = Path(__file__).resolve().parent / "app.py"


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(0)


def run_server(address: str, port: int, allowed_hosts: list[str],
               routes: list | None = None) -> None:
    """Run the Streamlit server of ``app.py`` in this process until it stops (``serve``
    preloads the study and sets the environment first), hardened: study_app.web.hardening
    (options, security headers, closed routes) and study_app.web.errors (no tracebacks);
    ``routes``: further HTTP routes (``serve``: study_app.web.control_routes)."""
    from starlette.middleware import Middleware

    from study_app.web import nodelay
    from study_app.web.errors import on_script_error
    from study_app.web.hardening import SecurityHeaders, server_options

    nodelay.install()  # no Nagle stall at the end of every page (study_app.web.nodelay)
    app = st.App(APP_PATH, middleware=[Middleware(SecurityHeaders)], routes=routes or [],
                 on_script_error=on_script_error)
    # uvicorn shuts down gracefully on SIGTERM, then re-raises the signal to the handler it
    # found: make that one return control here, so the caller closes the database cleanly.
    signal.signal(signal.SIGTERM, _stop)
    app.run(config={
        "server.port": port, "server.address": address, "server.headless": True,
        "server.fileWatcherType": "none", "server.runOnSave": False,
        "theme.primaryColor": "#2b6cb0",
        # A full gc.collect() after every script run walks torch's whole heap on every page
        # (docs/benchmarks.md, "Findings behind the code"); Python's generational GC still runs.
        "runner.postScriptGC": False, "runner.magicEnabled": False,
        **server_options(allowed_hosts),
    })
