"""Latent-space base generators over the conditional VAE (engine.vaes.TabularVAE, artifact
``vae``): CCHVAE and CLUE. Both search the latent code z of the person's actionable part
u_A; the decoder is given the person's own immutable and consequence-only features, and a
decoded profile becomes a plan through engine.recourse.targets (features the person may not
change are held at x), so immutables never move. Candidates are judged on x' through the
world model; a person with no valid candidate is a counted failure.

**CCHVAE** (Pawelczyk et al., "Learning Model-Agnostic Counterfactual Explanations for
Tabular Data"), batched over people: z_0 = mu(x); in iteration k draw ``samples`` codes
z = z_0 + r * v / ||v||_p, v ~ N(0, I), r ~ U[(k-1) * step, k * step) (a growing spherical
layer in latent space), decode, and stop at the first layer holding a valid plan, keeping
the one closest to x (L_p in the unit cube). At most ``max_layers`` layers.

**CLUE** (Antoran et al., "Getting a CLUE: A Method for Explaining Uncertainty
Estimates"), used for recourse as HARE does through CARLA: Adam on z from
z_0 = mu(x) on the objective

    H(h(x(z))) + (lambda / d) * ||u(x(z)) - u(x)||_1,

H the classifier's predictive entropy; every iterate whose plan is valid is a candidate
and the closest (L1) is returned. A person stops when the objective changed by less than
1e-3 or 1% of its first value over ``early_stop`` steps (after ``min_steps``), or at
``steps``. CLUE seeks certainty, not the favourable class, so its success rate is low
where the classifier is confident about rejections (the HARE paper reports no CLUE
numbers on Adult for that reason).
"""

from __future__ import annotations

import torch
from torch import Tensor

from engine.recourse.base import Capabilities, RecourseContext
from engine.recourse.shift_actions import favourable_logit
from engine.recourse.targets import TargetMethod, judge, judge_many, snap, to_unit
from engine.trained import trained
from engine.vaes import TabularVAE


def _vae(context: RecourseContext) -> TabularVAE:
    model = trained().generative(context.scenario.name, "vae")
    assert isinstance(model, TabularVAE)
    return model


def _unit_distance(context: RecourseContext, x: Tensor, t: Tensor, allowed: Tensor,
                   p: int = 1) -> Tensor:
    """L_p distance in the unit cube between x and the plan of target t (last dimension)."""
    diff = (to_unit(context, t) - to_unit(context, x)) * allowed
    return diff.norm(p=p, dim=-1)


class CCHVAE(TargetMethod):
    """CCHVAE (module docstring); ``seed`` makes it deterministic.

    Hyper-parameters (CARLA's defaults unless stated; success rates in docs/bases.md):
    CCHVAE ``samples=300``, ``step=0.1``, ``p_norm=1`` (CARLA), ``max_layers=200`` (CARLA:
    1,000 iterations; 200 layers reach an L1 radius of 20 in an 8-dimensional standard-normal
    latent space); CLUE ``lr=0.5``, ``lam=4``, ``steps=400``, ``min_steps=3``,
    ``early_stop=3`` (CARLA); ``seed=0``.
    """

    name = "cchvae"
    capabilities = Capabilities(artifacts=("vae",))

    def __init__(
        self,
        context: RecourseContext,
        *,
        samples: int = 300,
        step: float = 0.1,
        p_norm: int = 1,
        max_layers: int = 200,
        seed: int = 0,
    ) -> None:
        super().__init__(context)
        if samples < 1 or step <= 0 or p_norm not in (1, 2) or max_layers < 1:
            raise ValueError("cchvae needs samples >= 1, step > 0, p_norm 1 or 2, max_layers >= 1")
        self.samples, self.step, self.p_norm = samples, step, p_norm
        self.max_layers, self.seed = max_layers, seed
        self.vae = _vae(context)

    def targets(self, x: Tensor, allowed: Tensor) -> tuple[Tensor, Tensor]:
        ctx, vae, s = self.context, self.vae, self.samples
        gen = torch.Generator().manual_seed(self.seed)
        with torch.no_grad():
            z0 = vae.encode(x)[0]
        best = x.clone()
        found = torch.zeros(len(x), dtype=torch.bool)
        todo = allowed.any(dim=1)
        for layer in range(self.max_layers):
            if not bool(todo.any()):
                break
            idx = todo.nonzero().flatten()
            v = torch.randn(len(idx), s, z0.shape[1], generator=gen)
            r = (layer + torch.rand(len(idx), s, 1, generator=gen)) * self.step
            z = z0[idx, None, :] + v * r / v.norm(p=self.p_norm, dim=2, keepdim=True)
            xs = x[idx].repeat_interleave(s, dim=0)
            with torch.no_grad():
                t = snap(ctx, vae.decode(z.reshape(len(idx) * s, -1), xs)).reshape(len(idx), s, -1)
            ok = judge_many(ctx, x[idx], t, allowed[idx])
            dist = _unit_distance(ctx, x[idx, None, :], t, allowed[idx, None, :], self.p_norm)
            dist = torch.where(ok, dist, torch.full_like(dist, float("inf")))
            j = dist.argmin(dim=1)
            hit = ok.any(dim=1)
            best[idx[hit]] = t[hit, j[hit]]
            found[idx[hit]] = True
            todo[idx[hit]] = False
        return best, found


