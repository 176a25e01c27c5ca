"""The HARE study on real credit data end to end in a real browser: `recourse-study serve`
of hare-credit (German Credit, standing in for GiveMeSomeCredit), Debian Chromium via
Playwright, one participant given a real rejected applicant's profile, through HARE's
pairwise and accept questions to the two plans they rate; the page texts are plain (no
internal keys, no citations) and the database holds exactly what they answered."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from browser_harness import CHROMIUM, StudyServer
from browser_participant import BrowserParticipant
from test_browser_e2e import check_database

from data.store import Store
from engine.scenarios import get_scenario
from protocols.definition.schema import load_protocol

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium "
                       "(bash scripts/install_chromium.sh)"),
]
PROTOCOL = "hare-credit"


@pytest.fixture
def server(trained_home, tmp_path) -> Iterator[StudyServer]:
    with StudyServer(PROTOCOL, tmp_path / "study.duckdb", tmp_path / "serve.log") as srv:
        yield srv


def _plain(text: str) -> None:
    """Participant-facing words: no feature keys, scenario or method ids, no citations."""
    scenario = get_scenario("german-credit")
    for key in [f.name for f in scenario.features if "_" in f.name] + ["german-credit",
                                                                        "et al."]:
        assert key not in text, key


@pytest.mark.e2e  # a whole walk (make test-e2e); hare-credit's
# plans: tests/protocols/test_plan_rules.py
def test_hare_credit_in_the_browser(server, browser) -> None:
    protocol = load_protocol(PROTOCOL)
    scenario = get_scenario("german-credit")
    page = browser.new_page(viewport={"width": 1280, "height": 2000})
    bot = BrowserParticipant(page, protocol)
    start = bot.open(server.url)
    assert bot.run(until="profile", start=start) == ("profile", "persona")
    body = page.inner_text("body")
    for f in scenario.features:  # the applicant is shown in the data's own words
        assert f.label in body, f.label
    _plain(body)
    where = bot.run(until="hare-1")
    assert where[1] in ("hare_choice", "hare_accept")
    _plain(page.inner_text("body"))
    assert bot.run(until="plan-1", start=where) == ("plan-1", "plan")
    assert "hare_choice" in {s.kind for s in bot.steps}  # HARE's pairwise questions
    _plain(page.inner_text("body"))
    assert bot.run(start=("plan-1", "plan")) == ("debrief", "debrief")
    assert "German Credit" in page.inner_text("body")
    token = bot.token()
    server.stop()
    check_database(server.db, {token: bot.steps})
    hare_pages = [s for s in bot.steps if s.kind.startswith("hare_")]
    with Store(server.db, read_only=True) as store:
        counts = store.counts()
        plans = store.query("SELECT x_json, x_cf_json FROM plans")
    assert counts["comparisons"] == len(hare_pages) >= 1
    # HARE's final plan and its base's, each shown once it obeys the plan rules (a plan whose
    # change does not show is left out): every stored plan was a page, and changes something
    shown = [s for s in bot.steps if s.kind == "plan"]
    assert 1 <= len(plans) == len(shown) <= 2
    assert all(json.loads(p["x_json"]) != json.loads(p["x_cf_json"]) for p in plans)
