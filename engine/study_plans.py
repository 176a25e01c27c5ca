"""Recourse plans for user studies, in numpy: the engine side of ``protocols``.

The study layer never touches torch; it asks the engine through these functions, which take
and return numpy arrays:

- ``decide``: the decision model's favourable probability and decision for profiles;
- ``rejected_profiles``: a split's profiles that the model rejects, inside the training
  range (people for a study: personas and synthetic participants);
- ``method_plans``: a method's candidate set (or its one recourse per person, kept where it
  found an action) as a ``PlanTable``;
- ``evaluate_plans``: actions evaluated with ``RecourseContext.evaluate`` against the
  person's STATED profile (everybody-can-act-on-everything when there was no elicitation),
  plus ``metrics.preference_satisfaction`` / ``preference_violation`` (NaN without
  elicitation) and the changed items;
- ``changed_items``: which items of a profile change (the L0-over-the-profile rule);
- ``stack_profiles`` / ``profiles_from_lists``: actionability profiles of several people.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import torch

from engine import metrics
from engine.preferences import ActionabilityProfiles, all_actionable
from engine.recourse.base import Classifier, RecourseBatch, RecourseContext, RecourseMethod
from engine.scenarios.base import Scenario

METRIC_FIELDS: tuple[str, ...] = (
    "found", "valid", "cost", "weighted_cost", "log_prob_factual", "log_prob_cf", "plausible",
    "hap", "violations", "l0_actions", "l1_actions", "l0_profile", "l1_profile",
)


@dataclass
class PlanTable:
    """Plans as numpy arrays, one row per plan (``person`` indexes the input batch).

    ``values`` holds METRIC_FIELDS, and after ``evaluate_plans`` also ``satisfaction`` and
    ``violation``; ``changed`` marks the items that change (actions and consequences).
    """

    method: str
    person: np.ndarray
    x: np.ndarray
    x_cf: np.ndarray
    action_mask: np.ndarray
    action_values: np.ndarray
    values: dict[str, np.ndarray]
    density_source: str
    changed: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))

    def __len__(self) -> int:
        return len(self.person)

    def take(self, idx: np.ndarray | list[int]) -> PlanTable:
        idx = np.asarray(idx, dtype=int)
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray):
                out[f.name] = v[idx] if len(v) else v
            elif isinstance(v, dict):
                out[f.name] = {k: a[idx] for k, a in v.items()}
            else:
                out[f.name] = v
        return PlanTable(**out)

    def row_values(self, i: int) -> dict[str, Any]:
        """Plain Python values of row i (NaN becomes None)."""
        out: dict[str, Any] = {}
        for k, a in self.values.items():
            v = a[i].item()
            out[k] = None if isinstance(v, float) and v != v else v
        return out


def _table(batch: RecourseBatch) -> PlanTable:
    return PlanTable(
        method=batch.method,
        person=batch.person.numpy().astype(int),
        x=batch.x.numpy(),
        x_cf=batch.x_cf.numpy(),
        action_mask=batch.action_mask.numpy(),
        action_values=batch.action_values.numpy(),
        values={f: getattr(batch, f).numpy() for f in METRIC_FIELDS},
        density_source=batch.density_source,
    )


def decide(classifier: Classifier, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P(favourable), favourable) of profiles x (n, d) or (d,)."""
    t = torch.as_tensor(np.atleast_2d(np.asarray(x, dtype=np.float32)))
    with torch.no_grad():
        proba = classifier.predict_proba(t).double().numpy()
        ok = classifier.decision(t).bool().numpy()
    return proba, ok


def rejected_profiles(scenario: Scenario, classifier: Classifier, split: str) -> np.ndarray:
    """The split's profiles the model rejects that lie inside the training range."""
    x = scenario.dataset[split][0]
    lo, hi = scenario.bounds
    _, ok = decide(classifier, x.numpy())
    keep = ~torch.as_tensor(ok) & ((x >= lo) & (x <= hi)).all(dim=1)
    return x[keep].numpy().copy()


def stack_profiles(items: list[ActionabilityProfiles]) -> ActionabilityProfiles:
    """One batch of several people's profiles (same elicitation scheme)."""
    return ActionabilityProfiles(
        torch.cat([p.hard_mask for p in items]), torch.cat([p.scores for p in items]),
        torch.cat([p.levels for p in items]), items[0].elicitation,
    )


def profiles_from_lists(
    hard_mask: list[list[bool]], scores: list[list[float]], levels: list[float], scheme: str
) -> ActionabilityProfiles:
    """Profiles from plain lists (as stored)."""
    return ActionabilityProfiles(
        torch.tensor(hard_mask, dtype=torch.bool), torch.tensor(scores, dtype=torch.float64),
        torch.tensor(levels, dtype=torch.float64), scheme,  # type: ignore[arg-type]
    )


def everybody(scenario: Scenario, n: int) -> ActionabilityProfiles:
    """n people able to act on every globally actionable feature (no stated constraints)."""
    return all_actionable(scenario.feature_names, scenario.actionable, n)


def method_plans(
    method: RecourseMethod, x: np.ndarray, seen: ActionabilityProfiles, *, candidates: bool
) -> PlanTable:
    """The method's candidate set, or its recourse where it found an action."""
    xt = torch.as_tensor(np.asarray(x, dtype=np.float64))
    if candidates:
        return _table(method.candidates(xt, seen))
    batch = method.recourse(xt, seen)
    return _table(batch.select(batch.found.nonzero().flatten()))


def changed_items(scenario: Scenario, x: np.ndarray, x_cf: np.ndarray) -> np.ndarray:
    """(n, d) bool: items that change by more than ``metrics.CHANGE_TOLERANCE`` of their
    range (any change of a category): the rule of L0 over the profile."""
    categorical = torch.tensor([f.discrete for f in scenario.features])
    delta = metrics.feature_deltas(
        torch.as_tensor(np.atleast_2d(x)), torch.as_tensor(np.atleast_2d(x_cf)), scenario.ranges,
        categorical,
    )
    return (delta > metrics.CHANGE_TOLERANCE).numpy()


def evaluate_plans(
    context: RecourseContext,
    method_name: str,
    x: np.ndarray,
    action_mask: np.ndarray,
    action_values: np.ndarray,
    stated: ActionabilityProfiles | None,
    *,
    x_cf: np.ndarray | None = None,
    found: np.ndarray | None = None,
) -> PlanTable:
    """Plans evaluated against the stated profiles (one row each; module docstring)."""
    xt = torch.as_tensor(np.atleast_2d(np.asarray(x, dtype=np.float64)))
    mask = torch.as_tensor(np.atleast_2d(np.asarray(action_mask, dtype=bool)))
    values = torch.as_tensor(np.atleast_2d(np.asarray(action_values, dtype=np.float64)))
    profiles = stated if stated is not None else everybody(context.scenario, xt.shape[0])
    batch = context.evaluate(
        method_name, xt, mask, values, profiles, runtime=0.0,
        x_cf=None if x_cf is None else torch.as_tensor(np.atleast_2d(x_cf)),
        found=None if found is None else torch.as_tensor(np.asarray(found, dtype=bool)),
    )
    table = _table(batch)
    table.values["satisfaction"] = metrics.preference_satisfaction(mask, stated).numpy()
    table.values["violation"] = metrics.preference_violation(
        mask, None if stated is None else stated.hard_mask
    ).numpy()
    table.changed = changed_items(context.scenario, table.x, table.x_cf)
    return table
