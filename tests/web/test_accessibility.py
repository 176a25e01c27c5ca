"""Accessibility of every shipped protocol in a real browser (Debian Chromium), keyboard only.

For each protocol one server, one browser: a keyboard-only participant (Tab, Space, Enter,
arrow keys, typing; keyboard_participant) completes the study at 1280 or at 390 px wide
(one test per protocol and width; all of them in make test-e2e),
and a second one declines consent (the end page). axe-core runs once on each new page kind
at each width: no WCAG 2.1 A/AA violation may remain (a.EXCEPTIONS lists the accepted ones,
none today). On every page focus moves to the heading and the first Tab reaches
the page's first control, every rating scale is a radio group with an accessible name,
every control reached by Tab shows a focus ring, and the page declares its language.

The figures (violations per page kind and width, key presses) are written to
.recourse-study/test-artifacts/accessibility-<protocol>-<width>.json.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import a11y
import pytest
from browser_harness import ARTIFACT_DIR, CHROMIUM, StudyServer
from keyboard_participant import KeyboardParticipant
from variants import with_delay

from data.store import Store
from engine.scenarios import get_scenario
from protocols.definition.schema import load_protocol
from protocols.definition.translation import SOURCE_LANGUAGE

pytestmark = [
    pytest.mark.e2e,  # keyboard-only walks of every protocol and width, the dashboard: make test-e2e
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium "
                       "(bash scripts/install_chromium.sh)"),
]
PASSWORD = "a11y dashboard pass phrase"
KINDS = {
    "icarma-personalization": {"consent", "scenario", "persona", "decision",
                               "elicitation_ranking", "plan", "attention", "debrief", "end"},
    "hare-interactive": {"consent", "scenario", "persona", "decision", "elicitation_ranking",
                         "hare_choice", "hare_accept", "plan", "debrief", "end"},
    "tominaga-replication": {"consent", "screening", "scenario", "profile_entry", "decision",
                             "plan", "attention", "debrief", "end"},
}
# What the keyboard participant enters on the replication's profile page: an employee early
# in their career (the first option of every other item).
TOMINAGA_PROFILE = {"residence": "Other than Tokyo", "housing": "Rental housing",
                    "education": "University (bachelor)", "service_years": "3-5 years",
                    "working_hours": "6-8 hours", "income": 4.2}


class Servers:
    """One `serve` per protocol, started when first asked for, stopped with the module."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.running: dict[str, StudyServer] = {}

    def get(self, protocol: str) -> StudyServer:
        if protocol not in self.running:
            srv = StudyServer(with_delay(protocol, self.root), self.root / f"{protocol}.duckdb",
                              self.root / f"{protocol}.log",
                              env={"RECOURSE_STUDY_DASHBOARD_PASSWORD": PASSWORD})
            srv.start()
            self.running[protocol] = srv
        return self.running[protocol]

    def stop(self) -> None:
        for srv in self.running.values():
            srv.stop()


@pytest.fixture(scope="module")
def servers(trained_home, tmp_path_factory) -> Iterator[Servers]:
    s = Servers(tmp_path_factory.mktemp("a11y"))
    try:
        yield s
    finally:
        s.stop()


def _profile(protocol: str) -> dict:
    if not protocol.startswith("tominaga"):
        return {}
    scenario = get_scenario("tominaga")
    return {**{f.name: f.levels[0] for f in scenario.features if f.levels}, **TOMINAGA_PROFILE}


# one walk per protocol and width
WALKS = [pytest.param(p, w, id=f"{p}-{w}") for p in KINDS for w in a11y.WIDTHS]


@pytest.mark.parametrize(("protocol", "width"), WALKS)
def test_keyboard_only_participants_complete_with_no_axe_violations(protocol, width, servers,
                                                                    module_browser) -> None:
    server = servers.get(protocol)
    spec = load_protocol(protocol)
    context = module_browser.new_context(viewport=a11y.WIDTHS[width])
    page = context.new_page()
    found: dict[str, list] = {}

    def scan(page_id: str, kind: str) -> None:
        if kind not in found:
            found[kind] = a11y.axe_violations(page)

    bot = KeyboardParticipant(page, spec, profile=_profile(protocol), on_page=scan,
                              timeout_ms=120_000)
    start = bot.open(server.url)
    # the participant's language (a link without ?lang: the protocol's own; Japanese:
    # test_browser_tominaga_ja, test_browser_hare_ja)
    assert page.evaluate("document.documentElement.lang") == SOURCE_LANGUAGE
    assert bot.run(start) == ("debrief", "debrief")
    # someone who declines: the end page
    decliner = KeyboardParticipant(context.new_page(), spec, on_page=scan)
    decliner._radio_choice = lambda *a: 1  # type: ignore[method-assign]  # "I do not agree"
    assert decliner.run(decliner.open(server.url)) == ("end", "end")
    context.close()
    assert set(found) == KINDS[protocol]
    assert {k: v for k, v in found.items() if v} == {}
    assert bot.no_ring == [] and decliner.no_ring == []
    assert bot.first_tab_elsewhere == [] and decliner.first_tab_elsewhere == []
    assert bot.radio_groups and all(name.strip() for name in bot.radio_groups)
    report = {"violations": {k: len(v) for k, v in found.items()},
              "keys": bot.keys, "typed": bot.typed, "pages": len(bot.pages),
              "pages_sent_back": bot.resent}
    ARTIFACT_DIR.mkdir(parents=True, exist_ok=True)
    (ARTIFACT_DIR / f"accessibility-{protocol}-{width}.json").write_text(
        json.dumps(report, indent=1))


