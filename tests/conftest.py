"""Shared fixtures: trained (quick) artifacts in a test home that every test process sees.

``trained_home`` builds the reduced ("quick") artifacts of the Loan scenario (and the two
classifiers of the german-credit tabular world, the decision model and flow of loan-data)
once per test session into ``$RECOURSE_STUDY_TEST_HOME`` (default
``<repo>/.recourse-study/test-home``, kept between runs) and points ``RECOURSE_STUDY_HOME``
at it for the rest of the session, so subprocesses (the CLI, `serve`) find them too.

The cache is keyed on the data and configuration (the artifacts' own fingerprints) and on
the training code: ``training_code_hash`` hashes every engine module the artifact builders
import (transitively) and the scenario modules; when it differs from the hash stored beside
the artifacts, they are rebuilt, so a change to training code is never tested against models
the old code trained. A built home is also kept in the user's cache
(``$XDG_CACHE_HOME`` or ``~/.cache``, ``recourse-study/test-home-<code hash>``; another place
with ``$RECOURSE_STUDY_TEST_CACHE``, none with ``off``), so a fresh clone of the same code
starts from it instead of training again (the models that tests train in the test home on
demand, such as the paper's iCARMA seeds, are added to it when a session ends); the
artifacts' own fingerprints are still checked on every run. The cache keeps the homes of the
``KEEP_CACHED_HOMES`` code versions used last and deletes older ones (``prune_cache``).
Under pytest-xdist (``make test`` runs two workers) a file lock lets one worker build while
the others wait; each worker starts its own PostgreSQL.

A skipped test fails the run: a missing dependency or an import error must not hide as a
skip (``pytest_runtest_makereport``).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from filelock import FileLock

import analysis  # noqa: F401  (writes ArviZ's daily stamp before a test module imports ArviZ)
from engine.artifact_provenance import training_code_files as training_code_files
from engine.artifact_provenance import training_code_hash

REPO = Path(__file__).resolve().parents[1]

# Under pytest-xdist (make test: one worker per core) each worker and the processes it starts
# (the CLI, servers, PyMC's chains) compute on one thread: a second thread pool per worker
# only oversubscribes the cores, and torch's spinning pool threads then cost several times the
# tests' own CPU. Set before anything imports torch, numpy's BLAS or numba.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                  "NUMBA_NUM_THREADS"):
        os.environ.setdefault(_name, "1")
CODE_HASH_FILE = "training-code.sha256"
KEEP_CACHED_HOMES = 3  # the user cache keeps the homes of this many code versions


def shared_cache(code: str) -> Path | None:
    """Where a home built by training code ``code`` is kept for other clones (None: off)."""
    chosen = os.environ.get("RECOURSE_STUDY_TEST_CACHE", "")
    if chosen.lower() == "off":
        return None
    root = Path(chosen) if chosen else (
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "recourse-study")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:  # no writable cache here (a read-only home): train in the test home only
        return None
    return root / f"test-home-{code[:16]}"


def _copy_home(source: Path, target: Path) -> None:
    """Replace ``target``'s artifacts and code marker by ``source``'s (under ``target``'s lock,
    which readers of the cache take too); the marker is written last, so a copy cut short
    is never taken for a whole one."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source / "artifacts", target / "artifacts")
    shutil.copy2(source / CODE_HASH_FILE, target / CODE_HASH_FILE)


def _cache_lock(cache: Path) -> FileLock:
    return FileLock(str(cache.parent / (cache.name + ".lock")))


def prune_cache(cache: Path, keep: int = KEEP_CACHED_HOMES) -> list[Path]:
    """Delete the cached homes beside ``cache`` but the ``keep`` used last (``cache`` always
    kept; "used" is the time of a home's code marker, touched on every use); a home whose
    lock another process holds is left alone. Returns the homes deleted."""
    homes = [h for h in cache.parent.glob("test-home-*") if h.is_dir() and h != cache]
    homes.sort(key=lambda h: (h / CODE_HASH_FILE).stat().st_mtime
               if (h / CODE_HASH_FILE).is_file() else 0.0, reverse=True)
    deleted = []
    for home in homes[max(keep - 1, 0):]:
        try:
            with _cache_lock(home).acquire(timeout=0):
                shutil.rmtree(home, ignore_errors=True)
        except TimeoutError:  # filelock.Timeout: in use by another test session
            continue
        deleted.append(home)
    return deleted


