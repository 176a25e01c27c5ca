"""The participant app (AppTest, in-process): a full flow per shipped protocol and every page
kind, with what the database holds compared to what the participant entered."""

from __future__ import annotations

import json

import pytest
from apptest_driver import REASON, AppDriver, chosen_answer
from variants import with_delay

from protocols.definition.schema import load_protocol, shipped_protocols
from protocols.running import display
from protocols.running import pages as pg
from study_app.web import links


def _check_stored(driver: AppDriver, done: list[tuple[pg.Page, dict]]) -> None:
    """Every answer given is stored exactly once, as the session's validated answer."""
    study = driver.study
    pid = driver.session.participant_id
    rows = study.store.query(
        "SELECT page_id, answer_json FROM responses WHERE study_id = ? AND participant_id = ?",
        [study.study_id, pid])
    stored = {r["page_id"]: json.loads(r["answer_json"]) for r in rows}
    assert len(rows) == len(stored) == len(done)
    for page, answer in done:
        expected = pg.validate_answer(page, answer).model_dump(mode="json")
        assert stored[page.id] == expected, page.id
    ratings = study.store.query(
        "SELECT plan_id, acceptance, action, acceptance_why, action_why, impossible_json "
        "FROM ratings WHERE study_id = ? AND participant_id = ?", [study.study_id, pid])
    plan_answers = {p.payload.plan_id: a for p, a in done if p.kind == "plan"}
    assert len(ratings) == len(plan_answers)
    for r in ratings:
        a = plan_answers[r["plan_id"]]
        assert (r["acceptance"], r["action"]) == (a["acceptance"], a["action"])
        assert (r["acceptance_why"], r["action_why"]) == (a["acceptance_why"], a["action_why"])
        assert json.loads(r["impossible_json"]) == a["impossible"]


@pytest.mark.parametrize("protocol_id", shipped_protocols())
def test_full_flow_of_each_shipped_protocol(protocol_id, trained_home, serve_app,
                                            tmp_path) -> None:
    db = serve_app(with_delay(protocol_id, tmp_path))
    protocol = load_protocol(protocol_id)
    driver = AppDriver({"PROLIFIC_PID": "5f1e0c2a9b8d7e6f5a4b3c2d", "STUDY_ID": "st-1"})
    done = driver.walk(protocol)
    kinds = {p.kind for p, _ in done}
    assert {"consent", "scenario", "decision", "plan"} <= kinds
    if protocol.attention_checks:
        assert "attention" in kinds
    if protocol.elicitation.scheme != "none":
        assert f"elicitation_{protocol.elicitation.scheme}" in kinds
    if protocol.interactive:
        assert {"hare_choice", "hare_accept"} <= kinds
        hare_pages = sum(p.kind.startswith("hare_") for p, _ in done)
        assert driver.study.store.counts()["comparisons"] == hare_pages
        (budget,) = {a.options["budget"] for a in protocol.arms if a.method == "hare"}
        choices = [p for p, _ in done if p.kind == "hare_choice"]
        # comparisons and acceptance questions together within the budget (the HARE paper's
        # Algorithm 4 asks the acceptance question after every iteration: at most B)
        assert 0 < len(choices) and hare_pages <= budget
        assert {p.payload.budget for p in choices} == {budget}
    final = driver.page()
    assert final.kind == "debrief" and driver.session.status == "complete"
    html = driver.texts()
    assert final.payload.completion_code in html
    assert 'aria-valuenow="' + str(final.progress.total) + '"' in html  # 100% at the end
    _check_stored(driver, done)
    counts = driver.study.store.counts()
    assert counts["participants"] == 1
    assert counts["ratings"] == sum(p.kind == "plan" for p, _ in done)
    # the raw platform ids are nowhere in the database
    raw = db.read_bytes()
    assert b"5f1e0c2a9b8d7e6f5a4b3c2d" not in raw and b"st-1" not in raw


def test_every_page_kind_has_a_renderer() -> None:
    from study_app.web.renderers import RENDERERS

    assert set(RENDERERS) == set(pg.PAGE_KINDS)