def test_a_question_left_out_has_focus_when_the_page_comes_back(servers,
                                                               module_browser) -> None:
    """A keyboard user who sends the profile page with one item left out gets the page back
    with that item marked, named under the form and focused, answers it there and goes on
    (no tabbing through the page again)."""
    protocol = "tominaga-replication"
    spec = load_protocol(protocol)
    context = module_browser.new_context(viewport=a11y.PHONE)
    bot = KeyboardParticipant(context.new_page(), spec, profile=_profile(protocol),
                              timeout_ms=120_000)
    page_id, kind = bot.open(servers.get(protocol).url)
    while kind != "profile_entry":
        bot.answer(page_id, kind)
        page_id, kind = bot.wait_page(page_id)
    bot.leave_out = {"overseas_study"}
    bot.answer(page_id, kind)
    assert bot.sent_back(page_id)
    alerts = " ".join(bot.page.locator("[data-testid='stAlert']").all_inner_texts())
    assert bot.page.locator("[data-testid='rs-missing']").count() == 1, alerts
    assert "Overseas study experience" in alerts
    bot.page.wait_for_function(  # focus moved to the item left out
        "() => { const h = document.activeElement"
        " && document.activeElement.closest('[class*=\"st-key-\"]');"
        " return h && [...h.classList].some(c => c.endsWith(':overseas_study')"
        " || c.endsWith('-overseas_study')); }", timeout=10_000)
    bot.leave_out = set()
    bot.resend(page_id, kind)
    assert bot.resent == [page_id]
    assert not bot.sent_back(page_id)
    assert bot.wait_page(page_id)[1] != "profile_entry"
    context.close()


_METRIC = """label => { const m = [...document.querySelectorAll('[data-testid="stMetric"]')]
  .find(e => e.querySelector('[data-testid="stMetricLabel"]').innerText.trim() === label);
  return m ? m.querySelector('[data-testid="stMetricValue"]').innerText.trim() : null; }"""


def _metric(page, label: str) -> int:
    page.wait_for_function(f"() => ({_METRIC})({json.dumps(label)}) !== null")
    return int(page.evaluate(_METRIC, label))


def test_dashboard_is_live_keeps_the_researcher_signed_in_and_passes_axe(
        servers, module_browser) -> None:
    """With the dashboard open, a new participant's consent is counted within 10 s without a
    click; a reload keeps the researcher signed in (signed cookie); the headline numbers add
    up; every sign-in records the client's address; axe finds nothing at either width."""
    import time

    protocol = "hare-interactive"
    server = servers.get(protocol)
    context = module_browser.new_context(viewport=a11y.DESKTOP)
    dash = context.new_page()
    dash.goto(server.url + "/dashboard")
    dash.get_by_label("Dashboard password").fill(PASSWORD)
    dash.get_by_role("button", name="Sign in").click()
    before = {label: _metric(dash, label) for label in ("Visits", "Consented", "In progress")}
    # a new participant, in another browser, consents (keyboard only)
    other = module_browser.new_context(viewport=a11y.PHONE)
    bot = KeyboardParticipant(other.new_page(), load_protocol(protocol))
    consent = bot.open(server.url)
    bot.answer(*consent)
    bot.wait_page(consent[0])
    consented_at = time.perf_counter()
    dash.wait_for_function(f"() => ({_METRIC})('Consented') === '{before['Consented'] + 1}'",
                           timeout=10_000)
    latency = time.perf_counter() - consented_at
    assert _metric(dash, "Visits") == before["Visits"] + 1
    assert _metric(dash, "In progress") == before["In progress"] + 1
    other.close()
    text = dash.inner_text("[data-testid='stMain']")
    assert f"Consented {before['Consented'] + 1} = in progress" in text
    found = {"1280": a11y.axe_violations(dash)}
    # a reload is a new Streamlit session: the signed cookie keeps the researcher in
    dash.reload()
    assert _metric(dash, "Consented") == before["Consented"] + 1
    assert dash.get_by_label("Dashboard password").count() == 0
    dash.set_viewport_size(a11y.PHONE)
    dash.reload()
    _metric(dash, "Consented")
    found["390"] = a11y.axe_violations(dash)
    assert found == {"1280": [], "390": []}
    # signing out deletes the cookie: a reload asks for the password again
    dash.get_by_role("button", name="Sign out").click()
    dash.get_by_label("Dashboard password").wait_for()
    dash.reload()
    dash.get_by_label("Dashboard password").wait_for()
    context.close()
    servers.running.pop(protocol).stop()
    with Store(server.db, read_only=True) as store:
        clients = {r["client"] for r in store.query("SELECT client FROM dashboard_logins")}
    assert clients == {"127.0.0.1"}
    ARTIFACT_DIR.mkdir(parents=True, exist_ok=True)
    (ARTIFACT_DIR / "accessibility-dashboard.json").write_text(json.dumps(
        {"violations": {w: len(v) for w, v in found.items()},
         "consent_to_count_seconds": round(latency, 2)}, indent=1))
