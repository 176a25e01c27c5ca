"""What not knowing the equations costs: plans found on a learned world, judged by the truth.

A data scenario (engine.scenarios, ``world.kind: data``) has no equations: its world model is
the causal flow learned from its samples (engine.flow_scm), and every method plans on it.
When the scenario names the exact SCM that made the data (``truth``), the recourse
benchmark adds, for every row of such a scenario:

- ``validity_exact``: the share of people whose plan is still favourable when its action
  do(x_A = a) is applied in the TRUE world, h(x'_exact) with x'_exact the exact SCM's
  counterfactual and h the same decision model (no plan counts as invalid, as ``validity``);
- ``plausibility_exact``: the share with log p*(x'_exact) >= log p*(x) under the exact
  density p* (the Oracle's plausibility constraint, judged by the truth);

and, for every method that needs an exact world (the Oracle), a second row with
``world: exact``: the same method searching the exact SCM for the same people, profiles and
decision model (what knowing the equations would give). Rows of a learned world say
``world: learned``; other scenarios' rows ``world: exact``.
"""

from __future__ import annotations

from typing import Any

import torch

from engine.decision import Classifier
from engine.recourse.base import RecourseContext, RecourseMethod
from engine.recourse.batch import RecourseBatch
from engine.scenarios.base import Scenario
from engine.scm import StructuralCausalModel


def learned_world(scenario: Scenario) -> bool:
    """Whether the scenario's methods plan on a learned world (a data scenario)."""
    return scenario.world_kind == "data"


def world_label(scenario: Scenario) -> str:
    return "learned" if learned_world(scenario) else "exact"


def truth_of(scenario: Scenario) -> StructuralCausalModel | None:
    """The exact SCM a learned world is judged by (None: not a data world, or unknown)."""
    return scenario.exact_scm if learned_world(scenario) else None


def exact_evaluation(batch: RecourseBatch, classifier: Classifier,
                     truth: StructuralCausalModel) -> dict[str, float]:
    """``validity_exact`` and ``plausibility_exact`` of a batch (module docstring)."""
    x, mask, values = batch.x, batch.action_mask, batch.action_values
    with torch.no_grad():
        x_cf = truth.counterfactual(x, mask, torch.where(mask, values, x))
        ok = classifier.decision(x_cf.float()).bool() & batch.found
        plausible = truth.log_prob(x_cf) >= truth.log_prob(x)
    n = max(len(batch), 1)
    return {"validity_exact": float(ok.sum()) / n,
            "plausibility_exact": float((plausible & batch.found).sum()) / n}


def exact_world_twin(method: RecourseMethod, truth: StructuralCausalModel,
                     options: dict[str, Any]) -> RecourseMethod:
    """The same method (same options and cost profile) on the exact world."""
    from engine.recourse import build_method  # the registry imports the methods

    ctx = method.context
    exact = RecourseContext(ctx.scenario, ctx.classifier, world=truth,
                            cost_profile=ctx.cost_profile, density_source="scm")
    return build_method(method.name, exact, **options)
