"""A new page kind is one class plus one renderer (tests/web/toy_page_kind.py, added through
``$RECOURSE_STUDY_PAGE_KINDS`` as docs/adding-a-page-kind.md says): the synthetic participants
answer it, the load participant answers it on a served app, a person answers it in Chromium,
and every answer is stored; a kind lacking a renderer or a load answer is an error."""

from __future__ import annotations

import asyncio
import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import toy_page_kind  # registers the toy kind in this process too
from browser_harness import CHROMIUM, StudyServer
from browser_participant import BrowserParticipant, Step, key_class
from variants import TWO_WEEKS

from data.store import Store
from protocols.definition.schema import load_protocol, resolve
from protocols.running import pages as pg
from study_app.extensions import PAGE_KINDS_ENV
from study_app.simulator import simulate
from study_app.web import registry
from study_app.web.load.participant import LoadParticipant, UnknownPageKindError

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def toy_protocol(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("toy") / "toy-kind.yaml"
    # the reference study's protocol (pool plans: quick to make) under another id, in one
    # session (its second one opens at once)
    text = resolve("tominaga-replication").read_text(encoding="utf-8")
    path.write_text(text.replace("id: tominaga-replication", "id: toy-kind")
                    .replace(TWO_WEEKS, "delay_seconds: 0"))
    return path


def _toy_answers(db: Path) -> list[dict]:
    with Store(db, read_only=True) as store:
        return [json.loads(r["answer_json"]) for r in store.query(
            "SELECT answer_json FROM responses WHERE kind = 'toy_familiarity'")]


def test_the_registries_know_every_kind() -> None:
    assert registry.missing_views() == []
    assert "toy_familiarity" in pg.PAGE_KINDS and "toy_familiarity" in registry.LOAD_ANSWERS


def test_synthetic_participants_answer_the_new_kind(toy_protocol, tmp_path) -> None:
    summary = simulate(toy_protocol, tmp_path / "sim.duckdb", 3)
    assert summary["complete"] == 3
    assert sorted(a["level"] for a in _toy_answers(tmp_path / "sim.duckdb")) == [1, 2, 3]  # seq 0, 1, 2


def test_an_unknown_kind_is_an_error_never_an_empty_answer(toy_protocol) -> None:
    bot = LoadParticipant(1, load_protocol(toy_protocol), "http://127.0.0.1:9")

    async def choose(kind: str) -> None:
        await bot._choose(None, None, "scenario", kind)  # type: ignore[arg-type]

    with pytest.raises(UnknownPageKindError, match="unknown page kind 'no_such_kind'"):
        asyncio.run(choose("no_such_kind"))
    registry.LOAD_ANSWERS.pop("toy_familiarity")
    try:
        assert registry.missing_views() == [
            "page kind 'toy_familiarity' has no load answer (@load_answers)"]
        with pytest.raises(UnknownPageKindError, match="has no load answer"):
            asyncio.run(choose("toy_familiarity"))
    finally:
        registry.LOAD_ANSWERS["toy_familiarity"] = toy_page_kind.load_familiarity


@pytest.mark.e2e  # a server and Chromium (make test-e2e); the simulator walks the kind above
@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium")
def test_load_participant_and_a_person_in_chromium_answer_the_new_kind(
        toy_protocol, tmp_path, browser) -> None:
    protocol = load_protocol(toy_protocol)
    env = {PAGE_KINDS_ENV: "toy_page_kind",
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    srv = StudyServer(str(toy_protocol), tmp_path / "study.duckdb", tmp_path / "serve.log",
                      env=env)
    srv.start()
    try:
        load = LoadParticipant(1, protocol, srv.url, seed=3)
        with ThreadPoolExecutor(1) as pool:  # Playwright's loop runs in this thread
            pool.submit(asyncio.run, load.run()).result()
        assert load.end_kind == "debrief"
        assert "toy_familiarity" in [s.kind for s in load.steps]
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        bot = BrowserParticipant(page, protocol)
        pid, kind = bot.run(until="scenario", start=bot.open(srv.url))
        assert kind == "toy_familiarity"
        assert "How familiar are you with credit applications?" in page.inner_text("body")
        page.locator(f"{key_class(f'{pid}:level')} [data-testid='stRadioOption']").nth(3).click()
        bot.steps.append(Step(pid, kind, {"level": 4}, float("nan")))
        assert bot.submit(pid)[0] == "profile"
    finally:
        srv.stop()
    assert sorted(a["level"] for a in _toy_answers(srv.db)) == sorted(
        [load.expected["scenario"]["level"], 4])
