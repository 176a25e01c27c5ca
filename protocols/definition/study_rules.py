"""A study's plan rules (engine.recourse.plan_rules) from its protocol: the scenario's
directions and plausible-change bounds with the protocol's own on top (``plans.directions``,
``plans.bounds``) and its consequence mode, and the same rules in words for ``validate``."""

from __future__ import annotations

from typing import Any

from engine.recourse import PlanRules
from engine.recourse.plan_bounds import Bound, default_bound, population_range
from engine.scenarios.base import Scenario
from protocols.definition.schema import Protocol
from protocols.definition.specs import BoundSpec

DIRECTION_WORDS = {1: "increase only", -1: "decrease only", 0: "either way"}


def study_rules(protocol: Protocol, scenario: Scenario) -> PlanRules:
    """The study's plan rules (module docstring); a feature the protocol names that the
    scenario lacks raises ValueError naming it."""
    own = {name: _bound(scenario, name, spec) for name, spec in protocol.plans.bounds.items()}
    return PlanRules.of(scenario, protocol.plans.directions, protocol.plans.consequences, own)


def _bound(scenario: Scenario, name: str, spec: BoundSpec) -> Bound:
    """A protocol's bound of one feature: its stated parts, the scenario's for the rest."""
    if name not in scenario.feature_names:
        raise ValueError(f"plans.bounds names unknown feature {name!r} (features: "
                         f"{', '.join(scenario.feature_names)})")
    base = default_bound(scenario, scenario.index(name))
    if spec.none:
        step: tuple[float | None, float | None] = (None, None)
    elif spec.relative is None and spec.absolute is None:
        step = (base.relative, base.absolute)
    else:
        step = (spec.relative, spec.absolute)
    return Bound(*step, low=base.low if spec.min is None else spec.min,
                 high=base.high if spec.max is None else spec.max)


def rules_in_words(protocol: Protocol, scenario: Scenario) -> list[dict[str, Any]]:
    """Per feature a plan may change: its direction and bounds as the study applies them
    (``validate``'s resolved protocol)."""
    rules = study_rules(protocol, scenario)
    return [{"feature": f.name, "direction": DIRECTION_WORDS[rules.directions[j]],
             "bounds": rules.bounds[j].describe(f, population_range(scenario, j)),
             "from_protocol": f.name in protocol.plans.bounds}
            for j, f in enumerate(scenario.features)
            if j in scenario.actionable and f.in_plan]
