"""Counterfactual *points* as plans: the shared ground of the data- and latent-space bases
(FACE, CCHVAE, CLUE, CRUDS).

These methods propose a whole target profile t (a data point, a decoded latent code) rather
than an action. A target becomes a plan by keeping only what the person may change:

    t'_j = t_j  if j is in A_i (individually and globally actionable), else x_j,
    plan = do(x_S = t'_S),  S = { j in A_i : |t_j - x_j| > tol * M_j },
    x'   = CF(x, plan)      through the context's world model,

so an immutable (or individually non-actionable) feature is never acted on (under a study's
plan rules t'_j is first clamped into the rules' interval, plan_rules.search_box: the
plausible-change bounds with the direction folded in, and a change too small to show is not
made), so every candidate a search judges asks only what the rules allow, and the plan is
an ordinary hard intervention measured by ``RecourseContext.evaluate`` like every other
method's. A target is *valid* when h(x') is favourable; the bases judge their candidates on
x' (consequences included), so ``found`` means a valid plan was found.

Searches run in the *unit cube*: u = (x - lo) / M with lo the training minimum and M the
feature's range (the paper's data are scaled to [0, 1] the same way); discrete features are
rounded to their nearest code (``snap``) before a candidate is judged.
"""

from __future__ import annotations

import torch
from torch import Tensor

from engine.artifact_store import torch_threads
from engine.preferences import ActionabilityProfiles
from engine.recourse.base import RecourseContext, RecourseMethod, Timer
from engine.recourse.batch import RecourseBatch
from engine.recourse.plan_rules import within_rules
from engine.recourse.shift_actions import Realized, allowed_mask
from engine.scm import ArrayLike

# A target coordinate closer than this (in units of the feature's range) is "unchanged".
TARGET_TOL = 1e-6
# Torch threads of the searches: their matrices are small (a few thousand rows, widths up to
# 64), so a second thread only adds synchronization (docs/benchmarks.md, "Findings behind the
# code").
SEARCH_THREADS = 1


def unit_scale(context: RecourseContext) -> tuple[Tensor, Tensor]:
    """(lo (d,), M (d,)) float64: u = (x - lo) / M maps the training data into [0, 1]."""
    lo = context.scenario.bounds[0].to(torch.float64)
    return lo, context.ranges.to(torch.float64).clamp(min=1e-12)


def to_unit(context: RecourseContext, x: Tensor) -> Tensor:
    lo, m = unit_scale(context)
    return (x.to(torch.float64) - lo) / m


def from_unit(context: RecourseContext, u: Tensor) -> Tensor:
    lo, m = unit_scale(context)
    return lo + u.to(torch.float64) * m


def snap(context: RecourseContext, x: Tensor) -> Tensor:
    """Model-unit points clamped into the training bounds, discrete features rounded to the
    nearest code (what a decoder's continuous output means for a category)."""
    lo, hi = context.scenario.bounds.to(torch.float64)
    x = torch.maximum(torch.minimum(x.to(torch.float64), hi), lo)
    return torch.where(context.categorical.to(x.device), x.round(), x)


def realize_targets(context: RecourseContext, x: Tensor, t: Tensor, allowed: Tensor) -> Realized:
    """Targets ``t`` (n, d) as plans for factuals ``x`` (module docstring)."""
    x = x.to(torch.float64)
    t = torch.where(allowed, t.to(torch.float64), x)
    tol = TARGET_TOL * context.ranges.to(torch.float64)
    mask = allowed & ((t - x).abs() > tol)
    mask, t = within_rules(context.scenario, context.rules, x, mask, t)  # module docstring
    with torch.no_grad():
        x_cf = (context.world.counterfactual(x, mask, t).to(torch.float64)
                if bool(mask.any()) else x.clone())
    return Realized(mask, torch.where(mask, t, x), x_cf)


def judge(context: RecourseContext, x: Tensor, t: Tensor, allowed: Tensor) -> Tensor:
    """(n,) bool: the plan of target t for x is valid and acts at all (no grad)."""
    r = realize_targets(context, x, t, allowed)
    with torch.no_grad():
        ok = context.classifier.decision(r.x_cf.float()).bool()
    return ok & r.action_mask.any(dim=1)


def judge_many(context: RecourseContext, x: Tensor, t: Tensor, allowed: Tensor) -> Tensor:
    """``judge`` for s candidates per person: x (n, d), t (n, s, d) -> (n, s) bool."""
    n, s, d = t.shape
    ok = judge(context, x.repeat_interleave(s, dim=0), t.reshape(n * s, d),
               allowed.repeat_interleave(s, dim=0))
    return ok.reshape(n, s)


class TargetMethod(RecourseMethod):
    """A method that proposes one target point per person; ``recourse`` turns it into a
    plan (module docstring) and evaluates it. A person without a valid target gets no
    action (``found`` False): a counted failure, never a dropped row."""

    def targets(self, x: Tensor, allowed: Tensor) -> tuple[Tensor, Tensor]:
        """(targets (n, d) model units, found (n,) bool) for factuals x (n, d) float64 and
        the features each person may change, ``allowed`` (n, d) bool."""
        raise NotImplementedError

    def recourse(self, factuals: ArrayLike, profiles: ActionabilityProfiles) -> RecourseBatch:
        x = self.context.check_inputs(factuals, profiles).to(torch.float64)
        if x.shape[0] == 0:
            raise ValueError("factuals is empty: expected at least one profile")
        allowed = allowed_mask(self.context, profiles.hard_mask)
        with torch_threads(SEARCH_THREADS), Timer() as timer:
            t, found = self.targets(x, allowed)
            t = torch.where(found[:, None], t, x)  # no valid target: no action
            r = realize_targets(self.context, x, t, allowed)
        return self.context.evaluate(
            self.name, x, r.action_mask, r.action_values, profiles,
            runtime=timer.seconds, found=found, x_cf=r.x_cf,
        )
