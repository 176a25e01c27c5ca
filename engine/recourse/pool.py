"""Pool samples: the reference user study's way of making plans (its section 3.2).

The reference study built recourses from *counterfactual samples*: real profiles from a pool
the bank approves, shown as "your current profile -> this ideal profile", restricted to
changes a person can make (immutable items kept, items like education only allowed to go up).
Here the pool is the scenario's population (the training split) filtered by the decision
model h, and every plan is an action evaluated through the world model, so its L0/L1 over
actions and over the whole profile mean the same as for every other method.

For a person x with individually actionable set F_i:

1. Donors. Pool profiles z with h(z) favourable and the person's values of every discrete
   immutable feature (Loan: gender, exactly). Continuous immutable features (Loan: age) can
   rarely match exactly, so the ``donors`` pool profiles nearest to x in them are kept,
   nearness being sum_j |z_j - x_j| / sd_j over those features. A plan never acts on an
   immutable feature: the person keeps their own age; the donor is "an approved applicant
   like you".
2. Allowed items. Feature j may take the donor's value when j is in F_i, z_j != x_j and the
   move respects the feature's allowed direction and, under plan rules, its plausible-change
   bounds (engine.recourse.plan_bounds; FeatureSpec.direction: +1 only up, -1 only
   down, 0 either).
3. Plans. With ``partial`` (default) every non-empty subset S of the allowed items gives the
   action do(x_S = z_S); without it only S = all allowed items (the reference study's literal
   "become this profile", which with continuous features always changes every item and so
   cannot spread sparsity). Subsets are what spread L0 over 1..|F_i| the way the reference
   study's ordinal items did.
4. The world model computes the consequences, x' = CF(x, do(x_S = z_S)); a plan is kept when
   h(x') is favourable. Non-actionable mutable features (Loan: education) only move as
   consequences.
"""

from __future__ import annotations

import itertools
from functools import cached_property

import torch
from torch import Tensor

from engine.preferences import ActionabilityProfiles
from engine.recourse.base import Capabilities, RecourseContext, RecourseMethod, Timer
from engine.recourse.batch import RecourseBatch
from engine.recourse.plan_rules import against_direction, directions_of, inside_bounds
from engine.scm import ArrayLike


