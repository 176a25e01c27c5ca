"""Pages a participant takes seriously, in a real browser at 1280 and 390 px: a ranking left
untouched is refused, HARE's two plans stand side by side on a wide screen and stack without
sideways scrolling on a phone, nobody who can change nothing (in a protocol that asks no
minimum of changeable items) is left without a word, and a participant with fewer plans than
promised reads texts that match the count.

One `recourse-study serve` per protocol (module-scoped), Debian Chromium via Playwright.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser_harness import CHROMIUM, StudyServer
from browser_participant import BrowserParticipant, button, key_class
from test_browser_e2e import PHONE
from variants import with_delay, without_min_changeable

from engine.scenarios import get_scenario
from protocols.definition.schema import load_protocol
from protocols.running.pages.close import NOTHING_CHANGEABLE

pytestmark = [
    pytest.mark.e2e,  # plan pages in Chromium at both widths: make test-e2e
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium "
                       "(bash scripts/install_chromium.sh)"),
]
WIDE = {"width": 1280, "height": 900}
# A general manager with a doctorate, long service, a top TOEIC score and experience abroad:
# the pool has only two richer profiles without a forbidden decrease for them
# (protocols.running.planning; checked below: two plans).
FEW_PLANS = {"education": "Graduate school (doctor)", "position": "General Manager",
             "service_years": "20 years or more", "management": "5-10 years", "toeic": "900-990",
             "overseas_work": "Yes", "overseas_study": "Yes", "income": 8.5}


def _serve(protocol: str, tmp_path_factory) -> Iterator[StudyServer]:
    folder = tmp_path_factory.mktemp(protocol)
    with StudyServer(with_delay(protocol, folder), folder / "study.duckdb",
                     folder / "serve.log") as srv:
        yield srv


@pytest.fixture(scope="module")
def hare_server(trained_home, tmp_path_factory) -> Iterator[StudyServer]:
    folder = tmp_path_factory.mktemp("hare-any-changeable")
    with StudyServer(without_min_changeable(folder), folder / "study.duckdb",
                     folder / "serve.log") as srv:
        yield srv


@pytest.fixture(scope="module")
def tominaga_server(tmp_path_factory) -> Iterator[StudyServer]:
    yield from _serve("tominaga-replication", tmp_path_factory)


def _boxes(page) -> list[dict]:
    return page.eval_on_selector_all(
        "[data-testid='rs-pair-item']", "els => els.map(e => { const r = "
        "e.getBoundingClientRect(); return {top: r.top, left: r.left, right: r.right, "
        "bottom: r.bottom}; })")


def _scroll_width(page) -> int:
    return int(page.evaluate("() => document.documentElement.scrollWidth"))


WIDTHS = [pytest.param(WIDE, id="1280"), pytest.param(PHONE, id="390")]


def test_ranking_refused_untouched_and_two_plans_side_by_side(hare_server, browser) -> None:
    protocol = load_protocol(hare_server.protocol)
    page = browser.new_page(viewport=WIDE)
    bot = BrowserParticipant(page, protocol)
    start = bot.open(hare_server.url)
    assert "up to two plans" in page.inner_text("body")  # the consent's real count
    pid, kind = bot.run(until="elicitation", start=start)
    assert kind == "elicitation_ranking"
    page.locator(button(f"{pid}:submit")).click()  # Continue with the order as first shown
    page.get_by_text("Please put the items in your order").wait_for(timeout=60_000)
    assert bot.current() == (pid, kind)  # refused: still the ranking
    pid, kind = bot.answer_page(pid, kind)
    while kind == "hare_accept":  # HARE asks no pair that reads the same on the page
        pid, kind = bot.answer_page(pid, kind)
    assert kind == "hare_choice"
    boxes = _boxes(page)
    assert len(boxes) == 2
    a, b = boxes
    assert abs(a["top"] - b["top"]) < 2 and b["left"] >= a["right"]  # side by side
    assert _scroll_width(page) <= WIDE["width"]
    page.set_viewport_size(PHONE)
    page.wait_for_function("() => { const e = document.querySelectorAll("
                           "\"[data-testid='rs-pair-item']\"); return e.length == 2 && "
                           "e[1].getBoundingClientRect().top >= "
                           "e[0].getBoundingClientRect().bottom - 1; }", timeout=10_000)
    assert _scroll_width(page) <= PHONE["width"]  # stacked, nothing runs off the screen


@pytest.mark.parametrize("viewport", WIDTHS)
def test_nothing_changeable_gets_a_page_that_says_why(hare_server, browser, viewport) -> None:
    protocol = load_protocol(hare_server.protocol)
    page = browser.new_page(viewport=viewport)
    bot = BrowserParticipant(page, protocol)
    pid, kind = bot.run(until="elicitation", start=bot.open(hare_server.url))
    page.locator(button(f"{pid}:submit")).click()  # untouched: refused at this width too
    page.get_by_text("Please put the items in your order").wait_for(timeout=60_000)
    assert bot.current() == (pid, kind) and _scroll_width(page) <= viewport["width"]
    prefix = key_class(f"{pid}:ranking:off:")[1:]
    names = [c[len(prefix):] for c in bot._keys_with_prefix(f"{pid}:ranking:off:")]
    for name in names:
        page.locator(button(f"{pid}:ranking:off:{name}")).click()
        page.locator(button(f"{pid}:ranking:on:{name}")).wait_for(timeout=60_000)
    page.locator(button(f"{pid}:submit")).click()
    assert bot.wait_page(pid) == ("debrief", "debrief")
    assert NOTHING_CHANGEABLE[:60] in page.inner_text("body")
    assert _scroll_width(page) <= viewport["width"]


@pytest.mark.parametrize("viewport", WIDTHS)
def test_fewer_plans_than_promised_texts_match(tominaga_server, browser, viewport) -> None:
    protocol = load_protocol("tominaga-replication")
    scenario = get_scenario("tominaga")
    defaults = {f.name: f.levels[0] for f in scenario.features if f.levels}
    page = browser.new_page(viewport=viewport)
    bot = BrowserParticipant(page, protocol, profile={**defaults, **FEW_PLANS})
    start = bot.run(until="consent", start=bot.open(tominaga_server.url))  # screened first
    assert "up to five plans" in page.inner_text("body")
    assert bot.run(until="profile", start=start)[0] == "profile"
    page.set_viewport_size({"width": viewport["width"], "height": 2600})  # every field
    assert bot.run(until="plan-1")[0] == "plan-1"
    page.set_viewport_size(viewport)
    text = page.inner_text("body")
    assert "Plan 1 of 2" in text and "of 5" not in text
    assert _scroll_width(page) <= viewport["width"]
    seen = []
    pid, kind = "plan-1", "plan"
    while kind not in ("debrief", "end"):
        seen.append(pid)
        pid, kind = bot.answer_page(pid, kind)
    # the check "after plan 3 of 5" keeps its place: after plan 1 of 2, not after the last
    assert seen == ["plan-1", "attention-careful", "plan-2"]
