"""What a study computes with: the decision model and one recourse method per arm.

The one place that decides which classifier and which method objects a study uses
(``study_resources``), so switching the decision model or a method is a one-line change and
tests can inject fakes (``StudyResources(classifier=..., methods=...)``).

- ``decision_model: trained`` loads the scenario's artifact
  (``engine.artifacts.load_decision_model``; ArtifactMissingError says how to build it);
  ``bayes`` uses the exact Bayes rule under the scenario's SCM (no artifact; a reference).
- Each arm gets its own ``RecourseContext`` (its cost profile), world model = the scenario's
  exact SCM, so every plan's consequences, densities and distances are exact.
- A ``hare`` arm wraps its base method: ``get_method("hare", context, base=<base method>,
  **options)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.preferences import CostProfile
from engine.recourse import get_method
from engine.recourse.base import Classifier, RecourseContext, RecourseMethod
from engine.scenarios import get_scenario
from engine.scenarios.base import Scenario
from protocols.schema import ArmSpec, Protocol


class MethodUnavailableError(RuntimeError):
    """A protocol's method cannot be built here (not implemented yet or not trained)."""


def load_classifier(scenario: Scenario, kind: str) -> Classifier:
    """The decision model of a study (module docstring)."""
    if kind == "bayes":
        from engine.recourse_benchmark import BayesDecision

        return BayesDecision(scenario)
    from engine.artifacts import load_decision_model

    return load_decision_model(scenario.name)


def build_method(
    arm: ArmSpec, context: RecourseContext, base: RecourseMethod | None = None
) -> RecourseMethod:
    """The method object of an arm (a hare arm wraps ``base``)."""
    try:
        if arm.method == "hare":
            return get_method("hare", context, base=base, **arm.options)
        return get_method(arm.method, context, **arm.options)
    except (ImportError, AttributeError) as e:
        raise MethodUnavailableError(
            f"arm {arm.id!r}: method {arm.method!r} is not available in this installation "
            f"({e})"
        ) from e
    except TypeError as e:
        raise MethodUnavailableError(f"arm {arm.id!r}: bad options for {arm.method!r}: {e}") from e


@dataclass
class StudyResources:
    """The scenario, classifier, per-arm contexts and methods of a study (and the HARE
    session class, replaceable in tests)."""

    scenario: Scenario
    classifier: Classifier
    contexts: dict[str, RecourseContext] = field(default_factory=dict)
    methods: dict[str, RecourseMethod] = field(default_factory=dict)
    hare_session: Any = None  # the HareSession class (None: engine.recourse.hare_session)

    def context(self, arm: ArmSpec) -> RecourseContext:
        if arm.id not in self.contexts:
            self.contexts[arm.id] = RecourseContext(
                self.scenario, self.classifier, cost_profile=CostProfile(arm.cost_profile)
            )
        return self.contexts[arm.id]

    def method(self, arm: ArmSpec) -> RecourseMethod:
        if arm.id not in self.methods:
            base = self.base_method(arm) if arm.method == "hare" else None
            self.methods[arm.id] = build_method(arm, self.context(arm), base)
        return self.methods[arm.id]

    def base_method(self, arm: ArmSpec) -> RecourseMethod:
        """The base generator of a hare arm (the plan HARE's final plan is compared with)."""
        key = f"{arm.id}/base"
        if key not in self.methods:
            if arm.base is None:
                raise ValueError(f"arm {arm.id!r} has no base method")
            base_arm = ArmSpec(id=arm.id, method=arm.base, options=arm.base_options,
                               cost_profile=arm.cost_profile)
            self.methods[key] = build_method(base_arm, self.context(arm))
        return self.methods[key]


def study_resources(
    protocol: Protocol,
    *,
    decision_model: str | None = None,
    classifier: Classifier | None = None,
    methods: dict[str, Any] | None = None,
) -> StudyResources:
    """Resources for ``protocol``; ``decision_model`` overrides the protocol's choice,
    ``classifier``/``methods`` (arm id -> method) inject ready objects (tests)."""
    scenario = get_scenario(protocol.scenario)
    clf = classifier or load_classifier(scenario, decision_model or protocol.decision_model)
    res = StudyResources(scenario, clf)
    for arm_id, method in (methods or {}).items():
        res.methods[arm_id] = method
        if getattr(method, "context", None) is not None:
            res.contexts[arm_id] = method.context
    return res
