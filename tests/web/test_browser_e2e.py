"""End to end in a real browser: `recourse-study serve` on a free port, Debian Chromium via
Playwright, participants clicking through icarma-personalization; then the database is
checked to hold exactly what they answered.

Screenshots of the plan view (phone and desktop width) are saved under
.recourse-study/test-artifacts/.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_harness import ARTIFACT_DIR, CHROMIUM, StudyServer
from browser_participant import BrowserParticipant, Step, button

from data.store import Store
from protocols.definition.schema import load_protocol
from protocols.running.session import hash_token

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium "
                       "(bash scripts/install_chromium.sh)"),
]
PROTOCOL = "icarma-personalization"
PASSWORD = "e2e dashboard pass phrase"
PHONE = {"width": 390, "height": 844}
COMPLETION = "http://127.0.0.1:9/done?cc={code}"  # nothing listens: only the request counts


@pytest.fixture
def server(trained_home, tmp_path) -> Iterator[StudyServer]:
    with StudyServer(PROTOCOL, tmp_path / "study.duckdb", tmp_path / "serve.log",
                     env={"RECOURSE_STUDY_DASHBOARD_PASSWORD": PASSWORD},
                     extra_args=("--completion-url", COMPLETION)) as srv:
        yield srv


def check_database(db: Path, participants: dict[str, list[Step]]) -> None:
    """The database holds exactly these participants (token -> pages answered), each answer
    once and as given, each rating with its plan."""
    with Store(db, read_only=True) as store:
        rows = store.query("SELECT participant_id, token_hash, status, source FROM participants")
        assert len(rows) == len(participants)
        by_hash = {r["token_hash"]: r for r in rows}
        for token, steps in participants.items():
            row = by_hash[hash_token(token)]
            assert (row["status"], row["source"]) == ("complete", "web")
            pid = row["participant_id"]
            got = store.query("SELECT page_id, answer_json FROM responses WHERE participant_id = ?",
                              [pid])
            stored = {r["page_id"]: json.loads(r["answer_json"]) for r in got}
            assert len(got) == len(stored) == len(steps)
            for step in steps:
                assert stored[step.page_id] == step.answer, step.page_id
            ratings = store.query(
                "SELECT r.acceptance, r.action, r.acceptance_why, r.action_why, "
                "r.impossible_json, p.position FROM ratings r JOIN plans p USING "
                "(study_id, participant_id, plan_id) WHERE participant_id = ? "
                "ORDER BY p.position", [pid])
            plan_steps = [s for s in steps if s.kind == "plan"]
            assert len(ratings) == len(plan_steps)
            for r, s in zip(ratings, plan_steps, strict=True):
                a = s.answer
                assert (r["acceptance"], r["action"]) == (a["acceptance"], a["action"])
                assert (r["acceptance_why"], r["action_why"]) == (a["acceptance_why"],
                                                                  a["action_why"])
                assert json.loads(r["impossible_json"]) == a["impossible"]
        dupes = store.query("SELECT participant_id, page_id, count(*) AS n FROM responses "
                            "GROUP BY ALL HAVING n > 1")
        assert dupes == []


def dashboard_refuses_a_wrong_password(server, browser) -> None:
    """The server's dashboard in the browser: a wrong password is refused, the right one
    opens it."""
    page = browser.new_page()
    page.goto(f"{server.url}/dashboard")
    field = page.get_by_label("Dashboard password")
    field.fill("not the password")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("Wrong password.").wait_for()
    assert page.get_by_text("Participants per arm").count() == 0
    field.fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("Participants per arm and status").wait_for()
    page.close()


def test_complete_session_with_reload_and_back_button(server, browser) -> None:
    """A whole icarma-personalization session at phone width: a double click answers one
    page; reload and the back button mid-study land on the same page; the database holds
    exactly this participant's answers; the raw platform ids are stored nowhere. The same
    server's dashboard refuses a wrong password (one server start for both)."""
    ARTIFACT_DIR.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport=PHONE)
    bot = BrowserParticipant(page, load_protocol(PROTOCOL), long_text_on="plan-1")
    pid_raw, study_raw = "5f9d88e2c1b7a6a0d4e3f2b1", "e2e-study-77"
    first = bot.open(f"{server.url}/?PROLIFIC_PID={pid_raw}&STUDY_ID={study_raw}&SESSION_ID=s1")
    assert first == ("consent", "consent")
    assert bot.answer_page(*first) == ("scenario", "scenario")
    # A double click on Continue answers one page, never the next one unseen.
    target = page.locator(button("scenario:submit"))
    target.evaluate("el => Promise.all(el.getAnimations().map(a => a.finished))")
    target.dblclick()
    bot.steps.append(Step("scenario", "scenario", {}, float("nan")))
    assert bot.wait_page("scenario") == ("profile", "persona")
    page.wait_for_timeout(700)
    assert bot.current() == ("profile", "persona")
    where = bot.run(until="plan-1")
    assert where == ("plan-1", "plan")
    # Streamlit scrolls inside the page, so a tall viewport shows the whole plan view.
    page.set_viewport_size({"width": PHONE["width"], "height": 2600})
    page.screenshot(path=str(ARTIFACT_DIR / "plan-view-phone.png"))
    page.set_viewport_size({"width": 1280, "height": 2000})
    page.screenshot(path=str(ARTIFACT_DIR / "plan-view-desktop.png"))
    page.set_viewport_size(PHONE)
    table = page.locator("[data-testid='rs-plan-table']")
    assert table.locator("tr.rs-action").count() >= 1  # actions highlighted
    assert "change" in table.inner_text()
    token = bot.token()
    page.reload()  # a refresh mid-study
    assert bot.wait_page(None) == ("plan-1", "plan") and bot.token() == token
    where = bot.answer_page(*where)
    page.go_back()  # the back button: still the current page, nothing re-answered
    page.wait_for_timeout(500)
    assert bot.wait_page(None) == where
    end = bot.run(start=where)
    assert end == ("debrief", "debrief")
    code = page.locator("[data-testid='rs-completion-code']").inner_text().strip()
    assert len(code) == 10
    assert page.locator(".rs-progress").get_attribute("aria-valuenow") == \
        page.locator(".rs-progress").get_attribute("aria-valuemax")
    # the debrief sends the participant back to the platform with their code
    page.wait_for_event("request", lambda r: r.url == COMPLETION.format(code=code),
                        timeout=15_000)
    dashboard_refuses_a_wrong_password(server, browser)
    server.stop()
    check_database(server.db, {token: bot.steps})
    raw = server.db.read_bytes()
    assert pid_raw.encode() not in raw and study_raw.encode() not in raw
    long = next(s for s in bot.steps if s.page_id == "plan-1").answer["action_why"]
    assert len(long) >= 995 and "overflow" not in long  # shortened to max_chars
    # the paste over the limit was refused with a message saying so
    assert bot.too_long_told == ["This reason is 1,008 characters long; please shorten it to "
                                 "at most 1,000 characters."]


