"""Non-amortized base generators of the HARE paper, in shift-action space (shift_actions).

Both search over shifts z restricted to the person's actionable features A_i (immutable and
individually non-actionable features never move) and evaluate every point through the
context's world model, so a plan's consequences count towards its validity.

**Wachter** (Wachter et al. 2017), batched over people:

    min_z  lambda_i * max(0, margin - logit h(x'(z)))  +  sum_j w_ij |z_j|

with Adam; lambda_i doubles every ``patience`` steps while person i has no valid point yet.
The returned plan is the cheapest valid iterate (weighted L1 of z, w from the person's cost
profile); a person with none gets no action (``found`` False).

**Growing Spheres** (Laugel et al. 2018), batched over people: draw ``samples`` points
uniformly in a ball of radius eta (L2 over z on A_i) and halve eta while the ball already
holds a valid point; then grow spherical layers [a, a + eta) outward until one holds a valid
point and keep the closest valid one (L2). Feature selection: repeatedly drop the smallest
non-zero coordinate of z while the plan stays valid (sparser plans).

**Under a study's plan rules** (``context.rules``; a context without rules runs both as
published) both search only what the rules allow: a point's actions are realized inside the
rules' interval (shift_actions.realize: the plausible-change bounds with the direction
folded in) and a point is valid only when its actions also break no rule
(plan_rules.action_obeys). Wachter keeps the cheapest iterate as the rules allow it
(shift_actions.obeying); Growing Spheres samples the direction cone only (each sample
projected onto it and stripped of the moves too small to show, shift_actions.obeying); the
radius and the layers are the published ones.
"""

from __future__ import annotations

import torch
from torch import Tensor

from engine.preferences import ActionabilityProfiles
from engine.recourse.base import RecourseContext, RecourseMethod, Timer
from engine.recourse.batch import RecourseBatch
from engine.recourse.plan_rules import action_obeys
from engine.recourse.shift_actions import allowed_mask, favourable_logit, obeying, realize
from engine.scm import ArrayLike


class ShiftMethod(RecourseMethod):
    """A method that finds one shift z per person; ``recourse`` realizes and evaluates it."""

    def shifts(self, x: Tensor, profiles: ActionabilityProfiles) -> tuple[Tensor, Tensor]:
        """(z (n, d), found (n,) bool)."""
        raise NotImplementedError

    def recourse(self, factuals: ArrayLike, profiles: ActionabilityProfiles) -> RecourseBatch:
        x = self.context.check_inputs(factuals, profiles).to(torch.float64)
        if x.shape[0] == 0:
            raise ValueError("factuals is empty: expected at least one profile")
        with Timer() as t:
            z, found = self.shifts(x, profiles)
            with torch.no_grad():
                r = realize(self.context, x, z, allowed_mask(self.context, profiles.hard_mask))
        return self.context.evaluate(
            self.name, x, r.action_mask, r.action_values, profiles,
            runtime=t.seconds, found=found, x_cf=r.x_cf,
        )

    def valid(self, x: Tensor, z: Tensor, allowed: Tensor) -> Tensor:
        """(n,) bool: h(x'(z)) favourable and, under plan rules, no action breaking one."""
        with torch.no_grad():
            r = realize(self.context, x, z, allowed)
            ok = self.context.classifier.decision(r.x_cf.float()).bool()
            if self.context.rules is None:
                return ok
            return ok & action_obeys(self.context.scenario, self.context.rules, x,
                                     r.action_values, r.action_mask)


class Wachter(ShiftMethod):
    """Wachter-style gradient counterfactual (module docstring for the objective)."""

    name = "wachter"

    def __init__(
        self,
        context: RecourseContext,
        *,
        steps: int = 300,
        lr: float = 0.01,
        lam: float = 1.0,
        margin: float = 0.1,
        patience: int = 50,
    ) -> None:
        super().__init__(context)
        if steps < 1 or lr <= 0 or lam <= 0 or patience < 1 or margin < 0:
            raise ValueError("wachter needs steps >= 1, lr > 0, lam > 0, patience >= 1, margin >= 0")
        self.steps, self.lr, self.lam, self.margin, self.patience = steps, lr, lam, margin, patience

    def shifts(self, x: Tensor, profiles: ActionabilityProfiles) -> tuple[Tensor, Tensor]:
        ctx = self.context
        allowed = allowed_mask(ctx, profiles.hard_mask)
        w = profiles.weights(ctx.cost_profile).to(torch.float64)
        n = x.shape[0]
        z = torch.zeros_like(x, requires_grad=True)
        opt = torch.optim.Adam([z], lr=self.lr)
        lam = torch.full((n,), self.lam, dtype=torch.float64)
        best = torch.zeros_like(x)
        best_cost = torch.full((n,), float("inf"), dtype=torch.float64)
        for step in range(self.steps):
            r = realize(ctx, x, z, allowed)
            logit = favourable_logit(ctx, r.x_cf)
            cost = (w * z.abs() * allowed).sum(dim=1)
            loss = (lam * torch.relu(self.margin - logit) + cost).sum()
            with torch.no_grad():
                seen, seen_cost = z.detach(), cost.detach()
                if ctx.rules is None:
                    ok = ctx.classifier.decision(r.x_cf.float()).bool()
                else:  # the iterate as the rules allow it (module docstring)
                    seen = obeying(ctx, x, seen, allowed)
                    seen_cost = (w * seen.abs() * allowed).sum(dim=1)
                    ok = self.valid(x, seen, allowed)
                ok &= seen_cost < best_cost
                best = torch.where(ok[:, None], seen, best)
                best_cost = torch.where(ok, seen_cost, best_cost)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if (step + 1) % self.patience == 0:
                lam = torch.where(torch.isinf(best_cost), lam * 2.0, lam)
        return best * allowed, torch.isfinite(best_cost)


