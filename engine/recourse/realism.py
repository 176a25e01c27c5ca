"""Plans a person can take seriously: within display bounds, no needless or invisible actions.

Three rules, each batched over a whole set of plans (no per-plan Python loop):

- **Display bounds.** A plan whose counterfactual profile x' leaves the scenario's display
  bounds (``Scenario.display_bounds``: a loan of at least $1,000, ...) on an item that
  changes is not shown (``within_bounds``).
- **No needless action** (``prune_actions``, a named option: on by default in protocols, off
  in paper reproductions, which report methods' plans as generated). Greedy backward
  elimination: with A the plan's action set, for the actions j in A taken in order of
  increasing normalized change |a_j - x_j| / M_j (M_j the feature's range), drop j when
  the plan stays valid without it:

      A <- A \\ {j}   if   h( CF(x, do(x_{A \\ {j}} = a_{A \\ {j}})) ) = 1

  where CF recomputes every descendant through the world model and h is the decision model.
  One pass per rank, each a single batched counterfactual and decision; passes repeat until
  nothing is dropped (validity is not monotone in A: an action that hurts approval, such
  as a larger loan, can make another action look needed), so the result is minimal: no
  single remaining action can be dropped. A plan that asked
  for a larger loan beside a large savings increase loses the loan change when the savings
  alone suffice.
- **No invisible action.** An action whose shown value rounds to the current one (change
  below the feature's display resolution, e.g. $0.40 of income) is dropped the same way,
  first; when the plan needs it, the plan is flagged ``invisible`` (the caller does not
  show it: the person would be asked to change something they cannot see).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from engine.preferences import ActionabilityProfiles
from engine.recourse.base import RecourseContext
from engine.recourse.batch import RecourseBatch
from engine.recourse.plan_rules import displayed
from engine.scenarios.base import Scenario


def invisible_actions(scenario: Scenario, x: Tensor, x_cf: Tensor, mask: Tensor) -> Tensor:
    """(n, d) bool: actions whose shown value equals the current one."""
    return mask & (displayed(scenario, x) == displayed(scenario, x_cf))


def within_bounds(scenario: Scenario, x: Tensor, x_cf: Tensor) -> Tensor:
    """(n,) bool: every item that changes from x to x' stays within the display bounds (an
    unchanged item is the person's own value, shown as it is)."""
    lo, hi = scenario.display_bounds[0].to(x_cf.dtype), scenario.display_bounds[1].to(x_cf.dtype)
    changed = scenario.changed(x, x_cf)
    outside = (x_cf < lo) | (x_cf > hi)
    return ~(changed & outside).any(dim=1)


@dataclass
class Pruned:
    """``plans`` re-evaluated with their needless actions dropped; ``invisible`` (n,) marks
    plans that still need an action a person cannot see; ``dropped`` counts the actions
    removed per plan."""

    plans: RecourseBatch
    invisible: Tensor
    dropped: Tensor


def prune_actions(
    context: RecourseContext, plans: RecourseBatch, profiles: ActionabilityProfiles | None
) -> Pruned:
    """Drop every action a valid plan does not need (module docstring); ``profiles`` per row
    (or None) re-evaluate the plans' metrics."""
    sc = context.scenario
    x, values = plans.x, plans.action_values
    mask = plans.action_mask.clone()
    keep_going = plans.valid & plans.found
    ranges = context.ranges.to(x.dtype)
    size = (values - x).abs() / ranges
    # invisible actions first (rank -1 in effect), then by increasing normalized change
    key = torch.where(invisible_actions(sc, x, plans.x_cf, mask), size - 1e6, size)
    key = torch.where(mask, key, torch.full_like(key, float("inf")))
    order = torch.argsort(key, dim=1)
    rows = torch.arange(len(plans))
    changed = True
    while changed:  # until no single action can go (a drop can make a kept action needless)
        changed = False
        for rank in range(sc.d):
            j = order[:, rank]
            is_action = mask[rows, j] & keep_going & (mask.sum(dim=1) > 1)
            if not is_action.any():
                continue
            idx = is_action.nonzero().flatten()
            trial = mask[idx].clone()
            trial[torch.arange(len(idx)), j[idx]] = False
            with torch.no_grad():
                x_cf = context.world.counterfactual(x[idx], trial, values[idx]).to(torch.float64)
                ok = context.classifier.decision(x_cf.float()).bool()
            if ok.any():
                mask[idx[ok]] = trial[ok]
                changed = True
    dropped = plans.action_mask.sum(dim=1) - mask.sum(dim=1)
    out = context.evaluate(plans.method, x, mask, values, profiles, runtime=plans.runtime,
                           person=plans.person, found=plans.found)
    out.extras = dict(plans.extras)
    invisible = invisible_actions(sc, x, out.x_cf, mask).any(dim=1)
    return Pruned(out, invisible, dropped)


def showable(scenario: Scenario, plans: RecourseBatch) -> Tensor:
    """(n,) bool: plans fit to show a person: found, valid, within the display bounds and
    with no invisible action."""
    return (plans.found & plans.valid & within_bounds(scenario, plans.x, plans.x_cf)
            & ~invisible_actions(scenario, plans.x, plans.x_cf, plans.action_mask).any(dim=1))
