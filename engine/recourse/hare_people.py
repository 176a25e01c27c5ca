"""Simulated people for HARE (paper 002, section 5): a hidden ideal plan answers the queries.

Profiles are compared in normalized units, v(x') = (x' - x) / M (M the training ranges).

**Ground truth.** For person i, draw ``directions`` unit shift directions u on the person's
actionable set A_i and find, by bisection along each ray alpha u (alpha in [0, R]), the
boundary radius rho(u) of the decision model (rays still rejected at R are dropped). With
rho* = min_u rho(u) (the nearest boundary the draw found), the ground truth at scale s is the
boundary point of a ray drawn uniformly among those with rho(u) <= c_s rho*, c_s = 1.25
(near), 2 (intermediate), 4 (far): near ideals are close to the cheapest plan; far ideals
can point anywhere a plan of a few times the minimal size reaches the boundary. The ideal is
an action, so its profile x_gt includes consequences.

**Answers.** Relative feedback prefers the profile closer to x_gt (L2 of v); absolute
feedback accepts when |v(x') - v(x_gt)| <= accept_tol * |v(x_gt)|. Metrics: GTP = that L2
distance, GTD = the cosine distance between v(x') and v(x_gt) (engine.metrics.gtp / gtd).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from engine import metrics
from engine.recourse.base import RecourseContext
from engine.recourse.hare_search import boundary_fraction, random_directions
from engine.recourse.shift_actions import realize

SCALES: dict[str, float] = {"near": 1.25, "intermediate": 2.0, "far": 4.0}


@dataclass
class SimulatedPeople:
    """A batch of simulated people (module docstring)."""

    x: Tensor  # (n, d) factual profiles
    truth_shift: Tensor  # (n, d) the ideal action as a shift
    truth: Tensor  # (n, d) the ideal profile x_gt
    ranges: Tensor
    found: Tensor  # (n,) bool: an ideal exists (some ray reaches the boundary)
    accept_tol: float = 0.1

    @classmethod
    def draw(
        cls,
        context: RecourseContext,
        x: Tensor,
        allowed: Tensor,
        scale: str,
        *,
        seed: int,
        directions: int = 128,
        radius: float = 2.0,
        bisections: int = 20,
        accept_tol: float = 0.1,
    ) -> SimulatedPeople:
        if scale not in SCALES:
            raise ValueError(f"unknown scale {scale!r}; choose from {', '.join(SCALES)}")
        n, d = x.shape
        gen = torch.Generator().manual_seed(seed)
        u = random_directions(allowed, directions, gen)  # (n, m, d)
        rows = u.reshape(n * directions, d) * radius
        xs = x.repeat_interleave(directions, dim=0)
        al = allowed.repeat_interleave(directions, dim=0)
        hi, reach = boundary_fraction(context, xs, rows, al, bisections=bisections)
        rho = torch.where(reach, hi * radius, torch.full_like(hi, float("inf"))).reshape(n, -1)
        nearest = rho.min(dim=1).values
        eligible = rho <= SCALES[scale] * nearest[:, None]
        found = torch.isfinite(nearest)
        weights = torch.where(eligible & found[:, None], 1.0, 0.0)
        weights[~found, 0] = 1.0  # someone with no ideal: any row; marked not found
        pick = torch.multinomial(weights, 1, generator=gen).flatten()
        idx = torch.arange(n)
        shift = u[idx, pick] * torch.where(found, rho[idx, pick], torch.zeros(n)).unsqueeze(1)
        with torch.no_grad():
            truth = realize(context, x, shift, allowed).x_cf
        return cls(x, shift, truth, context.ranges.to(torch.float64), found, accept_tol)

    def _v(self, profile: Tensor) -> Tensor:
        return (profile.to(torch.float64) - self.x) / self.ranges

    def gtp(self, profile: Tensor) -> Tensor:
        return metrics.gtp(self._v(profile), self._v(self.truth))

    def gtd(self, profile: Tensor) -> Tensor:
        return metrics.gtd(torch.zeros_like(self.x), self._v(profile), self._v(self.truth))

    def compare(self, left: Tensor, right: Tensor) -> Tensor:
        """(n,) long: 1 where the right profile is closer to the ideal, else 0."""
        return (self.gtp(right) < self.gtp(left)).long()

    def accept(self, profile: Tensor) -> Tensor:
        """(n,) bool: the profile is close enough to the ideal."""
        return self.gtp(profile) <= self.accept_tol * self._v(self.truth).norm(dim=1)
