"""Shared fixtures: trained (quick) artifacts in a test home that every test process sees.

``trained_home`` builds the reduced ("quick") artifacts of the Loan scenario once per test
session into ``$RECOURSE_STUDY_TEST_HOME`` (default ``<repo>/.recourse-study/test-home``, kept
between runs: an unchanged configuration is a cache hit) and points ``RECOURSE_STUDY_HOME``
at it for the rest of the session, so subprocesses (the CLI, `serve`) find them too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def trained_home() -> Iterator[Path]:
    from engine.artifacts import HOME_ENV, ensure_artifacts

    home = Path(
        os.environ.get("RECOURSE_STUDY_TEST_HOME") or REPO / ".recourse-study" / "test-home"
    )
    before = os.environ.get(HOME_ENV)
    os.environ[HOME_ENV] = str(home)
    try:
        ensure_artifacts("loan", quick=True)
        yield home
    finally:
        if before is None:
            os.environ.pop(HOME_ENV, None)
        else:
            os.environ[HOME_ENV] = before


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
    folder = Path("/tmp") / ("rs-pg-tests-" + hashlib.sha256(str(REPO).encode()).hexdigest()[:8])
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
