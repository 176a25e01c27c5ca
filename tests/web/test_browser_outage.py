"""The server goes away under open participant pages (a real server, a real Chromium): each
page says, in its participant's language, that it is reconnecting and the answers are saved,
and never shows Streamlit's developer text ("Is Streamlit still running? ... streamlit run
yourscript.py", which Streamlit shows to a page opened at localhost, or "Streamlit server is
not responding"); once the server is back, the message goes and the page is there again
(study_app.web.style.outage_notice)."""

from __future__ import annotations

import time

import pytest
from browser_harness import CHROMIUM, StudyServer

from protocols.definition.interface_text import english
from protocols.definition.schema import load_protocol
from protocols.definition.translation import TRANSLATION_DIR, translators

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium "
                       "(bash scripts/install_chromium.sh)"),
]
PROTOCOL = "tominaga-replication"  # offered in English and Japanese
DEVELOPER_TEXT = ("streamlit run", "Is Streamlit still running", "Streamlit server is not "
                  "responding", "Connection error")


def _visible_text(page) -> str:
    return page.evaluate("() => document.body.innerText")


@pytest.mark.e2e  # two server starts under two open pages
def test_an_outage_shows_our_message_in_the_participants_language(trained_home, tmp_path,
                                                                  browser) -> None:
    ja = translators(load_protocol(PROTOCOL), TRANSLATION_DIR)["ja"]
    expected = {"en": (english("outage.title"), english("outage")),
                "ja": (ja.ui("outage.title"), ja.ui("outage"))}
    assert expected["en"] != expected["ja"]
    server = StudyServer(PROTOCOL, tmp_path / "study.duckdb", tmp_path / "serve.log")
    server.start()
    try:
        pages = {"en": browser.new_context().new_page(), "ja": browser.new_context().new_page()}
        # the English page at localhost, where Streamlit's dialog would say "streamlit run"
        pages["en"].goto(f"http://localhost:{server.port}/?PROLIFIC_PID=outage-en&SESSION_ID=s1")
        pages["ja"].goto(f"{server.url}/?PROLIFIC_PID=outage-ja&SESSION_ID=s2&lang=ja")
        for page in pages.values():
            page.get_by_test_id("rs-progress").wait_for(timeout=120_000)
            assert not page.get_by_test_id("rs-outage").is_visible()
        server.stop()
        for language, page in pages.items():
            title, text = expected[language]
            page.get_by_role("dialog", name=title).wait_for(timeout=60_000)
            box = page.get_by_test_id("rs-outage-dialog")
            assert [box.locator(tag).inner_text() for tag in ("h2", "p")] == [title, text]
            time.sleep(1)  # Streamlit retries and draws its dialog again meanwhile
            shown = _visible_text(page)
            assert text in shown
            assert not [t for t in DEVELOPER_TEXT if t.lower() in shown.lower()], shown
        # the dialog closed (its close button): the message stays on the page while the
        # server is away
        pages["en"].get_by_role("dialog").get_by_role("button", name="Close").click()
        pages["en"].get_by_test_id("rs-outage").wait_for(timeout=10_000)
        assert expected["en"][1] in pages["en"].get_by_test_id("rs-outage").inner_text()
        server.start(same_port=True)
        for page in pages.values():
            page.get_by_test_id("stDialog").wait_for(state="detached", timeout=60_000)
            page.get_by_test_id("rs-outage").wait_for(state="hidden", timeout=30_000)
            page.get_by_test_id("rs-progress").wait_for(timeout=30_000)
    finally:
        server.stop()
