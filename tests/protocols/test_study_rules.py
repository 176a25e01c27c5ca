"""A study's plan rules from its protocol (protocols.definition.study_rules): the scenario's
bounds with the protocol's on top, reported and checked by ``validate``; the debrief of a
participant who rated fewer plans than promised."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.recourse.plan_bounds import Bound
from engine.scenarios import get_scenario
from protocols.definition.review import review_text
from protocols.definition.schema import load_protocol, parse_protocol
from protocols.definition.study_rules import study_rules

HARE_CREDIT = (Path(__file__).resolve().parents[2] / "protocols" / "hare-credit.yaml").read_text()


def test_a_protocol_bound_replaces_only_what_it_states() -> None:
    text = HARE_CREDIT.replace("  design: best\n", "  design: best\n  bounds:\n"
                               "    credit_amount: {relative: 0.25}\n"
                               "    duration: {max: 24}\n    savings: {none: true}\n")
    p = parse_protocol(text)
    sc = get_scenario(p.scenario)
    rules = study_rules(p, sc)
    base = study_rules(load_protocol("hare-credit"), sc)
    j = sc.feature_names.index
    assert rules.bounds[j("credit_amount")] == Bound(relative=0.25)
    duration = base.bounds[j("duration")]
    assert rules.bounds[j("duration")] == Bound(duration.relative, duration.absolute, high=24)
    assert rules.bounds[j("savings")] == Bound()
    assert rules.bounds[j("employment")] == base.bounds[j("employment")] == Bound(absolute=1)


def test_validate_lists_the_rules_and_refuses_an_unknown_feature() -> None:
    result = review_text(HARE_CREDIT)
    rows = {r["feature"]: r for r in result.resolved["plan_rules"]}
    assert "age" not in rows  # immutable: no plan changes it
    assert rows["employment"]["bounds"].startswith("at most 1 level(s) per plan")
    assert rows["savings"]["direction"] == "increase only"
    bad = review_text(HARE_CREDIT.replace("  design: best\n", "  design: best\n  bounds:\n"
                                          "    credit_amont: {relative: 0.25}\n"))
    assert not bad.valid and "credit_amont" in bad.errors[0].message


@pytest.mark.parametrize(("fewer", "warned"), [(True, False), (False, True)])
def test_a_debrief_counting_plans_needs_a_fewer_plans_text(fewer: bool, warned: bool) -> None:
    text = HARE_CREDIT if fewer else HARE_CREDIT.split("  fewer_plans:")[0] + \
        HARE_CREDIT.split("  fewer_plans:")[1].split("\n", 5)[-1]
    assert ("fewer_plans" in text) is fewer
    paths = [w.path for w in review_text(text).warnings]
    assert ("debrief.text" in paths) is warned


def test_a_participant_short_of_plans_reads_the_fewer_plans_or_no_plans_debrief() -> None:
    from types import SimpleNamespace

    from protocols.running.pages.close import Debrief

    p = load_protocol("hare-credit")
    ctx = SimpleNamespace(protocol=p)

    def person(n: int) -> SimpleNamespace:
        return SimpleNamespace(plans_ready=True, plans=[object()] * n, arm="hare", stated=None,
                               completion_code="C")

    assert Debrief().payload(ctx, person(2)).text == p.debrief.text
    assert Debrief().payload(ctx, person(1)).text == p.debrief.fewer_plans
    none = Debrief().payload(ctx, person(0))  # no plan found: the shortfall says why,
    assert none.no_plans == p.plans.shortfall.message  # the debrief neither thanks twice
    assert none.text == p.debrief.no_plans  # nor speaks of plans rated
    assert "you rated" not in none.text and not none.text.startswith("Thank you")