def test_own_profile_entry_and_impossible_items(serve_app, tmp_path) -> None:
    """tominaga-replication (in one session): screening (the income bracket), the profile
    form (16 items; the income is the bracket's midpoint, the loan one third of it), plan
    pages with per-item impossibility and reasons (markup, SQL and emoji kept as plain
    text)."""
    serve_app(with_delay("tominaga-replication", tmp_path))
    protocol = load_protocol("tominaga-replication")
    driver = AppDriver()
    done = driver.walk(protocol)
    entry = next(a for p, a in done if p.kind == "profile_entry")
    stored = driver.study.store.query("SELECT display_json, source FROM profiles")[0]
    # the hidden rule rejects every entered profile: nobody is switched to a persona
    screened = next(a for p, a in done if p.kind == "screening")["answers"]
    income = protocol.screening[[q.id for q in protocol.screening].index("income")]
    x = display.profile_from_answer(driver.study.scenario, {
        **entry["values"], "income": income.bracket_value(screened["income"])})
    assert not driver.study.context.approves(x)
    assert protocol.profile.on_approved == "end" and stored["source"] == "own"
    shown = json.loads(stored["display_json"])
    # not asked: the income is the screening bracket's midpoint, the loan one third of it
    assert "loan_amount" not in entry["values"] and "income" not in entry["values"]
    assert set(shown) == set(entry["values"]) | {"loan_amount", "income"}
    assert float(shown["loan_amount"].split()[0]) == pytest.approx(
        float(shown["income"].split()[0]) / 3, abs=0.01)
    reasons = driver.study.store.query("SELECT acceptance_why FROM ratings")
    assert {r["acceptance_why"] for r in reasons} == {REASON}
    assert any(p.kind == "plan" and p.payload.impossible for p, _ in done)


@pytest.mark.parametrize("scheme", ["binary", "likert"])
def test_binary_and_likert_elicitation(scheme, serve_app, small_protocol_file) -> None:
    path = small_protocol_file(("scheme: ranking", f"scheme: {scheme}"))
    serve_app(path)
    driver = AppDriver()
    done = driver.walk(load_protocol(path))
    assert f"elicitation_{scheme}" in {p.kind for p, _ in done}
    _check_stored(driver, done)
    elic = driver.study.store.query("SELECT scheme, answer_json FROM elicitations")[0]
    assert elic["scheme"] == scheme


def test_declined_and_screened_out_end_pages(serve_app, small_protocol_file) -> None:
    path = small_protocol_file()
    serve_app(path)
    protocol = load_protocol(path)
    declined = AppDriver()
    declined.walk(protocol, agree=False)
    assert declined.page().kind == "end" and declined.session.status == "declined"
    assert "did not agree" in declined.texts()
    out = AppDriver()
    out.walk(protocol, eligible=False)
    assert out.page().kind == "end" and out.session.status == "screened_out"
    assert "not eligible" in out.texts()
    assert declined.session.participant_id != out.session.participant_id


def test_missing_answers_and_too_short_reasons_store_nothing(serve_app,
                                                              small_protocol_file) -> None:
    path = small_protocol_file()
    serve_app(path)
    protocol = load_protocol(path)
    driver = AppDriver()
    page = driver.page()
    driver.at.button(key="consent:submit").click().run()  # nothing chosen
    assert "Missing" in " ".join(driver.errors()) and driver.page().id == "consent"
    assert driver.stored("consent") is None
    while page.kind != "plan":
        driver.answer(page, chosen_answer(page, protocol))
        page = driver.page()
    answer = chosen_answer(page, protocol)
    driver._fill(page, {**answer, "action_why": "ab"})  # min_chars is 3
    driver.at.button(key=f"{page.id}:submit").click().run()
    assert "at least 3 characters" in " ".join(driver.errors())
    assert driver.page().id == page.id and driver.stored(page.id) is None


