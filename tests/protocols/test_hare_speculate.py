"""HARE's start computed from a draft of the elicitation answer (what the ranking widget shows
before Continue, ``Study.speculate``): the start taken when the answer given is the draft's,
the same questions and plans as without it, nothing stored by a draft, and a participant's
newer draft replacing an earlier one that has not started."""

from __future__ import annotations

import threading

from data.store import Store
from protocols.definition.schema import parse_protocol
from protocols.running.prefetch import Prefetcher
from protocols.running.session import Study
from tests.protocols.conftest import scripted_answer
from tests.protocols.test_hare_prefetch import _record, _started


def _reversed(answer: dict) -> dict:
    """Another complete ranking: the scripted one turned around."""
    ranks = answer["answers"]
    return {"answers": {k: len(ranks) + 1 - v for k, v in ranks.items()}}


def _walk(study: Study, n: int, draft: bool) -> list[bool]:
    """n participants through the study; with ``draft``, the elicitation page gets a draft of
    another ranking, then one of the answer it is given (each started before the answer, as
    a participant who pauses before Continue). Returns what ``speculate`` said per draft."""
    said = []
    for _ in range(n):
        s = study.start()
        page = s.current_page()
        while not page.terminal:
            answer = scripted_answer(page)
            if draft and page.kind.startswith("elicitation_"):
                said += [s.speculate(page.id, _reversed(answer)), s.speculate(page.id, answer)]
                _started(study.interactive.prefetcher)
            elif draft:  # a draft of any other page starts nothing
                said.append(s.speculate(page.id, answer))
            page = s.submit(page.id, answer)
    return said


def test_a_drafted_start_is_taken_and_changes_nothing(tmp_path, monkeypatch, small_hare):
    from protocols.running import interactive

    monkeypatch.setattr(interactive, "DRAFT_S", 0.0)
    proto = parse_protocol(small_hare("hare-draft", 5))
    runs = {}
    for draft in (False, True):
        with Store(tmp_path / f"{draft}.duckdb") as store:
            study = Study(proto, store, prefetch=True)
            # the questions' prefetches are left out (their reading time is never reached):
            # every hit below is a drafted start
            monkeypatch.setattr(interactive, "READING_S", 3600.0)
            study.interactive.prefetcher = Prefetcher(workers=8, busy=lambda: False)
            said = _walk(study, 1, draft)
            runs[draft] = _record(store)
            if draft:
                # the two elicitation drafts start something, no other page's draft does
                assert said.count(True) == 2 and len(said) > 2
                assert study.interactive.prefetcher.hits == 1  # the start was taken
            else:
                assert study.interactive.prefetcher.hits == 0
    assert runs[True] == runs[False]  # the same questions, answers and plans
    assert {p["selection"] for p in runs[True][1]} == {"hare_final", "hare_base"}


def test_a_draft_starts_nothing_it_should_not(tmp_path, small_hare):
    proto = parse_protocol(small_hare("hare-draft-no", 5))
    with Store(tmp_path / "s.duckdb") as store:
        plain = Study(proto, store)  # no prefetching (the simulator, researcher tools)
        s = plain.start()
        assert not s.speculate(s.current_page().id, scripted_answer(s.current_page()))
    with Store(tmp_path / "p.duckdb") as store:
        study = Study(proto, store, prefetch=True)
        s = study.start()
        page = s.current_page()
        while not page.kind.startswith("elicitation_"):
            page = s.submit(page.id, scripted_answer(page))
        answer = scripted_answer(page)
        assert not s.speculate("consent", answer)  # not the current page
        broken = {"answers": dict.fromkeys(answer["answers"], 1)}  # every rank 1: invalid
        assert not s.speculate(page.id, broken)
        before = {t: len(store.table(t)) for t in ("responses", "elicitations", "events")}
        assert s.speculate(page.id, answer)
        assert {t: len(store.table(t)) for t in before} == before  # a draft stores nothing
        assert s.current_page().id == page.id


def test_a_draft_in_a_study_without_an_interactive_arm_starts_nothing(tmp_path) -> None:
    from tests.protocols.test_realistic_plans import PILOT

    with Store(tmp_path / "o.duckdb") as store:
        study = Study(parse_protocol(PILOT), store, prefetch=True)  # ranking, Oracle and pool
        s = study.start()
        page = s.current_page()
        while not page.kind.startswith("elicitation_"):
            page = s.submit(page.id, scripted_answer(page))
        assert not s.speculate(page.id, scripted_answer(page))
        assert study.interactive.prefetcher._futures == {}


def test_a_newer_draft_replaces_an_earlier_one_not_started():
    pf = Prefetcher(workers=1)
    ran: list[str] = []
    pf.schedule("first", lambda: ran.append("first") or "first", delay=0.2, group="p1")
    pf.schedule("other person", lambda: "other", delay=0.2, group="p2")
    pf.schedule("second", lambda: ran.append("second") or "second", delay=0.2, group="p1")
    _started(pf)
    assert pf.take("second") == "second" and pf.take("other person") == "other"
    assert pf.take("first") is None and ran == ["second"]  # dropped before it started
    began, release = threading.Event(), threading.Event()
    pf.schedule("running", lambda: began.set() or (release.wait(5) and "running"), group="p1")
    assert began.wait(5)
    pf.schedule("after", lambda: "after", group="p1")  # the running one is not stopped
    release.set()
    assert pf.take("running") == "running" and pf.take("after") == "after"
    pf.schedule("again", lambda: "again", delay=0.05, group="p1")
    pf.schedule("again", lambda: "twice", delay=0.05, group="p1")  # the same draft: kept once
    _started(pf)
    assert pf.take("again") == "again"