@pytest.mark.slow  # a server start, a SIGKILL and a restart (make test-slow)
def test_server_killed_mid_study_resumes_with_nothing_lost(server, browser) -> None:
    page = browser.new_page(viewport=PHONE)
    bot = BrowserParticipant(page, load_protocol(PROTOCOL))
    # (a completion URL makes the server require a participant id)
    where = bot.run(until="plan-2",
                    start=bot.open(f"{server.url}/?PROLIFIC_PID=killed01&SESSION_ID=s1"))
    token = bot.token()
    server.kill()  # SIGKILL: no clean shutdown
    server.start(same_port=True)
    page.reload()
    assert bot.wait_page(None) == where and bot.token() == token
    assert bot.run(start=where) == ("debrief", "debrief")
    server.stop()
    check_database(server.db, {token: bot.steps})


@pytest.mark.slow  # ten browser contexts at once; tests/protocols/test_concurrency.py is fast
def test_ten_concurrent_participants_lose_and_duplicate_nothing(server, browser) -> None:
    """Ten participants in one browser (separate contexts), their clicks in flight at the
    same time on every step."""
    protocol = load_protocol(PROTOCOL)
    bots = []
    for k in range(10):
        page = browser.new_context(viewport=PHONE).new_page()
        bots.append(BrowserParticipant(page, protocol, long_text_on="plan-2" if k == 0 else None))
    current = {}
    for k, bot in enumerate(bots):
        bot.page.goto(f"{server.url}/?PROLIFIC_PID=concurrent{k:02d}")
    for k, bot in enumerate(bots):
        current[k] = bot.wait_page(None)
    deadline = time.monotonic() + 600
    while any(kind not in ("debrief", "end") for _, kind in current.values()):
        assert time.monotonic() < deadline
        active = [k for k, (_, kind) in current.items() if kind not in ("debrief", "end")]
        for k in active:  # fill every page, then press every Continue together
            page_id, kind = current[k]
            bots[k].steps.append(Step(page_id, kind, bots[k].fill(page_id, kind), float("nan")))
        for k in active:
            bots[k].page.locator(button(f"{current[k][0]}:submit")).click()
        for k in active:
            current[k] = bots[k].wait_page(current[k][0])
    assert all(kind == "debrief" for _, kind in current.values())
    tokens = {bot.token(): bot.steps for bot in bots}
    assert len(tokens) == 10
    server.stop()
    check_database(server.db, tokens)
