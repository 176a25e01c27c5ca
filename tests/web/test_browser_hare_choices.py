"""What HARE participants are asked to judge, walked in a real browser at phone and desktop
width, every page photographed (``.recourse-study/test-artifacts/hare-*.png``):

- a participant of ``hare-interactive`` without its minimum of two changeable items
  (``elicitation.min_changeable``), who can change only their savings, is never offered two
  options that read the same (protocols.running.plan_audit.same_readings on what was
  stored), and every option moves savings alone;
- a ``hare-credit`` participant rates the plans the study got for them, and the debrief says
  as many: "the two plans you rated" after two plans, ``debrief.fewer_plans`` after fewer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from browser_harness import ARTIFACT_DIR, CHROMIUM, StudyServer
from browser_participant import BrowserParticipant, button, key_class
from test_browser_e2e import PHONE
from variants import without_min_changeable

from data.store import Store
from protocols.definition.schema import load_protocol
from protocols.running.plan_audit import same_readings

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium "
                       "(bash scripts/install_chromium.sh)"),
]
MAX_WALKERS = 6  # savings-only participants tried, one persona each
WIDTHS = {"phone": PHONE, "desktop": {"width": 1280, "height": 1000}}


class SavingsOnly(BrowserParticipant):
    """Ranks savings alone and marks every other item "I cannot change this"."""

    def _rank(self, page_id: str) -> dict[str, Any]:
        prefix = f"{page_id}:ranking:off:"
        cls = key_class(prefix)[1:]
        names = [c[len(cls):] for c in self._keys_with_prefix(prefix)]
        for name in names:
            if name != "savings":
                self.page.locator(button(prefix + name)).click()
                self.page.locator(button(f"{page_id}:ranking:on:{name}")) \
                    .wait_for(timeout=self.timeout_ms)
        return {"answers": {n: (1 if n == "savings" else None) for n in names}}


def _walk(bot: BrowserParticipant, url: str, name: str) -> list[tuple[str, str]]:
    """Answer every page, photographing each first page of its kind and every plan."""
    ARTIFACT_DIR.mkdir(parents=True, exist_ok=True)
    page_id, kind = bot.open(url)
    seen: list[tuple[str, str]] = []
    while True:
        seen.append((page_id, kind))
        if kind not in {k for _, k in seen[:-1]} or kind == "plan":
            bot.page.screenshot(path=str(ARTIFACT_DIR / f"{name}-{page_id}.png"),
                                full_page=True)
        if kind in ("debrief", "end"):
            return seen
        page_id, kind = bot.answer_page(page_id, kind)


def _server(protocol: str, tmp_path) -> Iterator[StudyServer]:
    srv = StudyServer(protocol, tmp_path / "study.duckdb", tmp_path / "serve.log")
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def interactive(trained_home, tmp_path) -> Iterator[StudyServer]:
    yield from _server(without_min_changeable(tmp_path), tmp_path)


@pytest.fixture
def credit(trained_home, tmp_path) -> Iterator[StudyServer]:
    yield from _server("hare-credit", tmp_path)


@pytest.mark.e2e
@pytest.mark.parametrize("width", WIDTHS)
def test_a_savings_only_participant_gets_distinct_options(interactive, browser,
                                                          width: str) -> None:
    """Participants come in until one reaches HARE's questions (for some personas no plan
    moving savings alone is approved: they go to the debrief with none). Every option they
    were shown moves savings alone, no two read the same, and the two plans they rate
    differ as shown."""
    protocol = load_protocol(interactive.protocol)
    for n in range(1, MAX_WALKERS + 1):
        bot = SavingsOnly(browser.new_page(viewport=WIDTHS[width]), protocol)
        seen = _walk(bot, interactive.url, f"hare-savings-only-{width}-{n}")
        assert seen[-1][1] in ("debrief", "end")
        if any(k.startswith("hare_") for _, k in seen):
            break
    else:
        pytest.fail(f"none of {MAX_WALKERS} savings-only participants reached HARE")
    interactive.stop()
    with Store(interactive.db, read_only=True) as store:
        masks = [json.loads(r["hard_mask_json"]) for r in
                 store.query("SELECT hard_mask_json FROM elicitations")]
        options = [o for r in store.query("SELECT options_json FROM comparisons")
                   for o in json.loads(r["options_json"])]
        pairs = same_readings(store, protocol.id, protocol, "hare")
        rated = store.query("SELECT x_cf_json FROM plans WHERE participant_id = "
                            "(SELECT participant_id FROM plans LIMIT 1)")
    assert all([f for f, can in m.items() if can] == ["savings"] for m in masks)
    assert options and all(set(o["actions"]) == {"savings"} for o in options), options
    assert pairs == []
    assert len(rated) == 2 and rated[0]["x_cf_json"] != rated[1]["x_cf_json"]


@pytest.mark.e2e
@pytest.mark.parametrize("width", WIDTHS)
def test_hare_credit_debrief_says_how_many_plans_were_rated(credit, browser,
                                                            width: str) -> None:
    protocol = load_protocol("hare-credit")
    page = browser.new_page(viewport=WIDTHS[width])
    bot = BrowserParticipant(page, protocol)
    seen = _walk(bot, credit.url, f"hare-credit-{width}")
    assert seen[-1][1] == "debrief"
    plans = [p for p, k in seen if k == "plan"]
    debrief = " ".join(page.inner_text("body").split())
    if len(plans) == 2:
        assert "One of the two plans you rated" in debrief
    else:
        assert "so you rated fewer plans" in debrief and "two plans you rated" not in debrief
    assert 1 <= len(plans) <= 2