class PoolSamples(RecourseMethod):
    """Counterfactual samples from the approved population (math in the module docstring).

    ``donors``: approved pool profiles per person; ``partial``: also offer plans that adopt
    a subset of a donor's allowed items; ``chunk_people``: people evaluated together.

    ``candidates`` returns every kept plan (column ``person``); ``recourse`` returns, per person,
    the kept plan of least weighted cost (the person's cost profile), or no action when none is
    valid. Everything is batched over people, donors and subsets.
    """

    name = "pool"
    capabilities = Capabilities(candidates=True)

    def __init__(
        self,
        context: RecourseContext,
        *,
        donors: int = 40,
        partial: bool = True,
        chunk_people: int = 256,
    ) -> None:
        super().__init__(context)
        if donors < 1:
            raise ValueError(f"donors must be >= 1, got {donors}")
        if chunk_people < 1:
            raise ValueError(f"chunk_people must be >= 1, got {chunk_people}")
        self.donors = donors
        self.partial = partial
        self.chunk_people = chunk_people
        scenario = context.scenario
        self._direction = directions_of(scenario, context.rules)
        discrete = scenario.categorical
        immutable = torch.zeros(scenario.d, dtype=torch.bool)
        immutable[list(scenario.immutable)] = True
        self._match_exact = immutable & discrete
        self._match_near = immutable & ~discrete
        self._actionable = list(scenario.actionable)

    @cached_property
    def pool(self) -> Tensor:
        """(P, d) training-split profiles the decision model approves."""
        x = self.context.scenario.dataset["train"][0]
        with torch.no_grad():
            ok = self.context.classifier.decision(x.float()).bool()
        if not ok.any():
            raise ValueError("the decision model approves nobody in the training split")
        return x[ok]

    @cached_property
    def _subsets(self) -> Tensor:
        """(S, g) bool: every non-empty subset of the globally actionable features."""
        g = len(self._actionable)
        rows = [bits for bits in itertools.product((False, True), repeat=g) if any(bits)]
        return torch.tensor(rows, dtype=torch.bool)

    def donor_index(self, x: Tensor) -> Tensor:
        """(n, k) indices into ``pool`` of each person's donors (module docstring, step 1)."""
        pool = self.pool
        same = torch.ones(x.shape[0], pool.shape[0], dtype=torch.bool)
        for j in self._match_exact.nonzero().flatten().tolist():
            same &= x[:, j, None] == pool[None, :, j]
        dist = torch.zeros(x.shape[0], pool.shape[0], dtype=torch.float64)
        sds = self.context.scenario.stds
        for j in self._match_near.nonzero().flatten().tolist():
            dist += (x[:, j, None] - pool[None, :, j]).abs() / sds[j]
        dist = dist.masked_fill(~same, float("inf"))
        k = min(self.donors, pool.shape[0])
        d_k, idx = torch.topk(dist, k, dim=1, largest=False)
        # A person without any donor of their discrete kind gets index -1 (no plan).
        return idx.masked_fill(~torch.isfinite(d_k), -1)

    def _plans(
        self, x: Tensor, profiles: ActionabilityProfiles
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """(person, mask, values, x_cf) of every valid plan of a chunk of people."""
        n, d = x.shape
        donor_idx = self.donor_index(x)  # (n, k)
        has = donor_idx >= 0
        z = self.pool[donor_idx.clamp(min=0)]  # (n, k, d)
        act = self._actionable
        move = z[:, :, act] - x[:, None, act]
        direction = self._direction[act]
        allowed = (
            profiles.hard_mask[:, None, act]
            & (move != 0)
            & ~against_direction(direction, move)
            & inside_bounds(self.context.scenario, self.context.rules, x, z)[:, :, act]
            & has[:, :, None]
        )  # (n, k, g)
        if self.partial:
            subsets = self._subsets  # (S, g)
            fits = (subsets[None, None] & ~allowed[:, :, None]).any(dim=3).logical_not()
            person, donor, s = fits.nonzero(as_tuple=True)
            acted_g = subsets[s]
        else:
            person, donor = allowed.any(dim=2).nonzero(as_tuple=True)
            acted_g = allowed[person, donor]
        mask = torch.zeros(len(person), d, dtype=torch.bool)
        mask[:, act] = acted_g
        values = torch.where(mask, z[person, donor], x[person])
        if len(person) == 0:
            return person, mask, values, values.clone()
        with torch.no_grad():
            x_cf = self.context.world.counterfactual(x[person], mask, values).to(torch.float64)
            ok = self.context.classifier.decision(x_cf.float()).bool()
        return person[ok], mask[ok], values[ok], x_cf[ok]

    def candidates(self, factuals: ArrayLike, profiles: ActionabilityProfiles) -> RecourseBatch:
        """Every valid pool plan of every person (module docstring); ``person`` says whose."""
        ctx = self.context
        with Timer() as timer:
            x = ctx.check_inputs(factuals, profiles)
            if x.shape[0] == 0:
                raise ValueError("factuals is empty: expected at least one profile")
            parts = []
            for s in range(0, x.shape[0], self.chunk_people):
                sl = slice(s, min(s + self.chunk_people, x.shape[0]))
                person, mask, values, x_cf = self._plans(x[sl], profiles[sl])
                parts.append((person + s, mask, values, x_cf))
            person, mask, values, x_cf = (torch.cat(t) for t in zip(*parts, strict=True))
        return ctx.evaluate(
            self.name,
            x[person],
            mask,
            values,
            profiles[person],
            runtime=timer.seconds,
            person=person,
            x_cf=x_cf,
        )

    def recourse(self, factuals: ArrayLike, profiles: ActionabilityProfiles) -> RecourseBatch:
        """Per person the valid pool plan of least weighted cost (no action when none)."""
        ctx = self.context
        x = ctx.check_inputs(factuals, profiles)
        cands = self.candidates(x, profiles)
        n = x.shape[0]
        best = _cheapest(cands.person, cands.weighted_cost, n)
        found = best >= 0
        mask = torch.zeros_like(x, dtype=torch.bool)
        values = x.clone()
        x_cf = x.clone()
        rows = best[found]
        mask[found] = cands.action_mask[rows]
        values[found] = cands.action_values[rows]
        x_cf[found] = cands.x_cf[rows]
        return ctx.evaluate(
            self.name,
            x,
            mask,
            values,
            profiles,
            runtime=cands.runtime,
            found=found,
            x_cf=x_cf,
        )


def _cheapest(person: Tensor, cost: Tensor, n: int) -> Tensor:
    """Per person, the row of least cost among their rows (-1 if they have none)."""
    out = torch.full((n,), -1, dtype=torch.long)
    if len(person) == 0:
        return out
    order = torch.argsort(cost, stable=True)
    order = order[torch.argsort(person[order], stable=True)]
    p = person[order]
    first = torch.ones_like(p, dtype=torch.bool)
    first[1:] = p[1:] != p[:-1]
    out[p[first]] = order[first]
    return out
