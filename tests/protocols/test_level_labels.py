"""Numbers as a participant reads them: open-ended top levels in words ("20 years or more",
not "20- years"), in English and in every shipped translation; whole-number items shown
without decimals; one number style per unit on a page."""

from __future__ import annotations

import re

import numpy as np
import pytest

from engine.scenarios import get_scenario, scenario_names
from protocols.definition.schema import load_protocol, shipped_protocols
from protocols.definition.translation import translations_dir, translators

# "12- hours", "20- years", "10M -", "- 2M": a bound left open with a bare dash
OPEN_DASH = re.compile(r"^\s*-|-\s*$|\d-\s*[^\d\s]")


@pytest.mark.parametrize("text, odd", [
    ("12- hours", True), ("20- years", True), ("5- jobs", True), ("10M -", True),
    ("- 2M", True), ("0-2 hours", False), ("2M - 3M", False), ("12 hours or more", False),
    ("10-400", False), ("Under 2M", False)])
def test_the_open_dash_pattern_tells_odd_labels(text: str, odd: bool) -> None:
    assert bool(OPEN_DASH.search(text)) is odd


@pytest.mark.parametrize("name", scenario_names())
def test_no_level_of_a_shipped_scenario_is_left_open_with_a_dash(name: str) -> None:
    scenario = get_scenario(name)
    odd = [(f.name, level) for f in scenario.features for level in (f.levels or ())
           if OPEN_DASH.search(level)]
    assert odd == []


def test_tominaga_top_levels_read_as_words_in_english_and_japanese() -> None:
    scenario = get_scenario("tominaga")
    top = {f.name: f.levels[-1] for f in scenario.features if f.levels}
    assert top["working_hours"] == top["telework_hours"] == "12 hours or more"
    assert top["service_years"] == top["management"] == "20 years or more"
    assert top["side_jobs"] == "5 jobs or more"
    protocol = load_protocol("tominaga-replication")
    ja = translators(protocol, translations_dir(protocol.id))["ja"]
    assert ja.level("12 hours or more") == "12時間以上"
    assert ja.level("20 years or more") == "20年以上"
    assert ja.level("5 jobs or more") == "5つ以上"


@pytest.mark.parametrize("pid", shipped_protocols())
def test_screening_options_and_translated_levels_are_not_left_open(pid: str) -> None:
    protocol = load_protocol(pid)
    texts = [o for q in protocol.screening for o in q.options]
    for t in translators(protocol, translations_dir(protocol.id)).values():
        texts += list(t.levels.values())
        texts += [t.text(o) for q in protocol.screening for o in q.options]
    assert [s for s in texts if OPEN_DASH.search(s)] == []


@pytest.mark.parametrize("name", scenario_names())
def test_whole_number_items_show_no_decimals(name: str) -> None:
    """An item shown with 0 decimals reads as an integer across its whole range (no "16.2
    years of schooling"); a level item reads as one of its levels."""
    scenario = get_scenario(name)
    lo, hi = scenario.bounds
    for j, f in enumerate(scenario.features):
        m = f.display
        values = np.linspace(float(lo[j]), float(hi[j]), 7)
        shown = [m.format(float(v)) for v in values]
        if m.kind == "categorical":
            assert set(shown) <= set(m.categories), f.name
        elif m.decimals == 0:
            number = [re.sub(r"\s*\(.*\)$", "", s) for s in shown]  # a code's meaning aside
            assert not [s for s in number if re.search(r"\d\.\d", s)], (f.name, shown)


@pytest.mark.parametrize("name", scenario_names())
def test_one_number_style_per_unit_on_a_page(name: str) -> None:
    """Items of one unit on one page share their decimals ("4.50 million" beside "1.50
    million", never "4.5" beside "1.50")."""
    scenario = get_scenario(name)
    styles: dict[str, set[int]] = {}
    for f in scenario.features:
        if f.display.kind != "categorical" and f.display.unit:
            styles.setdefault(f.display.unit, set()).add(f.display.decimals)
    assert {u: d for u, d in styles.items() if len(d) > 1} == {}