def _add_new_artifacts(home: Path, cache: Path, code: str) -> None:
    """Add to the cache the artifacts that tests trained in the test home on demand (the
    paper's iCARMA models: tests/engine/test_icarma_paper.py, ...) and that it lacks, so a
    later clone of the same code loads them instead of training them again. Whole pairs
    only, the weights before their metadata; a loader checks the weights against the
    metadata's SHA-256 anyway (engine.artifact_store.read_metadata)."""
    with _cache_lock(cache):
        marker = cache / CODE_HASH_FILE
        if not marker.is_file() or marker.read_text().strip() != code:
            return
        for meta in sorted((home / "artifacts").glob("*/*.json")):
            weights = meta.with_suffix(".pt")
            target = cache / "artifacts" / meta.parent.name / meta.name
            if target.exists() or not weights.is_file():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(weights, target.with_suffix(".pt"))
            shutil.copy2(meta, target)


@pytest.fixture(scope="session")
def trained_home() -> Iterator[Path]:
    from engine.artifacts import HOME_ENV, build_artifacts

    home = Path(
        os.environ.get("RECOURSE_STUDY_TEST_HOME") or REPO / ".recourse-study" / "test-home"
    )
    before = os.environ.get(HOME_ENV)
    os.environ[HOME_ENV] = str(home)
    try:
        home.mkdir(parents=True, exist_ok=True)
        # pytest-xdist workers share the folder: one builds, the others wait and then load
        with FileLock(str(home.parent / (home.name + ".lock"))):
            code = training_code_hash()
            marker = home / CODE_HASH_FILE
            cache = shared_cache(code)
            stale = not marker.is_file() or marker.read_text().strip() != code
            if stale and cache is not None:
                with _cache_lock(cache):
                    if (cache / CODE_HASH_FILE).is_file():
                        shutil.rmtree(home / "artifacts", ignore_errors=True)
                        shutil.copytree(cache / "artifacts", home / "artifacts")
                        stale = False  # trained by this code; fingerprints checked below
            records = build_artifacts("loan", quick=True, force=stale)
            # the classifiers of the german-credit tabular world (hare-credit; seconds)
            records += build_artifacts("german-credit", quick=True, force=stale)
            # the learned world of the loan-data scenario (its flow read as an SCM)
            records += build_artifacts("loan-data", quick=True, only=("decision", "flow"),
                                       force=stale)
            marker.write_text(code + "\n")
            built = any(not r.cache_hit for r in records)
            if cache is not None:
                with _cache_lock(cache):
                    if built or not (cache / CODE_HASH_FILE).is_file():
                        _copy_home(home, cache)
                    (cache / CODE_HASH_FILE).touch()  # used now (prune_cache)
                prune_cache(cache)
        yield home
        if cache is not None:
            _add_new_artifacts(home, cache, code)
    finally:
        if before is None:
            os.environ.pop(HOME_ENV, None)
        else:
            os.environ[HOME_ENV] = before


# ---- a small HARE study -------------------------------------------------------------------
_SMALL_HARE = """\
id: {pid}
title: A small HARE study ({pid})
scenario: loan
seed: {seed}
decision_model: bayes
profile: {{source: persona}}
elicitation: {{scheme: ranking}}
arms:
  - id: hare
    method: hare
    base: oracle
    base_options: {{bins: 6, plausibility: false}}
    options: {{budget: 6, iterations: 2, steps: 8, bisections: 8}}
plans: {{per_participant: 1, design: best}}
"""


@pytest.fixture
def small_hare():
    """Protocol text of a small real HARE study (Oracle base, budget 6 in two iterations,
    few search steps): ``small_hare(pid, seed)``."""
    return lambda pid, seed: _SMALL_HARE.format(pid=pid, seed=seed)


# ---- the command line in this process -----------------------------------------------------
@dataclass(frozen=True)
class CliRun:
    code: int
    stdout: str
    stderr: str


