"""CRUDS (Downs et al., "CRUDS: Counterfactual Recourse Using Disentangled Subspaces"):
recourse by moving a person in the label's own latent subspace of a conditional subspace
VAE (engine.vaes.CSVAE, artifact ``csvae``).

The CSVAE splits the latent code into z (what is not the label: the person's identity,
kept) and w (the label subspace). For factual x, z = mu_z(x) stays fixed; ``samples``
starting points per person are drawn from the favourable class's region of the label
subspace, w_0 ~ p(w | y = favourable), and each is refined by RMSprop on

    BCE(h(x(z, w)), favourable) + lambda * ||u(x(z, w)) - u(x)||_2^2

(x(z, w) the decoded profile with the person's own conditioning features, held at x where
the person may not act; u the unit cube). Every iterate whose plan is valid (judged on x'
through the world model) is a candidate; the closest (squared L2 in the unit cube) is
returned; none: a counted failure. All people and starting points run as one batch.

Hyper-parameters (success rates in docs/bases.md): ``lr=0.008``, ``lam=0.001``
(CARLA's defaults), ``steps=500`` (CARLA: 2,000; four starting points per person instead),
``samples=4`` starting points, ``seed=0``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from engine.recourse.base import Capabilities, RecourseContext
from engine.recourse.shift_actions import favourable_logit
from engine.recourse.targets import TargetMethod, judge, snap, to_unit
from engine.trained import trained
from engine.vaes import CSVAE


class Cruds(TargetMethod):
    """CRUDS (module docstring); ``seed`` makes it deterministic."""

    name = "cruds"
    capabilities = Capabilities(artifacts=("csvae",))

    def __init__(
        self,
        context: RecourseContext,
        *,
        lr: float = 0.008,
        lam: float = 0.001,
        steps: int = 500,
        samples: int = 4,
        seed: int = 0,
    ) -> None:
        super().__init__(context)
        if lr <= 0 or lam < 0 or steps < 1 or samples < 1:
            raise ValueError("cruds needs lr > 0, lam >= 0, steps >= 1, samples >= 1")
        self.lr, self.lam, self.steps, self.samples, self.seed = lr, lam, steps, samples, seed
        model = trained().generative(context.scenario.name, "csvae")
        assert isinstance(model, CSVAE)
        self.csvae = model

    def targets(self, x: Tensor, allowed: Tensor) -> tuple[Tensor, Tensor]:
        ctx, model, k = self.context, self.csvae, self.samples
        n = len(x)
        xs = x.repeat_interleave(k, dim=0)
        allowed_s = allowed.repeat_interleave(k, dim=0)
        gen = torch.Generator().manual_seed(self.seed)
        with torch.no_grad():
            z = model.encode_z(xs)[0]
            mu, logvar = model.prior(torch.ones(len(xs)))
            w0 = mu + torch.randn(mu.shape, generator=gen) * (0.5 * logvar).exp()
        w = w0.clone().requires_grad_(True)
        opt = torch.optim.RMSprop([w], lr=self.lr)
        best = xs.clone()
        best_dist = torch.full((len(xs),), float("inf"), dtype=torch.float64)
        active = allowed_s.any(dim=1)
        u_x = to_unit(ctx, xs)
        for _ in range(self.steps if bool(active.any()) else 0):
            decoded = torch.where(allowed_s, model.decode(z, w, xs).double(), xs)
            logit = favourable_logit(ctx, decoded)
            dist = ((to_unit(ctx, decoded) - u_x) ** 2).sum(dim=1)
            bce = torch.nn.functional.softplus(-logit)  # BCE against the favourable label
            loss = (bce + self.lam * dist) * active
            with torch.no_grad():
                t = snap(ctx, decoded.detach())
                d_t = ((to_unit(ctx, t) - u_x) ** 2).sum(dim=1)
                closer = judge(ctx, xs, t, allowed_s) & active & (d_t < best_dist)
                best = torch.where(closer[:, None], t, best)
                best_dist = torch.where(closer, d_t, best_dist)
            opt.zero_grad()
            loss.sum().backward()
            opt.step()
        j = best_dist.reshape(n, k).argmin(dim=1)  # the closest over the starting points
        pick = torch.arange(n) * k + j
        return best[pick], torch.isfinite(best_dist[pick])
