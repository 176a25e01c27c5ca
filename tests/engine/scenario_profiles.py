"""Random preference profiles and recourse contexts of a scenario, as the engine tests build
them."""

from __future__ import annotations

from engine.preferences import ActionabilityProfiles, CostProfile, Elicitation, sample_profiles
from engine.recourse.base import RecourseContext
from engine.scenarios import Scenario


def profiles_of(scenario: Scenario, n: int, k: int | None = None, seed: int = 0,
                elicitation: Elicitation = "ranking") -> ActionabilityProfiles:
    """``n`` uniform random profiles over the scenario's actionable features, each person
    able to change ``k`` of them (None: a random number per person)."""
    return sample_profiles(scenario.feature_names, scenario.actionable, n, n_actionable=k,
                           elicitation=elicitation, seed=seed)


def context_of(scenario: Scenario, classifier, cost_profile: str = "constant"
               ) -> RecourseContext:
    """The recourse context of ``classifier`` on the scenario with a cost profile."""
    return RecourseContext(scenario, classifier, cost_profile=CostProfile(cost_profile))