def _tampered_submit_app(token: str, page_id: str, answer_json: str) -> None:
    """Submit an answer the form could never produce (a tampered request) through the
    participant controller."""
    import json as js

    from protocols.running.pages import Page
    from study_app.web import participant, runtime

    _, study = runtime.current_study()
    session = study.resume(token)
    page: Page = session.current_page()
    assert page.id == page_id
    participant._submit(session, page, js.loads(answer_json))


def test_tampered_oversized_or_mistyped_answers_get_a_message(serve_app,
                                                              small_protocol_file) -> None:
    """The browser enforces max_chars and widget types; a tampered request still gets the
    session's message, no crash, and nothing stored."""
    from streamlit.testing.v1 import AppTest

    path = small_protocol_file()
    serve_app(path)
    protocol = load_protocol(path)
    driver = AppDriver()
    page = driver.page()
    while page.kind != "plan":
        driver.answer(page, chosen_answer(page, protocol))
        page = driver.page()
    good = chosen_answer(page, protocol)
    for bad, message in [
        ({**good, "action_why": "x" * 5000}, "at most 200 characters"),
        ({**good, "acceptance": "7"}, "acceptance"),
        ({**good, "acceptance": 9}, "less than or equal to 7"),
        ({**good, "impossible": {"gender": True}}, "impossibility item"),
        ({**good, "extra": "<script>alert(1)</script>"}, "extra"),
    ]:
        at = AppTest.from_function(_tampered_submit_app, args=(
            driver.token, page.id, json.dumps(bad)), default_timeout=30).run()
        assert not at.exception
        shown = " ".join(e.value for e in at.error)
        assert "could not be saved" in shown and message in shown, shown
    assert driver.stored(page.id) is None and driver.page().id == page.id
    driver.answer(page, good)  # the real answer still goes through
    assert driver.stored(page.id) is not None


def test_debrief_links_back_to_the_platform_with_the_code(serve_app, small_protocol_file) -> None:
    from study_app.web.runtime import COMPLETION_URL_ENV

    path = small_protocol_file()
    serve_app(path, **{COMPLETION_URL_ENV: "https://app.example.org/done?cc={code}&x=1"})
    assert AppDriver().errors() == [links.NEED_ID]  # a completion URL requires an id
    driver = AppDriver({"PROLIFIC_PID": "p-1", "SESSION_ID": "s-1"})
    driver.walk(load_protocol(path))
    debrief = driver.page()
    assert debrief.kind == "debrief"
    (link,) = driver.at.get("link_button")
    assert link.proto.url == f"https://app.example.org/done?cc={debrief.payload.completion_code}&x=1"
    assert "window.location.assign" in driver.texts()  # the automatic redirect


def test_the_ranking_shown_before_continue_starts_hares_search(trained_home, serve_app,
                                                                 tmp_path) -> None:
    """The ranking widget reruns the page on every move: each run offers the order shown as
    a draft, HARE's start is computed from it in the background, and Continue takes it (the
    stored answer and the first question as without the draft)."""
    serve_app(with_delay("hare-interactive", tmp_path))
    protocol = load_protocol("hare-interactive")
    driver = AppDriver()
    page = driver.page()
    while not page.kind.startswith("elicitation_"):
        driver.answer(page, chosen_answer(page, protocol))
        page = driver.page()
    prefetcher = driver.study.interactive.prefetcher
    driver._fill(page, chosen_answer(page, protocol))  # two moves, two drafts
    drafts = list(prefetcher._futures.values())
    assert drafts and all(f.result(timeout=120) is not None for f in drafts if not f.cancelled())
    hits = prefetcher.hits
    driver.at.button(key=f"{page.id}:submit").click().run()
    # HARE's first question: a pairwise choice, or its accept question when every pair of
    # the first round read the same on the page (such pairs are not asked)
    assert not driver.errors() and driver.page().kind in ("hare_choice", "hare_accept")
    assert prefetcher.hits == hits + 1  # the start computed from the draft was taken
    assert driver.stored(page.id) == pg.validate_answer(
        page, chosen_answer(page, protocol)).model_dump(mode="json")
