"""hare-interactive in Japanese, end to end in a real browser at phone width (390 px): the
link asks for Japanese (``?lang=ja``), the page declares it, and every page kind of a HARE
study (consent, scenario, persona, decision, the ranking of what one could change, HARE's
pairwise and accept questions, the rated plans, the debrief) reads in Japanese, amounts in
yen at the translation's declared rate; the answers are stored with their language."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from browser_harness import ARTIFACT_DIR, CHROMIUM, StudyServer
from browser_participant import BrowserParticipant
from test_browser_e2e import PHONE

from data.store import Store
from protocols.definition.schema import load_protocol
from protocols.definition.translation import TRANSLATION_DIR, translators

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium "
                       "(bash scripts/install_chromium.sh)"),
]
PROTOCOL = "hare-interactive"
# English words of the interface and of the HARE and ranking pages: none may be left
ENGLISH = ("Continue", "Plan A", "Plan B", "Question", "Which plan", "Accept this plan",
           "Keep looking", "Move up", "Move down", "I cannot change", "The order above",
           "Please", "Your profile now", "Suggested profile", "Strongly", "years", "months",
           "follows from", "higher", "lower")


@pytest.fixture
def server(trained_home, tmp_path) -> Iterator[StudyServer]:
    with StudyServer(PROTOCOL, tmp_path / "study.duckdb", tmp_path / "serve.log") as srv:
        yield srv


@pytest.mark.e2e  # a whole HARE walk (make test-e2e); the translation file itself:
# tests/protocols/test_translation.py (make test)
def test_hare_interactive_in_japanese_at_phone_width(server, browser) -> None:
    protocol = load_protocol(PROTOCOL)
    ja = translators(protocol, TRANSLATION_DIR)["ja"]
    page = browser.new_page(viewport=PHONE)
    bot = BrowserParticipant(page, protocol, translator=ja)
    page_id, kind = bot.open(server.url + "/?lang=ja")
    bodies: dict[str, str] = {}
    ARTIFACT_DIR.mkdir(parents=True, exist_ok=True)
    while kind not in ("debrief", "end"):
        assert page.evaluate("document.documentElement.lang") == "ja", page_id
        bodies.setdefault(kind, page.inner_text("body"))
        if kind == "hare_choice":
            page.screenshot(path=str(ARTIFACT_DIR / "hare-choice-phone-ja.png"), full_page=True)
        page_id, kind = bot.answer_page(page_id, kind)
    bodies[kind] = page.inner_text("body")
    assert {"consent", "scenario", "persona", "decision", "elicitation_ranking", "hare_choice",
            "plan", "debrief"} <= set(bodies)
    for kind, body in bodies.items():
        left = [w for w in ENGLISH if w in body]
        assert left == [], (kind, left)
        assert "次へ" in body or kind == "debrief", kind
    assert "自動車ローン" in bodies["scenario"]
    assert "上へ" in bodies["elicitation_ranking"] and "変えられない" in \
        bodies["elicitation_ranking"]
    choice = bodies["hare_choice"]
    assert "プランA" in choice and "プランB" in choice
    assert "どちらのプランを実行したいですか。" in choice and re.search(r"質問\d+（最大\d+問）", choice)
    assert "￥" in bodies["persona"] and "$" not in bodies["persona"]
    assert "歳" in bodies["persona"]
    assert "あなたのご回答をもとに作成された" in bodies["debrief"]

    server.stop()
    with Store(server.db, read_only=True) as store:
        langs = store.query("SELECT DISTINCT language FROM responses")
        kinds = {r["page_id"].split("-")[0] for r in store.query(
            "SELECT page_id FROM responses")}
    assert langs == [{"language": "ja"}]
    assert {"elicitation", "hare", "plan"} <= kinds
