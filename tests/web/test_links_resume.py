"""Participant links: resume by token / platform id + recruitment session, hashed ids,
tampered links, the back button and two tabs of one participant (AppTest, in-process)."""

from __future__ import annotations

import hashlib

import pytest
from apptest_driver import AppDriver, chosen_answer

from protocols.definition.schema import load_protocol
from study_app.web import links
from study_app.web.participant import MOVED_ON

PID = "60a7c2b1e4d3f2a1b0c9d8e7"


def _decide(params: dict[str, list[str]], remembered: str | None = None,
            require_id: bool = False) -> links.LinkAction:
    return links.decide(params, remembered, links.LinkParams(require_id=require_id))


def test_link_rules() -> None:
    token = "A" * 32
    assert _decide({"p": [token]}) == links.LinkAction("resume", token=token)
    assert _decide({"p": [token]}, require_id=True).kind == "resume"  # the resume link
    assert _decide({}, remembered=token) == links.LinkAction("resume", token=token)
    a = _decide({"PROLIFIC_PID": [PID], "STUDY_ID": ["s"], "SESSION_ID": ["x"], "other": ["y"]})
    assert (a.kind, a.external_id, a.session, a.extra) == (
        "start", PID, "x", {"STUDY_ID": "s", "SESSION_ID": "x"})
    assert _decide({}) == links.LinkAction("start")
    for no_id in ({}, {"SESSION_ID": ["x"]}, {"PROLIFIC_PID": ["  "]}):
        with pytest.raises(links.LinkError, match="recruitment platform"):
            _decide(no_id, require_id=True)
    # a damaged token with the platform id falls back to the id, with a note
    b = _decide({"p": ["bad token!"], "PROLIFIC_PID": [PID]})
    assert b.kind == "start" and b.external_id == PID and b.note
    for bad in ({"p": ["short"]}, {"p": ["<script>" * 3]}, {"p": ["A" * 500]},
                {"PROLIFIC_PID": ["x" * 129]}, {"PROLIFIC_PID": ["a\x00b"]},
                {"PROLIFIC_PID": ["a", "b"]}, {"STUDY_ID": ["s\nt"]}):
        with pytest.raises(links.LinkError, match="not valid"):
            _decide(bad)
    assert _decide({"PROLIFIC_PID": [PID, PID]}).external_id == PID  # repeated, same value


@pytest.fixture
def small(serve_app, small_protocol_file):
    path = small_protocol_file()
    serve_app(path)
    return load_protocol(path)


def _advance(driver: AppDriver, protocol, n: int) -> None:
    for _ in range(n):
        page = driver.page()
        driver.answer(page, chosen_answer(page, protocol))


def test_resume_by_token_and_by_platform_id_at_the_exact_page(small) -> None:
    first = AppDriver({"PROLIFIC_PID": PID, "STUDY_ID": "study-9", "SESSION_ID": "sess-3"})
    _advance(first, small, 4)
    where, token, who = first.page().id, first.token, first.session.participant_id
    assert where == "decision"
    again = AppDriver({"p": token})  # a refresh / a new browser with the same link
    assert again.shown_page() == where and again.session.participant_id == who
    # The invitation link again, without a token: the same participant under an additional
    # token; the first tab's token still works.
    by_id = AppDriver({"PROLIFIC_PID": PID, "STUDY_ID": "study-9", "SESSION_ID": "sess-3"})
    assert by_id.shown_page() == where and by_id.session.participant_id == who
    assert by_id.token != token
    first.at.run()
    assert first.shown_page() == where and first.session.participant_id == who
    # The id with another recruitment session, or none: refused, nothing of the study shown
    for query in ({"PROLIFIC_PID": PID, "SESSION_ID": "sess-other"}, {"PROLIFIC_PID": PID}):
        intruder = AppDriver(query)
        assert intruder.errors() == [links.ID_REFUSED]
        assert intruder.shown_page() is None and "p" not in intruder.at.query_params
        assert not intruder.at.radio and not intruder.at.button
    study = first.study
    assert study.store.counts()["participants"] == 1
    ev = study.store.query("SELECT detail_json FROM events WHERE event = 'recruitment'")
    assert ev, "the STUDY_ID / SESSION_ID hashes are recorded"
    detail = ev[0]["detail_json"]
    assert "study-9" not in detail and "sess-3" not in detail
    assert study.hash_external("study-9") in detail
    row = study.store.query("SELECT external_id_hash FROM participants")[0]
    assert row["external_id_hash"] == study.hash_external(PID) != \
        hashlib.sha256(PID.encode()).hexdigest()


def test_back_button_keeps_the_current_page(small) -> None:
    """The address without ``p`` (browser back) in the same browser session resumes."""
    driver = AppDriver()
    _advance(driver, small, 3)
    token, where = driver.token, driver.page().id
    del driver.at.query_params["p"]
    driver.at.run()
    assert driver.shown_page() == where and driver.token == token
    assert driver.study.store.counts()["participants"] == 1


