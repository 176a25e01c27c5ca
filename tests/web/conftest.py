"""Fixtures of the web tests: a configured app (AppTest, in-process) and small protocols."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from study_app.web import runtime

SMALL = """\
id: small-web
title: Small web study
scenario: loan
seed: 5
decision_model: bayes
screening:
  - {id: adult, question: "Are you 18 or older?", options: ["Yes", "No"], eligible: ["Yes"]}
profile: {source: persona}
elicitation: {scheme: ranking}
arms:
  - {id: oracle, method: oracle, options: {bins: 6, plausibility: false}}
plans: {per_participant: 2, design: stratified, distance: l1_profile}
questions:
  why: {min_chars: 3, max_chars: 200}
attention_checks:
  - {id: c1, after: plan-1, question: "Pick b", options: [a, b], correct: b}
"""


@pytest.fixture
def small_protocol_file(tmp_path: Path) -> Callable[..., Path]:
    """Write SMALL (with (old, new) replacements) to a protocol file."""

    def make(*edits: tuple[str, str]) -> Path:
        text = SMALL
        for old, new in edits:
            assert old in text, old
            text = text.replace(old, new)
        path = tmp_path / f"small-{len(list(tmp_path.glob('small-*.yaml')))}.yaml"
        path.write_text(text)
        return path

    return make


@pytest.fixture
def serve_app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """Configure the app for a protocol and a fresh database; the database path."""
    from apptest_driver import configure

    def make(protocol: str | Path, db: str | Path | None = None, **env: str) -> Path:
        """``db``: another store (a PostgreSQL URL) instead of a fresh DuckDB file."""
        target = db if db is not None else tmp_path / "web.duckdb"
        # HARE's searches on the app's own threads: a spawned search worker costs a test
        # seconds of start-up (tests/web/test_search_processes.py and every test of a real
        # `serve` cover the worker)
        monkeypatch.setenv(runtime.SEARCH_WORKER_ENV, "0")
        configure(monkeypatch, str(protocol), target, **env)  # type: ignore[arg-type]
        return target  # type: ignore[return-value]

    yield make
    runtime.release_all()


def _chromium() -> Iterator:
    """A headless Debian Chromium (browser_harness), closed when the fixture ends."""
    from browser_harness import launch_chromium
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = launch_chromium(pw)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def browser() -> Iterator:
    """A Chromium for one test."""
    yield from _chromium()


@pytest.fixture(scope="module")
def module_browser() -> Iterator:
    """One Chromium shared by a module's tests."""
    yield from _chromium()
