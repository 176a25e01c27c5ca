"""The hidden ideal plans of the HARE benchmark's simulated people: two ways to draw them.

Both return, per person, a shift z_gt (n, d) in range units, realized through the context's
world model (engine.recourse.shift_actions.realize), and whether an ideal was found. The HARE
paper (section 4.1) samples "actionable recourses on the classifier decision boundary" at three
scales, "near" close to the factual (in Euclidean distance), "intermediate" and "far".

**perturbation** (the paper's, the default). The paper's released experiment code makes the
scales concrete: a person's mutable *continuous* features are moved by a random vector of L2
norm eps_s (range units, the paper's features being scaled to [0, 1]),

    eps_near = 0.2,  eps_intermediate = 0.8,  eps_far = 1.5,

clipped into the features' range (categorical features and immutable ones stay as they are),
and the ideal is the decision boundary point nearest that perturbed profile x_p, found by
Growing Spheres (Laugel et al. 2018) from x_p towards the other class (whichever class x_p
is in). With z_p the shift that reaches x_p and z the one Growing Spheres adds, we bisect
a in [0, 1] on z_p + a z (``bisections`` halvings, every point realized from the factual)
and keep the favourable end, so the ideal lies on the boundary within 2^-bisections of the
segment and is a valid plan. A person with no mutable continuous feature, or for whom no
point of the other class is found within ``max_layers`` layers of width ``layer``, has no
ideal (``found`` False).

**rays** (a variant: this platform's earlier draw). ``directions`` unit shift directions u on
the person's actionable set A_i, the boundary radius rho(u) of each ray alpha u (alpha in
[0, R]) by bisection (rays still rejected at R are dropped); with rho* = min_u rho(u), the
ideal is the boundary point of a ray drawn uniformly among those with rho(u) <= c_s rho*,
c_s = 1.25 (near), 2 (intermediate), 4 (far). Its ideals are a few times the cheapest plan's
size from the factual, so much closer than the paper's on its data sets: an ideal of size
0.1-0.4 where the paper's is about 1.
"""

from __future__ import annotations

import torch
from torch import Tensor

from engine.preferences import ActionabilityProfiles
from engine.recourse.base import RecourseContext
from engine.recourse.gradient import GrowingSpheres
from engine.recourse.hare.search import boundary_fraction, random_directions
from engine.recourse.shift_actions import realize, shift_of

GROUND_TRUTHS: tuple[str, ...] = ("perturbation", "rays")
PAPER_GROUND_TRUTH = "perturbation"
# the paper's code's perturbation norms per scale (range units)
PERTURBATION: dict[str, float] = {"near": 0.2, "intermediate": 0.8, "far": 1.5}
# the rays variant's multiples of the nearest boundary radius
RAY_FACTORS: dict[str, float] = {"near": 1.25, "intermediate": 2.0, "far": 4.0}
SCALES: tuple[str, ...] = ("near", "intermediate", "far")


def check_ground_truth(name: str) -> None:
    if name not in GROUND_TRUTHS:
        raise ValueError(f"ground truth must be one of {', '.join(GROUND_TRUTHS)}, got {name!r}")


class _NearestOtherClass(GrowingSpheres):
    """Growing Spheres towards the other class: a shift is a hit when the decision of the
    shifted profile differs from the start profile's (no feature selection)."""

    def valid(self, x: Tensor, z: Tensor, allowed: Tensor) -> Tensor:
        with torch.no_grad():
            r = realize(self.context, x, z, allowed)
            decide = self.context.classifier.decision
            return decide(r.x_cf.float()).bool() != decide(x.float()).bool()

    def _select_features(self, x: Tensor, z: Tensor, found: Tensor, allowed: Tensor) -> Tensor:
        return z


def ideal_by_perturbation(
    context: RecourseContext, x: Tensor, allowed: Tensor, scale: str, gen: torch.Generator, *,
    seed: int, samples: int = 256, layer: float = 0.05, max_layers: int = 80,
    bisections: int = 20,
) -> tuple[Tensor, Tensor]:
    """(z_gt (n, d), found (n,) bool): the paper's ideal (module docstring)."""
    n, d = x.shape
    cont = allowed & ~context.categorical.bool()[None, :]
    u = random_directions(cont, 1, gen)[:, 0]  # (n, d), zero where no continuous feature
    with torch.no_grad():
        r = realize(context, x, PERTURBATION[scale] * u, cont)  # clamped into the range
    z_p = shift_of(context, x, r.action_mask, r.action_values)  # the shift that reaches x_p
    searcher = _NearestOtherClass(context, samples=samples, eta=layer, halvings=0,
                                  max_layers=max_layers, seed=seed)
    profiles = ActionabilityProfiles(cont, torch.where(cont, 1.0, 2.0).double(),
                                     torch.ones(n, dtype=torch.float64), "binary")
    z, found = searcher.shifts(r.x_cf, profiles)  # from x_p to the other class

    def favourable(a: Tensor) -> Tensor:
        with torch.no_grad():
            x_cf = realize(context, x, z_p + a[:, None] * z, cont).x_cf
            return context.classifier.decision(x_cf.float()).bool()

    start_ok = favourable(torch.zeros(n, dtype=torch.float64))
    found &= cont.any(dim=1) & (favourable(torch.ones(n, dtype=torch.float64)) != start_ok)
    # bisection on z_p + a z, a in [0, 1] (x_p at a = 0), keeping the favourable end
    lo = torch.zeros(n, dtype=torch.float64)
    hi = torch.ones(n, dtype=torch.float64)
    for _ in range(bisections):
        mid = (lo + hi) / 2.0
        same = favourable(mid) == start_ok
        lo = torch.where(same, mid, lo)
        hi = torch.where(same, hi, mid)
    a = torch.where(start_ok, lo, hi)
    z_gt = torch.where(found[:, None], z_p + a[:, None] * z, 0.0)
    return z_gt, found


def ideal_by_rays(
    context: RecourseContext, x: Tensor, allowed: Tensor, scale: str, gen: torch.Generator, *,
    directions: int = 128, radius: float = 2.0, bisections: int = 20,
) -> tuple[Tensor, Tensor]:
    """(z_gt (n, d), found (n,) bool): the rays variant's ideal (module docstring)."""
    n, d = x.shape
    u = random_directions(allowed, directions, gen)  # (n, m, d)
    rows = u.reshape(n * directions, d) * radius
    xs = x.repeat_interleave(directions, dim=0)
    al = allowed.repeat_interleave(directions, dim=0)
    hi, reach = boundary_fraction(context, xs, rows, al, bisections=bisections)
    rho = torch.where(reach, hi * radius, torch.full_like(hi, float("inf"))).reshape(n, -1)
    nearest = rho.min(dim=1).values
    eligible = rho <= RAY_FACTORS[scale] * nearest[:, None]
    found = torch.isfinite(nearest)
    weights = torch.where(eligible & found[:, None], 1.0, 0.0)
    weights[~found, 0] = 1.0  # someone with no ideal: any row; marked not found
    pick = torch.multinomial(weights, 1, generator=gen).flatten()
    idx = torch.arange(n)
    shift = u[idx, pick] * torch.where(found, rho[idx, pick], torch.zeros(n)).unsqueeze(1)
    return shift, found
