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
