"""Actions as shifts in normalized units: the search space of the gradient methods and HARE.

A *shift action* z (n, d) moves each individually actionable feature j by z_j * M_j (M_j its
training range) relative to the value it would take after the interventions on its causal
ancestors, and leaves every other feature to the world model:

    v_j = x'_j(upstream) + z_j * M_j,   clamped into the training bounds,
    x'  = CF(x, do(x_S = v_S)),          S = { j in A : |z_j| > tol }.

Under a study's plan rules (``context.rules``) an action's value is clamped into the rules'
interval instead (engine.recourse.plan_rules.search_box: the plausible-change bounds with the
allowed direction folded in), so every point a search looks at asks only for changes the
rules allow; the features a plan does not act on keep the training bounds.

``realize`` computes this in index order (a topological order: the world models compute
features in index order), one world-model call per actionable feature, so that

- z = 0 is exactly "no action", and z is smooth (a shift of a feature whose ancestors were
  moved keeps the ancestors' effect on it), which gradient search and bisection need;
- the result is an ordinary hard intervention (mask, values) like every other method's, so
  ``RecourseContext.evaluate`` measures it the same way and the plan shows consequences.

``shift_of`` is the inverse: the shift that reproduces a hard action (a base method's plan).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import torch
from torch import Tensor

from engine.decision import favourable_logit as decision_logit
from engine.recourse.base import RecourseContext
from engine.recourse.plan_rules import project_shifts, search_box, shown_profile, snap_shifts

# Shifts smaller than this (in units of the feature's range) are "not acted on".
SHIFT_TOL = 1e-6


@dataclass
class Realized:
    """A batch of shift actions turned into hard interventions and their counterfactuals."""

    action_mask: Tensor  # (n, d) bool
    action_values: Tensor  # (n, d)
    x_cf: Tensor  # (n, d)


def allowed_mask(context: RecourseContext, hard_mask: Tensor) -> Tensor:
    """(n, d) bool: features the person can change (individually and globally actionable)."""
    return hard_mask.bool() & context.scenario.actionable_mask().to(hard_mask.device)


def abduction(context: RecourseContext, x: Tensor) -> Tensor | None:
    """The world model's noise of ``x`` when it computes shifts in one pass from that noise
    (the exact SCM): pass it to ``realize`` when the same people are moved many times; else
    None (a learned flow, or a tabular world, which has no noise: plans change only what they
    set)."""
    abduct = getattr(context.world, "abduct", None)
    one_pass = getattr(context.world, "shift_counterfactual", None)
    if one_pass is None or abduct is None or "noise" not in inspect.signature(one_pass).parameters:
        return None
    with torch.no_grad():
        return abduct(x)


def realize(context: RecourseContext, x: Tensor, z: Tensor, allowed: Tensor,
            noise: Tensor | None = None) -> Realized:
    """Hard interventions and counterfactuals of shifts ``z`` (module docstring).

    ``x`` (n, d) float64, ``z`` (n, d) (may require grad: x_cf is differentiable in z),
    ``allowed`` (n, d) bool; shifts outside ``allowed`` are ignored; ``noise``:
    ``abduction(context, x)``, or None to abduct here.
    """
    ranges = context.ranges.to(x.dtype)
    z = torch.where(allowed, z.to(x.dtype), torch.zeros_like(x))
    # Intervening on an allowed feature with z_j = 0 sets it to the value it takes anyway, so
    # the computation intervenes on every allowed feature (keeping d x'/d z_j non-zero at
    # z = 0) and only the features actually shifted are reported as acted on.
    world = context.world
    acted = allowed & (z.detach().abs() > SHIFT_TOL)
    lo, hi = action_limits(context, x, acted)
    one_pass = getattr(world, "shift_counterfactual", None)
    if one_pass is not None:  # the exact SCM computes the same thing in one pass
        x_cf = one_pass(x, allowed, z * ranges, lo, hi, **({} if noise is None else
                                                            {"noise": noise}))
        return Realized(acted, torch.where(acted, x_cf, x), x_cf)
    mask = torch.zeros_like(allowed)
    values = x.clone()
    x_cf = x
    for j in context.scenario.actionable:
        on = allowed[:, j : j + 1] & _column(j, x)
        if not bool(on.any()):
            continue
        if bool(mask.any()):
            x_cf = world.counterfactual(x, mask, values)
        v_j = torch.clamp(x_cf[:, j] + z[:, j] * ranges[j], lo[..., j], hi[..., j])
        values = torch.where(on, v_j.unsqueeze(1), values)
        mask = mask | on
    x_cf = world.counterfactual(x, mask, values) if bool(mask.any()) else x.clone()
    return Realized(acted, torch.where(acted, values, x), x_cf)


def action_limits(context: RecourseContext, x: Tensor, acted: Tensor) -> tuple[Tensor, Tensor]:
    """(lo, hi) the shifted values are clamped into: the training bounds (d,), or under plan
    rules (n, d) with each acted feature's interval of ``plan_rules.search_box`` inside."""
    lo, hi = context.scenario.bounds.to(x.dtype)
    rules = context.rules
    if rules is None:
        return lo, hi
    box_lo, box_hi = search_box(context.scenario, rules, x)
    box_lo, box_hi = box_lo.to(x.dtype), box_hi.to(x.dtype)
    on = acted.to(x.device)
    return (torch.where(on, torch.maximum(box_lo, lo), lo),
            torch.where(on, torch.minimum(box_hi, hi), hi))


