"""tominaga-replication in Japanese, end to end in a real browser at phone width (390 px):
the recruitment link asks for Japanese (``?lang=ja``), the page declares it (``<html
lang="ja">``), every page of both sessions reads in Japanese (the pause between them too,
the time it opens formatted for Japanese; the age's unit and an out-of-range age's message
too, which Continue respects), amounts
are yen formatted for Japanese, the answers are stored as given (the protocol's options)
with their language. The same server refuses a link asking for a language the study is
not offered in (a clear page, nothing stored) and lets a participant choose Japanese on the
first page.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from browser_harness import ARTIFACT_DIR, CHROMIUM, StudyServer
from browser_participant import BrowserParticipant
from test_browser_e2e import PHONE
from variants import with_delay

from data.store import Store
from engine.scenarios import get_scenario
from protocols.definition.schema import load_protocol
from protocols.definition.translation import TRANSLATION_DIR, translators
from protocols.running.session import hash_token

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium "
                       "(bash scripts/install_chromium.sh)"),
]
PROTOCOL = "tominaga-replication"
PROFILE = {"residence": "Other than Tokyo", "housing": "Rental housing",
           "education": "University (bachelor)", "service_years": "3-5 years",
           "working_hours": "6-8 hours", "income": 4.2}  # income: the bracket to choose
DELAY = 15.0  # seconds between the sessions (two weeks in the protocol)


@pytest.fixture
def server(tmp_path) -> Iterator[StudyServer]:
    variant = with_delay(PROTOCOL, tmp_path, DELAY)
    (tmp_path / "translations").mkdir()  # the translations next to the protocol's file
    shutil.copy(TRANSLATION_DIR / f"{PROTOCOL}.ja.yaml", tmp_path / "translations")
    with StudyServer(variant, tmp_path / "study.duckdb", tmp_path / "serve.log") as srv:
        yield srv


@pytest.mark.e2e  # a two-session walk (make test-e2e); the translations themselves:
# tests/protocols/test_translation.py (make test)
def test_tominaga_replication_in_japanese_at_phone_width(server, browser) -> None:
    protocol = load_protocol(PROTOCOL)
    ja = translators(protocol, TRANSLATION_DIR)["ja"]
    scenario = get_scenario("tominaga")
    defaults = {f.name: f.levels[0] for f in scenario.features if f.levels}

    # a link asking for a language the study is not offered in: a clear page, no session
    refused = browser.new_page(viewport=PHONE)
    refused.goto(server.url + "/?lang=fr")
    refused.get_by_text("not offered in (fr)", exact=False).first.wait_for(timeout=60_000)
    assert "日本語 (ja)" in refused.inner_text("body")
    assert refused.locator(".rs-progress").count() == 0

    page = browser.new_page(viewport=PHONE)
    bot = BrowserParticipant(page, protocol, profile={**defaults, **PROFILE}, translator=ja)
    start = bot.open(server.url + "/?lang=ja")
    assert start == ("screening", "screening")  # screened before consent, as the paper
    assert page.evaluate("document.documentElement.lang") == "ja"  # WCAG 3.1.1
    age = page.locator(".st-key-screening-age")
    assert "(歳)" in age.inner_text() and "years old" not in age.inner_text()
    # an age out of range: our message in Japanese beside the question, and 次へ holds
    age.locator("input").fill("7")
    age.locator("input").press("Tab")
    bot._press("screening")
    told = page.locator("[data-testid='rs-missing']").filter(
        has_text="15～100の数値を入力してください。")
    told.first.wait_for(timeout=30_000)
    assert bot.current() == ("screening", "screening")
    body = page.inner_text("body")
    assert "あなたのご職業を教えてください。" in body and "会社員（正社員）" in body
    assert "400万～500万円未満" in body and "ローンは利用していない" in body
    assert "Please" not in body and "Continue" not in body
    assert bot.run(until="consent", start=start) == ("consent", "consent")
    assert bot.steps[0].answer["answers"]["income"] == "4M - 5M"  # stored as the protocol's
    body = page.inner_text("body")
    assert "最大5件のプラン" in body and "参加に同意します" in body
    assert "調査へのご協力のお願い" in body and "I agree" not in body
    assert bot.run(until="profile") == ("profile", "profile_entry")
    page.set_viewport_size({"width": PHONE["width"], "height": 2600})
    for label in ("居住都道府県", "最終学歴", "TOEICの最高スコア"):
        assert page.get_by_text(label).count() >= 1, label
    assert bot.run() == ("pause", "pause")
    page.set_viewport_size(PHONE)
    # the body's text once the page's paragraphs are laid out (read once without them)
    page.get_by_text("審査結果は2週間後にお知らせします。", exact=False).wait_for(timeout=30_000)
    body = page.inner_text("body")
    assert "審査結果は2週間後にお知らせします。" in body and "年" in body.split("以降に")[0]
    opens = datetime.fromisoformat(page.locator("[data-testid='rs-pause']")
                                   .get_attribute("data-opens-at").replace("Z", "+00:00"))
    token = bot.token()
    time.sleep(max(0.0, (opens - datetime.now(UTC)).total_seconds()) + 0.5)
    # back by their link (no language in it): the participant's language is kept
    assert bot.open(f"{server.url}?p={token}") == ("decision", "decision")
    body = page.inner_text("body")
    assert "ローンの審査には通りませんでした" in body
    profile = page.locator("[data-testid='rs-profile-table']").inner_text()
    # yen for Japanese: the bracket's midpoint income of 4.5 million and its loan of a third
    assert "￥4,500,000" in profile and "￥1,500,000" in profile
    assert "賃貸住宅" in profile and "million JPY" not in profile

    assert bot.run(until="plan-1") == ("plan-1", "plan")
    table = page.locator("[data-testid='rs-plan-table']")
    head = table.locator("thead").inner_text()
    assert "項目" in head and "現在のプロフィール" in head and "理想のプロフィール" in head
    assert table.locator("tbody tr").count() == 16
    rows = table.locator("tbody").inner_text()
    assert "勤続年数" in rows and "3～5年" in rows and "years" not in rows
    body = page.inner_text("body")
    assert "AIが作成した1つ目のプランです。" in body and "プラン 1 / 5" in body
    assert "ややそう思う" in body and "変更" in body
    assert "Strongly" not in body and "Continue" not in body
    right = table.evaluate("t => t.getBoundingClientRect().right")
    assert right <= PHONE["width"]
    ARTIFACT_DIR.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACT_DIR / "tominaga-plan-phone-ja.png"), full_page=True)
    assert bot.run(start=("plan-1", "plan")) == ("debrief", "debrief")
    body = page.inner_text("body")
    assert "ご協力いただき、ありがとうございました。" in body and "完了コード" in body

    # no language in the link: the first page offers the choice, and it sticks
    chooser = browser.new_page(viewport=PHONE)
    chooser.goto(server.url)
    chooser.get_by_text("Please tell us your occupation.").first.wait_for(timeout=60_000)
    chooser.locator(".st-key-rs-language [data-testid='stRadioOption']").filter(
        has_text="日本語").first.click()
    chooser.get_by_text("あなたのご職業を教えてください。").first.wait_for(timeout=60_000)

    server.stop()
    with Store(server.db, read_only=True) as store:
        pid = store.query("SELECT participant_id FROM participants WHERE token_hash = ?",
                          [hash_token(token)])[0]["participant_id"]
        stored = {r["page_id"]: json.loads(r["answer_json"]) for r in store.query(
            "SELECT page_id, answer_json FROM responses WHERE participant_id = ?", [pid])}
        langs = store.query("SELECT DISTINCT language FROM responses")
        ratings = store.query("SELECT language, count(*) AS n FROM ratings GROUP BY 1")
        starts = store.query("SELECT count(*) AS n FROM participants")[0]["n"]
        chosen = store.query("SELECT detail_json FROM events WHERE event = 'language'")
    # stored as answered: the protocol's options (English), whatever language they were read in
    assert stored == {s.page_id: s.answer for s in bot.steps}
    assert stored["screening"]["answers"]["occupation"] == "Company worker (full-time)"
    assert langs == [{"language": "ja"}] and ratings == [{"language": "ja", "n": 5}]
    assert starts == 2  # the refused link stored nothing
    assert len(chosen) == 1 and '"ja"' in chosen[0]["detail_json"]
