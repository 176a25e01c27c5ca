"""HARE's two search steps (the HARE paper, section 4), batched over people, in shift-action space.

**ActionableSampling.** For person i with incumbent shift r_i (n, d) and actionable set A_i,
k unit directions P_i = (p_1..p_k) (k, d), started at random directions on A_i, take ``steps``
steps of Adam (learning rate ``lr``) on

    lambda * L1(P_i) + L2(P_i),
    L1(P) = mean_a max_b (P P^T - 2 I)_ab        (diversity: the nearest neighbour's cosine),
    L2(P) = mean_a BCE(h(x'(r_i + gamma_i p_a)), favourable)   (validity),

and after each step project onto A_i (other coordinates zero) and renormalize to unit length.
The candidates are r_i + gamma_i p_a, projected onto a study's allowed directions when the
context carries plan rules (engine.recourse.plan_rules.project_shifts: the same projection
extended from A_i to the direction cone; none in the paper's runs).

**BoundaryPointSearch.** For every candidate c, bisection on the segment s(alpha) = alpha c,
alpha in [0, 1], from the factual (alpha = 0, rejected) to c: ``bisections`` halvings keeping
the favourable end, so the candidate moves to the cheapest favourable point of its
direction (|alpha_hi - alpha_lo| = 2^-bisections; the paper's eps = 1e-6 is 20 halvings).
A candidate that is not favourable at alpha = 1 stays where it is and is marked invalid.

The paper's test is g(mid) >= 0.5, so a calibrated candidate ends within 2^-bisections of
the boundary, where its logit is of the order of float32 rounding: evaluated again in
another batch (a study shows and stores one plan at a time) it can come out rejected. With
``margin`` > 0 (HareConfig ``boundary_margin``, a variant for studies) "favourable" means
logit P(favourable | x') >= margin, so every calibrated plan keeps that margin.
Under plan rules, a calibrated candidate's shifts too small to show are dropped
(plan_rules.snap_shifts) and its validity checked again.
"""

from __future__ import annotations

import torch
from torch import Tensor

from engine.recourse.base import RecourseContext
from engine.recourse.plan_rules import project_shifts, snap_shifts
from engine.recourse.shift_actions import abduction, favourable_logit, realize


def random_directions(allowed: Tensor, k: int, gen: torch.Generator) -> Tensor:
    """(n, k, d) unit directions uniform on each person's actionable coordinates."""
    n, d = allowed.shape
    p = torch.randn(n, k, d, generator=gen, dtype=torch.float64) * allowed[:, None]
    return p / p.norm(dim=2, keepdim=True).clamp(min=1e-12)


def project(p: Tensor, allowed: Tensor) -> Tensor:
    """Zero the non-actionable coordinates and renormalize (an all-zero row stays zero)."""
    p = p * allowed[:, None]
    return p / p.norm(dim=2, keepdim=True).clamp(min=1e-12)


def diversity_loss(p: Tensor) -> Tensor:
    """L1 per person, (n,): mean over directions of the largest entry of P P^T - 2 I."""
    k = p.shape[1]
    gram = p @ p.transpose(1, 2) - 2.0 * torch.eye(k, dtype=p.dtype)
    return gram.max(dim=2).values.mean(dim=1)


def actionable_sampling(
    context: RecourseContext,
    x: Tensor,
    incumbent: Tensor,
    allowed: Tensor,
    gamma: Tensor,
    k: int,
    gen: torch.Generator,
    *,
    steps: int = 100,
    lr: float = 0.1,
    lam: float = 10.0,
) -> Tensor:
    """Candidates r + gamma p, (n, k, d) (module docstring)."""
    n, d = x.shape
    p0 = random_directions(allowed, k, gen)
    rules = context.rules
    if steps == 0 or k == 0:
        return project_shifts(rules, incumbent[:, None] + gamma[:, None, None] * p0)
    p = p0.clone().requires_grad_(True)
    opt = torch.optim.Adam([p], lr=lr)
    xs = x.repeat_interleave(k, dim=0)
    allowed_rows = allowed.repeat_interleave(k, dim=0)
    noise = abduction(context, xs)  # the same people every step: abducted once
    for _ in range(steps):
        cand = project_shifts(rules, incumbent[:, None] + gamma[:, None, None] * p)
        r = realize(context, xs, cand.reshape(n * k, d), allowed_rows, noise)
        logit = favourable_logit(context, r.x_cf).reshape(n, k)
        validity = torch.nn.functional.softplus(-logit).mean(dim=1)  # BCE against "favourable"
        loss = (lam * diversity_loss(p) + validity).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            p.copy_(project(p, allowed))
    return project_shifts(rules, incumbent[:, None] + gamma[:, None, None] * p.detach())


def is_favourable(context: RecourseContext, x: Tensor, z: Tensor, allowed: Tensor,
                  noise: Tensor | None = None, margin: float = 0.0) -> Tensor:
    """(m,) bool: h(x'(z)) is favourable (``noise``: shift_actions.abduction of x); with
    ``margin`` > 0: logit P(favourable | x'(z)) >= margin (module docstring)."""
    with torch.no_grad():
        r = realize(context, x, z, allowed, noise)
        if margin > 0:
            return favourable_logit(context, r.x_cf) >= margin
        return context.classifier.decision(r.x_cf.float()).bool()


def boundary_fraction(
    context: RecourseContext, x: Tensor, cand: Tensor, allowed: Tensor, *, bisections: int = 20,
    margin: float = 0.0,
) -> tuple[Tensor, Tensor]:
    """The bisection of BoundaryPointSearch (module docstring): ((m,) alpha_hi, (m,) bool
    favourable at alpha = 1); rows are independent (x, cand, allowed are (m, d)). alpha_hi
    is meaningful only where the candidate is favourable."""
    noise = abduction(context, x)  # the same people every halving: abducted once
    valid = is_favourable(context, x, cand, allowed, noise, margin)
    lo = torch.zeros(len(x), dtype=torch.float64)
    hi = torch.ones(len(x), dtype=torch.float64)
    for _ in range(bisections):
        mid = (lo + hi) / 2.0
        ok = is_favourable(context, x, mid[:, None] * cand, allowed, noise, margin)
        hi = torch.where(ok, mid, hi)
        lo = torch.where(ok, lo, mid)
    return hi, valid


def boundary_point_search(
    context: RecourseContext, x: Tensor, cand: Tensor, allowed: Tensor, *, bisections: int = 20,
    margin: float = 0.0,
) -> tuple[Tensor, Tensor]:
    """Calibrated candidates and their validity: ((m, d), (m,) bool); rows are independent
    (x, cand, allowed are (m, d))."""
    hi, valid = boundary_fraction(context, x, cand, allowed, bisections=bisections,
                                  margin=margin)
    z = torch.where(valid[:, None], hi[:, None] * cand, cand)
    if context.rules is None:
        return z, valid
    with torch.no_grad():
        r = realize(context, x, z, allowed)
    z = snap_shifts(context.scenario, context.rules, x, z, r.action_values, r.action_mask)
    return z, valid & is_favourable(context, x, z, allowed, margin=margin)