class GrowingSpheres(ShiftMethod):
    """Growing Spheres (module docstring); ``seed`` makes it deterministic."""

    name = "gs"

    def __init__(
        self,
        context: RecourseContext,
        *,
        samples: int = 256,
        eta: float = 0.1,
        halvings: int = 8,
        max_layers: int = 200,
        seed: int = 0,
    ) -> None:
        super().__init__(context)
        if samples < 1 or eta <= 0 or halvings < 0 or max_layers < 1:
            raise ValueError("gs needs samples >= 1, eta > 0, halvings >= 0, max_layers >= 1")
        self.samples, self.eta, self.halvings = samples, eta, halvings
        self.max_layers, self.seed = max_layers, seed

    def _layer(
        self, x: Tensor, allowed: Tensor, inner: Tensor, outer: Tensor, gen: torch.Generator
    ) -> tuple[Tensor, Tensor]:
        """``samples`` points per person uniform in the layer inner <= |z| < outer on A_i:
        (z (n, s, d), valid (n, s))."""
        n, d = x.shape
        s = self.samples
        u = torch.randn(n, s, d, generator=gen, dtype=torch.float64) * allowed[:, None]
        u = u / u.norm(dim=2, keepdim=True).clamp(min=1e-12)
        k = allowed.sum(dim=1).clamp(min=1).double()[:, None]  # dimension of each ball
        t = torch.rand(n, s, generator=gen, dtype=torch.float64)
        lo, hi = inner[:, None] ** k, outer[:, None] ** k
        radius = (lo + t * (hi - lo)) ** (1.0 / k)  # uniform in volume
        z = u * radius[:, :, None]
        xs, allowed_s = x.repeat_interleave(s, dim=0), allowed.repeat_interleave(s, 0)
        flat = obeying(self.context, xs, z.reshape(n * s, d), allowed_s)
        valid = self.valid(xs, flat, allowed_s)
        return flat.reshape(n, s, d), valid.reshape(n, s)

    def shifts(self, x: Tensor, profiles: ActionabilityProfiles) -> tuple[Tensor, Tensor]:
        allowed = allowed_mask(self.context, profiles.hard_mask)
        n = x.shape[0]
        gen = torch.Generator().manual_seed(self.seed)
        eta = torch.full((n,), self.eta, dtype=torch.float64)
        zero = torch.zeros(n, dtype=torch.float64)
        shrink = allowed.any(dim=1)
        for _ in range(self.halvings):  # halve while the ball already holds a valid point
            if not bool(shrink.any()):
                break
            _, valid = self._layer(x[shrink], allowed[shrink], zero[shrink], eta[shrink], gen)
            idx = shrink.nonzero().flatten()
            hit = valid.any(dim=1)
            eta[idx[hit]] /= 2.0
            shrink[idx[~hit]] = False
        best = torch.zeros_like(x)
        found = torch.zeros(n, dtype=torch.bool)
        inner = zero.clone()
        todo = allowed.any(dim=1)
        for _ in range(self.max_layers):
            if not bool(todo.any()):
                break
            idx = todo.nonzero().flatten()
            z, valid = self._layer(x[idx], allowed[idx], inner[idx], inner[idx] + eta[idx], gen)
            dist = torch.where(valid, z.norm(dim=2), torch.full_like(valid, float("inf"), dtype=z.dtype))
            j = dist.argmin(dim=1)
            hit = valid.any(dim=1)
            best[idx[hit]] = z[hit, j[hit]]
            found[idx[hit]] = True
            todo[idx[hit]] = False
            inner[idx] += eta[idx]
        return self._select_features(x, best, found, allowed), found

    def _select_features(self, x: Tensor, z: Tensor, found: Tensor, allowed: Tensor) -> Tensor:
        """Drop the smallest non-zero coordinate while the plan stays valid."""
        z = z.clone()
        active = found.clone()
        for _ in range(int(allowed.sum(dim=1).max()) if len(z) else 0):
            nonzero = (z.abs() > 0) & allowed
            active &= nonzero.sum(dim=1) > 1
            if not bool(active.any()):
                break
            mags = torch.where(nonzero, z.abs(), torch.full_like(z, float("inf")))
            j = mags.argmin(dim=1)
            trial = z.clone()
            trial[torch.arange(len(z)), j] = 0.0
            ok = active & self.valid(x, trial, allowed)
            z = torch.where(ok[:, None], trial, z)
            active &= ok
        return z