@pytest.mark.parametrize("query", [
    {"p": "not-a-token"},
    {"p": "A" * 32},  # well-formed but unknown
    {"PROLIFIC_PID": "x" * 300},
    {"PROLIFIC_PID": "<b>x</b>'; DROP TABLE participants;--\x07"},
])
def test_tampered_links_are_refused_without_creating_anyone(small, query) -> None:
    driver = AppDriver(query)
    assert not driver.at.exception
    assert any("not valid" in e for e in driver.errors())
    assert driver.shown_page() is None
    assert driver.study.store.counts()["participants"] == 0


def test_damaged_token_with_platform_id_finds_the_participant(small) -> None:
    first = AppDriver({"PROLIFIC_PID": PID, "SESSION_ID": "s-1"})
    _advance(first, small, 2)
    where, who = first.page().id, first.session.participant_id
    again = AppDriver({"PROLIFIC_PID": PID, "SESSION_ID": "s-1", "p": "A" * 32})
    assert again.shown_page() == where and again.session.participant_id == who
    assert "damaged" in again.texts()
    stranger = AppDriver({"PROLIFIC_PID": PID, "SESSION_ID": "s-2", "p": "A" * 32})
    assert stranger.errors() == [links.ID_REFUSED] and stranger.shown_page() is None


def test_two_tabs_one_answer(small) -> None:
    """Tab B answers a page tab A already answered: B is told, A's answer is kept, once."""
    tab_a = AppDriver()
    tab_b = AppDriver({"p": tab_a.token})
    consent = tab_a.page()
    tab_a.answer(consent, {"agree": True})
    assert tab_a.shown_page() != "consent"
    tab_b._fill(consent, {"agree": False})  # B still shows the consent form
    tab_b.at.button(key="consent:submit").click().run()
    assert not tab_b.at.exception
    assert MOVED_ON in tab_b.texts()
    assert tab_b.shown_page() == tab_a.shown_page()
    assert tab_b.stored("consent") == {"agree": True}
    assert tab_b.session.status == "active"
    n = tab_a.study.store.query("SELECT count(*) AS n FROM responses WHERE page_id = 'consent'")
    assert n[0]["n"] == 1


def _double_submit_app(token: str) -> None:
    from study_app.web import participant, runtime

    _, study = runtime.current_study()
    session = study.resume(token)
    page = session.current_page()
    assert participant._submit(session, page, {"agree": True})
    assert participant._submit(session, page, {"agree": False})  # the same page again


def test_double_submit_stores_the_first_answer_once(small) -> None:
    from streamlit.testing.v1 import AppTest

    driver = AppDriver()
    at = AppTest.from_function(_double_submit_app, args=(driver.token,), default_timeout=30)
    at.run()
    assert not at.exception and not at.error
    assert driver.stored("consent") == {"agree": True}
    assert driver.session.status == "active" and driver.page().id == "screening"
    n = driver.study.store.query("SELECT count(*) AS n FROM responses")[0]["n"]
    assert n == 1


def test_require_id_refuses_links_without_an_id_and_creates_nobody(serve_app,
                                                                   small_protocol_file) -> None:
    from study_app.web.runtime import REQUIRE_ID_ENV

    serve_app(small_protocol_file(), **{REQUIRE_ID_ENV: "1"})
    for query in ({}, {"SESSION_ID": "s"}, {"STUDY_ID": "x"}):
        bare = AppDriver(query)
        assert bare.errors() == [links.NEED_ID] and bare.shown_page() is None
    assert bare.study.store.counts()["participants"] == 0
    with_id = AppDriver({"PROLIFIC_PID": PID, "SESSION_ID": "s"})
    assert with_id.shown_page() == "consent"
    assert AppDriver({"p": with_id.token}).shown_page() == "consent"  # the resume link
    assert with_id.study.store.counts()["participants"] == 1


def test_id_pattern_refuses_made_up_ids(serve_app, small_protocol_file) -> None:
    serve_app(small_protocol_file(("seed: 5", "seed: 5\nrecruitment: {id_pattern: '[0-9a-f]{24}'}")))
    made_up = AppDriver({"PROLIFIC_PID": "not-a-prolific-id"})
    assert made_up.errors() == [links.BAD_ID] and made_up.shown_page() is None
    assert made_up.study.store.counts()["participants"] == 0
    assert AppDriver({"PROLIFIC_PID": PID}).shown_page() == "consent"


def test_a_failing_page_shows_an_error_id_not_the_exception(small, monkeypatch) -> None:
    from study_app.web.registry import RENDERERS

    def fail(page):
        raise RuntimeError("SECRET internals at /srv/x.py")

    monkeypatch.setitem(RENDERERS, "consent", fail)
    driver = AppDriver()
    assert not driver.at.exception
    (message,) = driver.errors()
    assert "error id" in message and "SECRET" not in message and "RuntimeError" not in message
