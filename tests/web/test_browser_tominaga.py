"""The reference study's replication end to end in a real browser at phone width:
`recourse-study serve` of tominaga-replication, Debian Chromium via Playwright, one
participant through screening (the paper's six items), the 16-item profile with income,
the decision (everybody is rejected) and the plans ("Current profile -> Ideal profile",
16 rows, only the changed items highlighted), then the database checked.

A screenshot of a plan at phone width is saved under .recourse-study/test-artifacts/.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser_harness import ARTIFACT_DIR, CHROMIUM, StudyServer
from browser_participant import BrowserParticipant
from test_browser_e2e import PHONE, check_database

from data.store import Store
from engine.scenarios import get_scenario
from protocols.schema import load_protocol

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium "
                       "(bash scripts/install_chromium.sh)"),
]
PROTOCOL = "tominaga-replication"
# An employee early in their career: first options, a bachelor's degree, 4.2M JPY.
PROFILE = {"residence": "Other than Tokyo", "housing": "Rental housing",
           "education": "University (bachelor)", "service_years": "3-5 years",
           "working_hours": "6-8 hours", "income": 4.2}


@pytest.fixture
def server(tmp_path) -> Iterator[StudyServer]:
    srv = StudyServer(PROTOCOL, tmp_path / "study.duckdb", tmp_path / "serve.log")
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def test_tominaga_replication_at_phone_width(server, browser) -> None:
    ARTIFACT_DIR.mkdir(parents=True, exist_ok=True)
    protocol = load_protocol(PROTOCOL)
    scenario = get_scenario("tominaga")
    defaults = {f.name: f.levels[0] for f in scenario.features if f.levels}
    page = browser.new_page(viewport=PHONE)
    bot = BrowserParticipant(page, protocol, profile={**defaults, **PROFILE})
    start = bot.open(server.url)
    assert bot.run(until="screening", start=start) == ("screening", "screening")
    assert page.get_by_text("Please tell us your occupation.").count() == 1
    assert bot.run(until="profile") == ("profile", "profile_entry")
    # Streamlit scrolls inside its own container, where Playwright cannot open a dropdown
    # below the fold: the 17 fields are filled at phone width in a tall window.
    page.set_viewport_size({"width": PHONE["width"], "height": 2600})
    labels = [f.label for f in scenario.features if f.derived_from is None]
    for label in labels:  # 16 items and the income; the loan is not asked
        assert page.get_by_text(label).count() >= 1, label
    assert page.get_by_text("Car loan (24 months)", exact=True).count() == 0
    assert bot.run(until="decision") == ("decision", "decision")
    page.set_viewport_size(PHONE)
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
        prof = store.query("SELECT source FROM profiles")[0]
    assert prof["source"] == "own" and len(plans) == 5
    assert {p["selection"] for p in plans} == {"sparsest", "most_proximate", "random"}
    import json

    income = scenario.index("income")
    for p in plans:
        x, x_cf = json.loads(p["x_json"]), json.loads(p["x_cf_json"])
        xs = [x[f] for f in scenario.feature_names] if isinstance(x, dict) else x
        cfs = [x_cf[f] for f in scenario.feature_names] if isinstance(x_cf, dict) else x_cf
        assert cfs[income] >= 4 / 3 * xs[income]