class Clue(TargetMethod):
    """CLUE for recourse (module docstring)."""

    name = "clue"
    capabilities = Capabilities(artifacts=("vae",))

    def __init__(
        self,
        context: RecourseContext,
        *,
        lr: float = 0.5,
        lam: float = 4.0,
        steps: int = 400,
        min_steps: int = 3,
        early_stop: int = 3,
        seed: int = 0,
    ) -> None:
        super().__init__(context)
        if lr <= 0 or lam < 0 or steps < 1 or min_steps < 0 or early_stop < 1:
            raise ValueError("clue needs lr > 0, lam >= 0, steps >= 1, min_steps >= 0, "
                             "early_stop >= 1")
        self.lr, self.lam, self.steps = lr, lam, steps
        self.min_steps, self.early_stop, self.seed = min_steps, early_stop, seed
        self.vae = _vae(context)

    def targets(self, x: Tensor, allowed: Tensor) -> tuple[Tensor, Tensor]:
        ctx, vae = self.context, self.vae
        torch.manual_seed(self.seed)  # Adam is deterministic; kept for the record
        n, d = x.shape
        with torch.no_grad():
            z = vae.encode(x)[0].clone()
        z.requires_grad_(True)
        opt = torch.optim.Adam([z], lr=self.lr)
        best = x.clone()
        best_dist = torch.full((n,), float("inf"), dtype=torch.float64)
        active = allowed.any(dim=1)
        history: list[Tensor] = []
        for step in range(self.steps):
            if not bool(active.any()):
                break
            decoded = torch.where(allowed, vae.decode(z, x).double(), x)
            p = torch.sigmoid(favourable_logit(ctx, decoded)).clamp(1e-10, 1 - 1e-10)
            entropy = -(p * p.log() + (1 - p) * (1 - p).log())
            dist = _unit_distance(ctx, x, decoded, allowed)
            objective = entropy + self.lam / d * dist
            with torch.no_grad():
                t = snap(ctx, decoded.detach())
                ok = judge(ctx, x, t, allowed) & active
                closer = ok & (_unit_distance(ctx, x, t, allowed) < best_dist)
                best = torch.where(closer[:, None], t, best)
                best_dist = torch.where(closer, _unit_distance(ctx, x, t, allowed), best_dist)
                history.append(objective.detach())
                if step > self.min_steps and step >= self.early_stop:
                    change = (history[step - self.early_stop] - history[step]).abs()
                    active &= ~((change < 1e-3) | (change < 1e-2 * history[0].abs()))
            opt.zero_grad()
            (objective * active).sum().backward()
            opt.step()
        return best, torch.isfinite(best_dist)
