"""The reference study's replication end to end in a real browser at phone width:
`recourse-study serve` of tominaga-replication, Debian Chromium via Playwright, one
participant through its two sessions: screening (the paper's six items: the age typed, the
income as a bracket, the loans "select all") before consent, the 16-item profile (no
income), the pause page; the link opened again too early shows the pause, opened after the
delay (a few seconds here, two weeks in the protocol) the decision (everybody is rejected)
and the plans ("Current profile -> Ideal profile", 16 rows, only the changed items
highlighted); then the database checked.

A screenshot of a plan at phone width is saved under .recourse-study/test-artifacts/.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from browser_harness import ARTIFACT_DIR, CHROMIUM, StudyServer
from browser_participant import BrowserParticipant
from test_browser_e2e import PHONE, check_database
from variants import with_delay

from data.store import Store
from engine.scenarios import get_scenario
from protocols.definition.schema import load_protocol

pytestmark = [
    pytest.mark.e2e,  # the reference study's two sessions in Chromium: make test-e2e
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium "
                       "(bash scripts/install_chromium.sh)"),
]
PROTOCOL = "tominaga-replication"
# An employee early in their career: first options, a bachelor's degree, 4M - 5M JPY.
PROFILE = {"residence": "Other than Tokyo", "housing": "Rental housing",
           "education": "University (bachelor)", "service_years": "3-5 years",
           "working_hours": "6-8 hours", "income": 4.2}  # income: the bracket to choose


DELAY = 15.0  # seconds between the sessions: long enough to come back too early first


@pytest.fixture
def server(tmp_path) -> Iterator[StudyServer]:
    with StudyServer(with_delay(PROTOCOL, tmp_path, DELAY), tmp_path / "study.duckdb",
                     tmp_path / "serve.log") as srv:
        yield srv


def test_tominaga_replication_at_phone_width(server, browser) -> None:
    ARTIFACT_DIR.mkdir(parents=True, exist_ok=True)
    protocol = load_protocol(PROTOCOL)
    scenario = get_scenario("tominaga")
    defaults = {f.name: f.levels[0] for f in scenario.features if f.levels}
    page = browser.new_page(viewport=PHONE)
    bot = BrowserParticipant(page, protocol, profile={**defaults, **PROFILE})
    start = bot.open(server.url)
    assert start == ("screening", "screening")  # the paper screened before consent
    assert page.get_by_text("Please tell us your occupation.").count() == 1
    assert bot.run(until="profile", start=start) == ("profile", "profile_entry")
    assert bot.steps[0].answer["answers"]["income"] == "4M - 5M"
    assert bot.steps[0].answer["answers"]["loans"] == ["I do not have any loans"]
    assert bot.steps[1].page_id == "consent"
    # Streamlit scrolls inside its own container, where Playwright cannot open a dropdown
    # below the fold: the 16 fields are filled at phone width in a tall window.
    page.set_viewport_size({"width": PHONE["width"], "height": 2600})
    for f in scenario.features:  # the 16 items; income and the loan are not asked
        assert (page.get_by_text(f.label, exact=True).count() >= 1) == f.in_plan, f.label
    assert bot.run() == ("pause", "pause")
    page.set_viewport_size(PHONE)
    opens = datetime.fromisoformat(page.locator("[data-testid='rs-pause']")
                                   .get_attribute("data-opens-at").replace("Z", "+00:00"))
    page.get_by_text("communicated to you in 2 weeks", exact=False).wait_for(timeout=30_000)
    token = bot.token()
    # the link to come back by (drawn just after the text: waited for, not raced)
    page.wait_for_function("t => document.body.innerText.includes(t)", arg=f"?p={token}",
                           timeout=15_000)
    url = f"{server.url}?p={token}"
    assert bot.open(url) == ("pause", "pause")  # too early: still the pause
    time.sleep(max(0.0, (opens - datetime.now(UTC)).total_seconds()) + 0.5)
    assert bot.open(url) == ("decision", "decision")
    assert "declined in the loan assessment" in page.inner_text("body")
    assert bot.run(until="plan-1") == ("plan-1", "plan")
    table = page.locator("[data-testid='rs-plan-table']")
    assert table.locator("tbody tr").count() == 16  # every item, income and loan hidden
    head = table.locator("thead").inner_text()
    assert "Current profile" in head and "Ideal profile" in head
    changed = table.locator("tr.rs-action").count()
    assert changed >= 1 and table.locator("tr.rs-consequence").count() == 0
    assert page.get_by_text("Here is the 1st plan, created by AI.").count() == 1
    impossible = bot._keys_with_prefix("plan-1:impossible:")
    assert len(impossible) == changed  # asked for exactly the changed items
    # readable on a phone: the table fits the screen's width (no sideways scrolling)
    right = table.evaluate("t => t.getBoundingClientRect().right")
    assert right <= PHONE["width"]
    page.set_viewport_size({"width": PHONE["width"], "height": 2600})
    page.screenshot(path=str(ARTIFACT_DIR / "tominaga-plan-phone.png"))
    page.set_viewport_size(PHONE)
    assert bot.run(start=("plan-1", "plan")) == ("debrief", "debrief")
    token = bot.token()
    server.stop()
    check_database(server.db, {token: bot.steps})
    with Store(server.db, read_only=True) as store:
        plans = store.query("SELECT x_json, x_cf_json, selection FROM plans")
        prof = store_profile = store.query("SELECT source, display_json FROM profiles")[0]
    assert prof["source"] == "own" and len(plans) == 5
    shown = json.loads(store_profile["display_json"])
    assert shown["income"].startswith("4.5") and shown["loan_amount"].startswith("1.5")
    assert {p["selection"] for p in plans} == {"sparsest", "most_proximate", "random"}
    income = scenario.index("income")
    for p in plans:
        x, x_cf = json.loads(p["x_json"]), json.loads(p["x_cf_json"])
        xs = [x[f] for f in scenario.feature_names] if isinstance(x, dict) else x
        cfs = [x_cf[f] for f in scenario.feature_names] if isinstance(x_cf, dict) else x_cf
        assert cfs[income] >= 4 / 3 * xs[income]
