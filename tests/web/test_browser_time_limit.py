"""A session past the protocol's time limit, in a real browser (`recourse-study serve`,
Debian Chromium via Playwright, the small web protocol with a limit of a few seconds): the
warning shows once its time has passed; a visit after the limit, and an answer sent after
it, land on the timed-out ending with its code; the store says ``timed_out``."""

from __future__ import annotations

import time

import pytest
from browser_harness import CHROMIUM, StudyServer
from browser_participant import BrowserParticipant, button

from data.store import Store
from protocols.definition.schema import load_protocol
from protocols.running.session import hash_token

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium "
                       "(bash scripts/install_chromium.sh)"),
]
LIMIT = "time_limit: {seconds: 24, warning_seconds: 10}\n" \
        "recruitment: {timed_out: {code: LATE-42}}\narms:"


def _ending(bot: BrowserParticipant) -> tuple[str | None, str]:
    code = bot.page.locator("[data-testid='rs-completion-code']")
    code.wait_for(timeout=bot.timeout_ms)
    return code.get_attribute("data-ending"), code.inner_text().strip()


@pytest.mark.e2e
def test_a_session_past_its_limit_lands_on_the_timed_out_ending(small_protocol_file, browser,
                                                                tmp_path) -> None:
    path = small_protocol_file(("arms:", LIMIT))
    protocol = load_protocol(path)
    srv = StudyServer(str(path), tmp_path / "study.duckdb", tmp_path / "serve.log")
    srv.start()
    try:
        # A comes back after the limit; B answers a page after it.
        a = BrowserParticipant(browser.new_context().new_page(), protocol)
        b = BrowserParticipant(browser.new_context().new_page(), protocol)
        started = time.monotonic()
        assert a.open(f"{srv.url}/") == ("consent", "consent")
        assert b.open(f"{srv.url}/") == ("consent", "consent")
        opened = time.monotonic()  # both started on the server before this
        assert a.answer_page("consent", "consent") == ("screening", "screening")
        if time.monotonic() - started < 9:  # drawn before the warning time (a slow machine
            # may not get here in time; the server's clock started after ``started``)
            assert a.page.locator(".rs-notice", has_text="time limit").count() == 0
        time.sleep(max(0.0, opened + 10.5 - time.monotonic()))  # past the warning time
        a.page.reload()
        assert a.wait_page(None) == ("screening", "screening")
        a.page.locator(".rs-notice", has_text="this study has a time limit").wait_for()
        b.fill("consent", "consent")
        time.sleep(max(0.0, opened + 24.5 - time.monotonic()))  # past the limit
        a.page.reload()
        assert a.wait_page(None) == ("end", "end")
        assert _ending(a) == ("timed_out", "LATE-42")
        assert a.page.get_by_text("time limit, and it has now passed").count() == 1
        b.page.locator(button("consent:submit")).click()  # the answer comes too late
        assert b.wait_page("consent") == ("end", "end")
        assert _ending(b) == ("timed_out", "LATE-42")
        tokens = {a.token(), b.token()}
    finally:
        srv.stop()
    with Store(tmp_path / "study.duckdb", read_only=True) as store:
        rows = store.query("SELECT token_hash, status, current_page FROM participants")
        assert {r["token_hash"] for r in rows} == {hash_token(t) for t in tokens}
        assert {(r["status"], r["current_page"]) for r in rows} == {("timed_out", "end")}
        late = store.query("SELECT count(*) AS n FROM responses r JOIN participants p USING "
                           "(study_id, participant_id) WHERE p.token_hash = ?",
                           [hash_token(b.token())])
        assert late[0]["n"] == 0  # B's late consent was not stored
