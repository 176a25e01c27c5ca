"""The one-feature line search: the base generator the "Add a recourse method" tutorial
builds. Copy it to ``engine/recourse/line_search.py`` and register it in
``engine.recourse.METHODS`` as ``"line-search": "engine.recourse.line_search:LineSearch"``.

For each person and each feature j they can change, try the shifts z = s e_j for
s in {±1, ±2, ..., ±steps} * reach / steps (in units of the feature's range, as every shift
method of ``engine.recourse.gradient``), and keep the valid plan of least weighted cost

    min_{j, s}  w_j |s|   subject to  h(CF(x, z = s e_j)) favourable,

w the person's cost weights. All people, features and step sizes are evaluated as one
batch of n * |A| * 2 * steps shifts through the world model, so consequences count.
"""

from __future__ import annotations

import torch
from torch import Tensor

from engine.preferences import ActionabilityProfiles
from engine.recourse.base import RecourseContext
from engine.recourse.gradient import ShiftMethod
from engine.recourse.shift_actions import allowed_mask


class LineSearch(ShiftMethod):
    """One feature moved the least (weighted) distance that gets the person approved."""

    name = "line-search"

    def __init__(self, context: RecourseContext, *, steps: int = 20, reach: float = 1.0) -> None:
        super().__init__(context)
        if steps < 1 or reach <= 0:
            raise ValueError("line-search needs steps >= 1 and reach > 0")
        self.steps, self.reach = steps, reach

    def shifts(self, x: Tensor, profiles: ActionabilityProfiles) -> tuple[Tensor, Tensor]:
        n, d = x.shape
        allowed = allowed_mask(self.context, profiles.hard_mask)
        w = profiles.weights(self.context.cost_profile).to(x.dtype)
        grid = torch.arange(1, self.steps + 1, dtype=x.dtype) * self.reach / self.steps
        sizes = torch.cat([grid, -grid])  # (k,)
        k = sizes.numel()
        # Candidate c = (person i, feature j, size s): z_c = s e_j, laid out as (n, d, k).
        z = torch.zeros(n, d, k, d, dtype=x.dtype)
        z[:, torch.arange(d), :, torch.arange(d)] = sizes
        flat_z = z.reshape(-1, d)
        flat_x = x.repeat_interleave(d * k, dim=0)
        flat_allowed = allowed.repeat_interleave(d * k, dim=0)
        valid = self.valid(flat_x, flat_z, flat_allowed).reshape(n, d, k)
        valid &= allowed[:, :, None]
        cost = torch.where(valid, w[:, :, None] * sizes.abs(), torch.inf).reshape(n, -1)
        best = cost.argmin(dim=1)
        found = torch.isfinite(cost[torch.arange(n), best])
        chosen = z.reshape(n, d * k, d)[torch.arange(n), best]
        return torch.where(found[:, None], chosen, torch.zeros_like(chosen)), found