class Counterfactuals:
    """``realize(context, x, z, allowed, noise).x_cf`` for the same people and many shifts z
    (a search's steps and halvings): the people, their mask and noise checked and prepared
    once, then per call only the arithmetic of ``realize`` (the exact SCM's one pass,
    StructuralCausalModel.shift_pass): the same operations, so the same bits and gradients.
    A world without the one pass from noise (``noise`` None) goes through ``realize``."""

    def __init__(self, context: RecourseContext, x: Tensor, allowed: Tensor,
                 noise: Tensor | None = None) -> None:
        self.context, self.x, self.allowed, self.noise = context, x, allowed, noise
        world = context.world
        self.fast = noise is not None and hasattr(world, "shift_pass")
        if self.fast:
            self.ranges = context.ranges.to(x.dtype)
            self.lo, self.hi = context.scenario.bounds.to(x.dtype)
            self.zeros = torch.zeros_like(x)
            # what shift_counterfactual's checks return for these people (bool mask)
            self.mask = world._as_mask(allowed, x.shape[0])
            self.shifted = [j for j in range(x.shape[1]) if bool(self.mask[:, j].any())]
            self.fixed = world.fixed_equations(noise, self.shifted)
            # under plan rules: each person's interval where acted (action_limits), made once
            self.box = None if context.rules is None else action_limits(
                context, x, torch.ones_like(allowed))

    def __call__(self, z: Tensor) -> Tensor:
        """x' of shifts z (n, d) (differentiable in z)."""
        if not self.fast:
            return realize(self.context, self.x, z, self.allowed, self.noise).x_cf
        z = torch.where(self.allowed, z.to(self.x.dtype), self.zeros)
        lo, hi = self.lo, self.hi
        if self.box is not None:
            acted = self.allowed & (z.detach().abs() > SHIFT_TOL)
            lo, hi = torch.where(acted, self.box[0], lo), torch.where(acted, self.box[1], hi)
        return self.context.world.shift_pass(self.noise, self.mask, z * self.ranges, lo,
                                             hi, self.shifted, self.fixed)


def shift_of(
    context: RecourseContext, x: Tensor, action_mask: Tensor, action_values: Tensor
) -> Tensor:
    """The shift z whose realization is the hard action (mask, values) (inverse of realize,
    up to the clamp into the training bounds)."""
    ranges = context.ranges.to(torch.float64)
    x = x.to(torch.float64)
    values = torch.where(action_mask.bool(), action_values.to(torch.float64), x)
    z = torch.zeros_like(x)
    mask = torch.zeros_like(action_mask, dtype=torch.bool)
    with torch.no_grad():
        for j in context.scenario.actionable:
            on = action_mask[:, j].bool()
            if not bool(on.any()):
                continue
            upstream = context.world.counterfactual(x, mask, values) if bool(mask.any()) else x
            z[:, j] = torch.where(on, (values[:, j] - upstream[:, j]) / ranges[j], z[:, j])
            mask = mask | (on.unsqueeze(1) & _column(j, x))
    return z


def obeying(context: RecourseContext, x: Tensor, z: Tensor, allowed: Tensor) -> Tensor:
    """Shifts z (n, d) a search may look at under the context's plan rules: projected onto
    the direction cone (plan_rules.project_shifts), realized inside the bounds (``realize``)
    and without the moves too small to show (plan_rules.snap_shifts); z itself without
    rules."""
    if context.rules is None:
        return z
    z = project_shifts(context.rules, z)
    with torch.no_grad():
        r = realize(context, x, z, allowed)
    return snap_shifts(context.scenario, context.rules, x, z, r.action_values, r.action_mask)


def shown_counterfactuals(context: RecourseContext, x: Tensor, z: Tensor,
                          allowed: Tensor) -> Tensor:
    """(n, k, d) counterfactuals of k shifts per person (z (n, k, d)) as a plan page shows
    them (plan_rules.shown_profile)."""
    n, k, d = z.shape
    with torch.no_grad():
        x_cf = realize(context, x.repeat_interleave(k, dim=0), z.reshape(n * k, d),
                       allowed.repeat_interleave(k, dim=0)).x_cf
    return shown_profile(context.scenario, x_cf).reshape(n, k, d)


def favourable_logit(context: RecourseContext, x_cf: Tensor) -> Tensor:
    """logit P(favourable | x'), differentiable where the classifier is (engine.decision)."""
    return decision_logit(context.classifier, x_cf)


def _column(j: int, x: Tensor) -> Tensor:
    col = torch.zeros(1, x.shape[1], dtype=torch.bool, device=x.device)
    col[0, j] = True
    return col
