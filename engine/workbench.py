"""A scenario ready to make plans: the Python API's entry point into the engine.

    loan = engine.load("loan")                       # scenario + decision model
    person = loan.rejected(1)                        # one applicant the model rejects
    can = loan.constraints({"income": 1, "savings": 2})   # what they can change, easiest first
    table = loan.plans(person, can, methods=["oracle", "icarma"])   # one row per plan

``load`` reads the scenario's trained decision model from ``$RECOURSE_STUDY_HOME`` (build it
with ``recourse-study train``; ``decision_model="bayes"`` needs no artifact); methods load
their own artifacts on first use. Methods run as published (the Oracle's grid around each
factual, iCARMA without repair), except that ``plans`` uses the iCARMA models
``recourse-study train`` builds (``training="fast"``); ``plans(..., training="paper")`` uses
the paper's (``recourse-study train --icarma-training paper``). Everything else is the engine's ordinary API
(``RecourseContext``, ``get_method``, ``RecourseBatch``), which the workbench only wires.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.artifacts import load_classifier
from engine.decision import Classifier, rejected_rows
from engine.preferences import ActionabilityProfiles, CostProfile, profiles_from_elicitation
from engine.recourse import (
    RecourseBatch,
    RecourseContext,
    RecourseMethod,
    build_method,
    option_names,
)
from engine.scenarios import get_scenario
from engine.scenarios.base import Scenario

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Workbench:
    """A scenario and its decision model (``load``).

    >>> import engine
    >>> loan = engine.load("loan", decision_model="bayes")   # no trained artifact needed
    >>> person = loan.rejected(1)
    >>> can = loan.constraints({"income": 1, "savings": 2})
    >>> table = loan.plans(person, can, methods=["oracle"])
    >>> table.loc[0, "method"], bool(table.loc[0, "valid"]), list(table.loc[0, "actions"])
    ('oracle', True, ['income'])
    """

    scenario: Scenario
    classifier: Classifier

    def context(self, cost_profile: str = "linear") -> RecourseContext:
        """The recourse context (exact SCM as world model) under a cost profile."""
        return RecourseContext(self.scenario, self.classifier,
                               cost_profile=CostProfile(cost_profile))  # type: ignore[arg-type]

    def rejected(self, n: int | None = None, split: str = "test") -> np.ndarray:
        """The first n profiles (n, d) of a split that the decision model rejects."""
        rows = rejected_rows(self.scenario, self.classifier, split)[:n]
        return self.scenario.dataset[split][0][rows].numpy()

    def constraints(
        self, answers: dict[str, Any] | Sequence[dict[str, Any]], scheme: str = "ranking",
        likert_levels: int | None = None,
    ) -> ActionabilityProfiles:
        """Actionability profiles from elicitation answers, one dict per person (a single
        dict: one person). Ranking: {feature: rank 1..m, easiest first}; features left out
        cannot change. Likert: {feature: difficulty}; binary: {feature: True}."""
        people = [answers] if isinstance(answers, dict) else list(answers)
        return profiles_from_elicitation(
            self.scenario.feature_names, self.scenario.actionable, people,
            scheme, likert_levels=likert_levels,  # type: ignore[arg-type]
        )

    def method(self, name: str, cost_profile: str = "linear", **options: Any) -> RecourseMethod:
        """The catalogue method ``name`` (MethodUnavailableError says why it cannot be built)."""
        return build_method(name, self.context(cost_profile), **options)

    def recourse(
        self, name: str, x: np.ndarray, profiles: ActionabilityProfiles,
        cost_profile: str = "linear", **options: Any,
    ) -> RecourseBatch:
        """One recourse per person from the method ``name``, every metric measured."""
        return self.method(name, cost_profile, **options).recourse(x, profiles)

    def plans(
        self, x: np.ndarray, profiles: ActionabilityProfiles,
        methods: Sequence[str] = ("oracle", "icarma"), cost_profile: str = "linear",
        **switches: Any,
    ) -> pd.DataFrame:
        """Each method's recourse for each person, one row per (method, person) with every
        metric (``RecourseBatch.to_frame``) and the actions in display units
        ({feature: suggested value}). ``switches`` (e.g. ``repair=True``, ``grid="shared"``,
        ``training="paper"``; default ``training="fast"``, module docstring) go to each
        method whose constructor takes them."""
        import pandas as pd

        taken = {o for name in methods for o in option_names(name)}
        if unused := sorted(set(switches) - taken):
            raise TypeError(f"no method of {list(methods)} takes {', '.join(unused)}")
        switches = {"training": "fast", **switches}
        frames = []
        for name in methods:
            options = {k: v for k, v in switches.items() if k in option_names(name)}
            batch = self.recourse(name, x, profiles, cost_profile, **options)
            frame = batch.to_frame()
            frame.insert(2, "actions", [self.actions(batch, i) for i in range(len(batch))])
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)

    def actions(self, batch: RecourseBatch, i: int) -> dict[str, str]:
        """Recourse i's actions in display units: {feature: the value to reach}."""
        features = self.scenario.features
        return {f.name: f.display.format(float(batch.action_values[i, j]))
                for j, f in enumerate(features) if bool(batch.action_mask[i, j])}


def load(scenario: str = "loan", decision_model: str = "trained") -> Workbench:
    """The scenario ``scenario`` with its decision model: ``trained`` (the artifact of
    ``recourse-study train``; ArtifactMissingError says how to build it) or ``bayes``.

    >>> import engine
    >>> loan = engine.load("loan", decision_model="bayes")
    >>> loan.scenario.name, type(loan.classifier).__name__, loan.rejected(3).shape
    ('loan', 'BayesDecision', (3, 7))
    """
    sc = get_scenario(scenario)
    return Workbench(sc, load_classifier(sc, decision_model))