@pytest.fixture
def run_cli(capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """``run_cli(*args)`` runs the console script's entry point (``study_app.cli.main``) in
    this process and returns its exit code and what reached file descriptors 1 and 2.

    The capture is at the descriptors (``capfd``), as a subprocess' pipes would see it:
    output that bypasses ``sys.stdout`` (C code, child processes) is caught too, without a
    new interpreter importing the command's stack for each call. ``main``'s umask is undone
    afterwards. Tests about the process boundary itself keep a real subprocess."""
    from study_app.cli import main

    def run(*args: str) -> CliRun:
        capfd.readouterr()  # drop what came before
        monkeypatch.setattr(sys, "argv", ["recourse-study", *args])
        umask = os.umask(0o077)
        os.umask(umask)
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        finally:
            os.umask(umask)
        out, err = capfd.readouterr()
        return CliRun(code, out, err)

    return run


# ---- PostgreSQL ---------------------------------------------------------------------------
# One private PostgreSQL 15 per test session (scripts/local_postgres.sh: Debian's package,
# 127.0.0.1 only, stops itself after an hour at the latest and at the end of the session);
# every test that asks for ``postgres_url`` gets a schema of its own, dropped afterwards.
# Where PostgreSQL cannot be installed or started, those tests skip and say why.

def _free_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    import hashlib
    import subprocess

    if os.environ.get("RECOURSE_STUDY_TEST_POSTGRES"):  # an existing server of your own
        yield os.environ["RECOURSE_STUDY_TEST_POSTGRES"]
        return
    # one server per pytest-xdist worker (each its own folder and port)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    folder = Path("/tmp") / ("rs-pg-tests-" + hashlib.sha256(str(REPO).encode()).hexdigest()[:8]
                             + "-" + worker)
    script = REPO / "scripts" / "local_postgres.sh"
    started = subprocess.run(["bash", str(script), "start", str(folder), str(_free_port()), "60"],
                             capture_output=True, text=True, timeout=600)
    if started.returncode != 0:
        pytest.skip("PostgreSQL tests skipped: scripts/local_postgres.sh could not install or "
                    f"start PostgreSQL 15 here:\n{started.stderr.strip()[-800:]}")
    try:
        yield started.stdout.strip().splitlines()[-1]
    finally:
        subprocess.run(["bash", str(script), "stop", str(folder)], capture_output=True,
                       timeout=120)


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A URL whose tables live in a fresh schema of the session's PostgreSQL."""
    import secrets
    from urllib.parse import quote

    import psycopg

    schema = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(postgres_server, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in postgres_server else "?"
    try:
        yield f"{postgres_server}{sep}options={quote(f'-csearch_path={schema}')}"
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["duckdb", "postgresql"])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new study database on each backend: a DuckDB file, a PostgreSQL schema."""
    if request.param == "duckdb":
        return str(tmp_path / "study.duckdb")
    return request.getfixturevalue("postgres_url")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A skipped test is a failure (the only skips we accept are none)."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.longrepr = f"skipped tests fail this suite (a missing dependency?): {reason}"


# ---- pytest-xdist: the long modules first -------------------------------------------------
# `make test` hands out whole modules (`--dist loadscope`: a module's fixtures are built once);
# pytest-xdist hands them out by their number of tests, so a module of a few long tests would
# start last and keep one worker busy long after the other ran out of work. The modules below
# start first, longest first (their seconds in `pytest --durations` summed per module; a stale
# figure only costs balance, never a test).
LONG_MODULES = {
    "tests/analysis/test_resume.py": 153,
    "tests/study_app/test_simulate.py": 151,
    "tests/analysis/test_traces.py": 104,
    "tests/study_app/test_train_cli.py": 78,
    "tests/study_app/test_json_convention.py": 60,
    "tests/engine/test_icarma_paper.py": 57,
    "tests/test_docstring_examples.py": 47,
    "tests/web/test_browser_e2e.py": 45,
    "tests/web/test_links_resume.py": 41,
    "tests/engine/test_reproduce.py": 41,
    "tests/engine/test_artifacts.py": 39,
    "tests/engine/test_hare.py": 39,
    "tests/protocols/test_realistic_plans.py": 34,
    "tests/protocols/test_session.py": 33,
    "tests/data/test_store_contract.py": 32,
    "tests/web/test_dashboard.py": 31,
    "tests/protocols/test_admission.py": 30,
    "tests/engine/test_hare_budget.py": 29,
    "tests/protocols/test_concurrency.py": 28,
    "tests/web/test_participant_app.py": 27,
    "tests/protocols/test_two_writers.py": 26,
}



@pytest.fixture(scope="session")
def loan():
    """The Loan scenario (its SCM and features; no trained model)."""
    from engine.scenarios import get_scenario

    return get_scenario("loan")

@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """Under ``--dist loadscope``, the modules of LONG_MODULES first (longest first), then
    pytest-xdist's own order."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class LongModulesFirst(LoadScopeScheduling):
        def _assign_work_unit(self, node) -> None:
            first = max(self.workqueue, key=lambda scope: LONG_MODULES.get(scope, 0))
            self.workqueue.move_to_end(first, last=False)
            super()._assign_work_unit(node)

    return LongModulesFirst(config, log)
