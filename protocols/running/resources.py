"""What a study computes with: the decision model and one recourse method per arm.

The one place that decides which classifier and which method objects a study uses
(``study_resources``), so switching the decision model or a method is a one-line change and
tests can inject fakes (``StudyResources(classifier=..., methods=...)``).

- ``decision_model: trained`` loads the scenario's artifact
  (``engine.artifacts.load_classifier``; ArtifactMissingError says how to build it);
  ``bayes`` uses the exact Bayes rule under the scenario's SCM (no artifact; a reference).
- Each arm gets its own ``RecourseContext`` (its cost profile), world model = the scenario's
  exact SCM, so every plan's consequences, densities and distances are exact.
- An arm whose method wraps a base method (capability ``wraps_base``: HARE) gets its base
  built from the arm's ``base``/``base_options`` and passed as ``base=``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.artifacts import load_classifier
from engine.decision import Classifier
from engine.preferences import CostProfile
from engine.recourse import (
    MethodUnavailableError,
    PlanRules,
    RecourseContext,
    RecourseMethod,
    build_method,
    capabilities,
)
from engine.scenarios import get_scenario
from engine.scenarios.base import Scenario
from protocols.definition.schema import Protocol
from protocols.definition.specs import ArmSpec
from protocols.definition.study_rules import study_rules

__all__ = ["MethodUnavailableError", "StudyResources", "load_classifier", "plan_rules",
           "study_resources"]


@dataclass
class StudyResources:
    """The scenario, classifier, per-arm contexts and methods of a study.

    >>> from protocols import load_protocol, study_resources
    >>> protocol = load_protocol("tominaga-replication")
    >>> res = study_resources(protocol)
    >>> res.scenario.name, type(res.classifier).__name__, res.rules.consequences
    ('tominaga', 'RuleDecision', 'explain')
    >>> type(res.method(protocol.arms[0])).__name__     # the arm's method, built on first use
    'PoolProfiles'
    """

    scenario: Scenario
    classifier: Classifier
    contexts: dict[str, RecourseContext] = field(default_factory=dict)
    methods: dict[str, RecourseMethod] = field(default_factory=dict)
    rules: PlanRules | None = None  # the study's plan rules (every arm's context obeys them)

    def context(self, arm: ArmSpec) -> RecourseContext:
        if arm.id not in self.contexts:
            self.contexts[arm.id] = RecourseContext(
                self.scenario, self.classifier, cost_profile=CostProfile(arm.cost_profile),
                rules=self.rules,
            )
        return self.contexts[arm.id]

    def method(self, arm: ArmSpec) -> RecourseMethod:
        """The arm's method object (MethodUnavailableError when it cannot be built here)."""
        if arm.id not in self.methods:
            options: dict[str, Any] = dict(arm.options)
            if capabilities(arm.method).wraps_base:
                options["base"] = self.base_method(arm)
            self.methods[arm.id] = build_method(arm.method, self.context(arm),
                                                what=f"arm {arm.id!r}", **options)
        return self.methods[arm.id]

    def fallback_method(self, arm: ArmSpec, method: str, options: dict[str, Any]) -> RecourseMethod:
        """The method that fills an arm's plan shortfall (``plans.shortfall.fallback``), in
        the arm's context."""
        key = f"{arm.id}/fallback"
        if key not in self.methods:
            self.methods[key] = build_method(method, self.context(arm),
                                             what=f"the fallback of arm {arm.id!r}", **options)
        return self.methods[key]

    def base_method(self, arm: ArmSpec) -> RecourseMethod:
        """The base generator of an arm whose method wraps one (the plan its final plan is
        compared with)."""
        key = f"{arm.id}/base"
        if key not in self.methods:
            if arm.base is None:
                raise ValueError(f"arm {arm.id!r} has no base method")
            self.methods[key] = build_method(arm.base, self.context(arm),
                                             what=f"arm {arm.id!r}", **arm.base_options)
        return self.methods[key]


def study_resources(
    protocol: Protocol,
    *,
    decision_model: str | None = None,
    classifier: Classifier | None = None,
    methods: dict[str, Any] | None = None,
) -> StudyResources:
    """Resources for ``protocol``; ``decision_model`` overrides the protocol's choice,
    ``classifier``/``methods`` (arm id -> method) inject ready objects (tests).

    >>> from protocols import load_protocol, study_resources
    >>> res = study_resources(load_protocol("icarma-personalization"), decision_model="bayes")
    >>> res.scenario.name, type(res.classifier).__name__
    ('loan', 'BayesDecision')
    """
    scenario = get_scenario(protocol.scenario)
    clf = classifier or load_classifier(scenario, decision_model or protocol.decision_model)
    res = StudyResources(scenario, clf, rules=plan_rules(protocol, scenario))
    for arm_id, method in (methods or {}).items():
        res.methods[arm_id] = method
        if getattr(method, "context", None) is not None:
            res.contexts[arm_id] = method.context
    return res


def plan_rules(protocol: Protocol, scenario: Scenario) -> PlanRules:
    """The study's plan rules (protocols.definition.study_rules: the scenario's directions
    and bounds with the protocol's on top and its consequence mode)."""
    return study_rules(protocol, scenario)
