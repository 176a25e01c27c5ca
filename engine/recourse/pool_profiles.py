"""Whole pool profiles as plans: the reference user study's counterfactual samples
(the reference user study, section 3.2), for worlds given by a profile pool and a fixed rule.

For a person x and a pool profile z (the scenario's training split), the candidate plan is
"become z": the counterfactual x' takes z's value of every feature except the immutable
ones, which stay the person's (the reference world: the loan the person applies for),

    x'_j = x_j  (j immutable),     x'_j = z_j  (otherwise),

the actions are the globally actionable features where z differs from x (mask m_j = 1[z_j
!= x_j]); mutable non-actionable features (the reference world's income) move with the
profile as its consequence. z is a candidate for x when (section 3.2.1)

1. the decision model approves x' (the reference rule: z's income >= 4 x x's loan, i.e. at
   least 4/3 of x's income), and
2. every change respects its feature's allowed direction (Table 1: FeatureSpec.direction,
   +1 never lower, -1 never higher, 0 either), and, when the arm is personalized, acts only
   on features in the person's stated actionable set.

``candidates`` returns every candidate of every person (the distance design then picks one
of the sparsest, one of the most proximate and three at random); ``recourse`` the one of
least weighted cost. Batched over people and the whole pool (chunks of people).
"""

from __future__ import annotations

import torch
from torch import Tensor

from engine.preferences import ActionabilityProfiles
from engine.recourse.base import Capabilities, RecourseContext, RecourseMethod, Timer
from engine.recourse.batch import RecourseBatch
from engine.recourse.plan_rules import (
    action_obeys,
    against_direction,
    directions_of,
    inside_bounds,
)
from engine.recourse.pool import _cheapest
from engine.scenarios.base import Role
from engine.scm import ArrayLike


class PoolProfiles(RecourseMethod):
    """Pool profiles adopted whole (module docstring); ``chunk_people`` people per batch."""

    name = "pool-profiles"
    capabilities = Capabilities(candidates=True)

    def __init__(self, context: RecourseContext, *, chunk_people: int = 64) -> None:
        super().__init__(context)
        if chunk_people < 1:
            raise ValueError(f"chunk_people must be >= 1, got {chunk_people}")
        self.chunk_people = chunk_people
        sc = context.scenario
        self._direction = directions_of(sc, context.rules)
        self._immutable = torch.tensor([f.role is Role.IMMUTABLE for f in sc.features])
        self._actionable = sc.actionable_mask()
        self.pool = sc.dataset["train"][0].to(torch.float64)

    def donors(self, x: Tensor, hard_mask: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """(person, pool index, x') of every candidate of the people x (module docstring)."""
        z = self.pool[None, :, :]  # (1, P, d)
        xe = x[:, None, :]  # (n, 1, d)
        x_cf = torch.where(self._immutable, xe, z)  # (n, P, d)
        move = x_cf - xe
        ok = ~against_direction(self._direction, move).any(dim=2)
        acted = (move != 0) & self._actionable
        sc = self.context.scenario
        ok &= ~(acted & ~inside_bounds(sc, self.context.rules, x, x_cf)).any(dim=2)
        ok &= ~(acted & ~hard_mask[:, None, :]).any(dim=2)
        ok &= acted.any(dim=2)
        person, donor = ok.nonzero(as_tuple=True)
        if len(person) == 0:
            return person, donor, x_cf[person, donor]
        cf = x_cf[person, donor]
        with torch.no_grad():
            valid = self.context.classifier.decision(cf.float()).bool()
        # under plan rules, no donor whose adoption asks for a change too small to show
        valid &= action_obeys(sc, self.context.rules, x[person], cf,
                              acted[person, donor])
        return person[valid], donor[valid], cf[valid]

    def candidates(self, factuals: ArrayLike, profiles: ActionabilityProfiles) -> RecourseBatch:
        """Every candidate of every person; ``person`` says whose."""
        ctx = self.context
        with Timer() as timer:
            x = ctx.check_inputs(factuals, profiles)
            if x.shape[0] == 0:
                raise ValueError("factuals is empty: expected at least one profile")
            people, cfs = [], []
            for s in range(0, x.shape[0], self.chunk_people):
                sl = slice(s, min(s + self.chunk_people, x.shape[0]))
                person, _, cf = self.donors(x[sl], profiles.hard_mask[sl])
                people.append(person + s)
                cfs.append(cf)
            person, x_cf = torch.cat(people), torch.cat(cfs)
            mask = (x_cf != x[person]) & self._actionable
        return ctx.evaluate(self.name, x[person], mask, x_cf, profiles[person],
                            runtime=timer.seconds, person=person, x_cf=x_cf)

    def recourse(self, factuals: ArrayLike, profiles: ActionabilityProfiles) -> RecourseBatch:
        """Per person the candidate of least weighted cost (no action when none)."""
        ctx = self.context
        x = ctx.check_inputs(factuals, profiles)
        cands = self.candidates(x, profiles)
        best = _cheapest(cands.person, cands.weighted_cost, x.shape[0])
        found = best >= 0
        mask = torch.zeros_like(x, dtype=torch.bool)
        x_cf = x.clone()
        rows = best[found]
        mask[found] = cands.action_mask[rows]
        x_cf[found] = cands.x_cf[rows]
        return ctx.evaluate(self.name, x, mask, x_cf, profiles, runtime=cands.runtime,
                            found=found, x_cf=x_cf)

