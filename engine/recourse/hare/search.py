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
(plan_rules.snap_shifts) and its validity checked again (``obey_rules``; the base method's
plan, HARE's first incumbent, passes through the same).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from engine.decision import DecisionModel
from engine.recourse.adam_step import AdamStep
from engine.recourse.base import RecourseContext
from engine.recourse.plan_rules import project_shifts
from engine.recourse.shift_actions import (
    Counterfactuals,
    abduction,
    favourable_logit,
    obeying,
    realize,
)

Groups = Sequence[int] | None  # rows per independent machine (module docstring); None: one


def by_group(fn: Callable[[Tensor], Tensor], rows: Tensor, groups: Groups) -> Tensor:
    """``fn`` applied to each group's rows separately, concatenated (one call without groups).

    **Several machines in one search** (``groups``: the rows of x of each independent machine,
    e.g. the sessions of people who reached HARE at the same moment). Both searches are
    elementwise over people except the decision model (a float32 matrix product: its bits depend
    on the batch's size), the abduction and the validity term (log1p / softplus: vectorized and
    scalar code paths round differently by position); those run per group, with exactly the rows a
    machine has alone, and the group losses are summed (each group's gradient is its own). So a
    machine's candidates are bit for bit those it finds alone, at a fraction of the cost (the world
    model, the backward pass and Adam run once for everybody).
    """
    if groups is None or len(groups) == 1:
        return fn(rows)
    return torch.cat([fn(part) for part in rows.split(list(groups))])


def grouped_abduction(context: RecourseContext, x: Tensor, groups: Groups) -> Tensor | None:
    """shift_actions.abduction per group (None where the world has no noise to abduct)."""
    if abduction(context, x[:1]) is None:
        return None
    return by_group(lambda rows: abduction(context, rows), x, groups)


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
    start: Tensor | None = None,
    groups: Groups = None,
) -> Tensor:
    """Candidates r + gamma p, (n, k, d) (module docstring); ``start``: the initial
    directions (n, k, d) (default: drawn from ``gen``); ``groups``: people per machine."""
    n, d = x.shape
    p0 = random_directions(allowed, k, gen) if start is None else start
    rules = context.rules
    if steps == 0 or k == 0:
        return project_shifts(rules, incumbent[:, None] + gamma[:, None, None] * p0)
    p = p0.clone().requires_grad_(True)
    opt = AdamStep(p, lr=lr)  # torch.optim.Adam's update, bit for bit
    xs = x.repeat_interleave(k, dim=0)
    allowed_rows = allowed.repeat_interleave(k, dim=0)
    rows = None if groups is None else [g * k for g in groups]
    # the same people every step: abducted and checked once
    counterfactual = Counterfactuals(context, xs, allowed_rows,
                                     grouped_abduction(context, xs, rows))
    for _ in range(steps):
        cand = project_shifts(rules, incumbent[:, None] + gamma[:, None, None] * p)
        loss = search_loss(context, counterfactual(cand.reshape(n * k, d)), p, lam, rows)
        (grad,) = torch.autograd.grad(loss, p)
        opt.step(grad)
        with torch.no_grad():
            p.copy_(project(p, allowed))
    return project_shifts(rules, incumbent[:, None] + gamma[:, None, None] * p.detach())


def favourable_logit_by_group(context: RecourseContext, x: Tensor, groups: list[int]) -> Tensor:
    """shift_actions.favourable_logit of each group of rows of ``x`` computed as for those rows
    alone (the same bits: a float32 matrix product rounds differently with the number of rows
    and where its input starts in memory, hence a fresh copy per group), concatenated. For a
    ``DecisionModel`` the elementwise input scaling runs once for all rows."""
    clf = context.classifier
    if not isinstance(clf, DecisionModel):
        return torch.cat([favourable_logit(context, part) for part in x.split(groups)])
    z = (clf._input(x.to(torch.float32)) - clf.mean) / clf.std
    return torch.cat([clf.net(part.clone()).reshape(-1) for part in z.split(groups)]).to(x.dtype)


def search_loss(context: RecourseContext, x_cf: Tensor, p: Tensor, lam: float,
                groups: Groups = None) -> Tensor:
    """sum over people of lambda L1(P_i) + L2(P_i): ``x_cf`` (n k, d) the candidates'
    counterfactuals, ``p`` (n, k, d) their directions; ``groups``: candidate rows per machine
    (the decision model and softplus per machine; the rest is elementwise or reduces within
    a person, so every person's gradient is the one it has alone)."""
    n, k, _ = p.shape
    clf = context.classifier
    if groups is not None and len(groups) > 1:
        logit = favourable_logit_by_group(context, x_cf, list(groups))
    elif isinstance(clf, DecisionModel):  # shift_actions.favourable_logit's operations
        logit = clf.logit_unchecked(x_cf.to(torch.float32)).reshape(-1).to(x_cf.dtype)
    else:
        logit = favourable_logit(context, x_cf)
    bce = by_group(lambda v: torch.nn.functional.softplus(-v), logit, groups)
    validity = bce.reshape(n, k).mean(dim=1)  # BCE against "favourable"
    return (lam * diversity_loss(p) + validity).sum()


def is_favourable(context: RecourseContext, x: Tensor, z: Tensor, allowed: Tensor,
                  noise: Tensor | None = None, groups: Groups = None,
                  margin: float = 0.0, prepared: Counterfactuals | None = None) -> Tensor:
    """(m,) bool: h(x'(z)) is favourable (``noise``: shift_actions.abduction of x;
    ``groups``: rows per machine, each judged by its own decision-model call); with
    ``margin`` > 0: logit P(favourable | x'(z)) >= margin (module docstring); ``prepared``:
    the counterfactuals of these x and allowed computed ahead (the same x')."""
    with torch.no_grad():
        x_cf = prepared(z) if prepared is not None else realize(context, x, z, allowed,
                                                                  noise).x_cf
        if margin > 0:
            logit = (favourable_logit(context, x_cf) if groups is None or len(groups) == 1
                     else favourable_logit_by_group(context, x_cf, list(groups)))
            return logit >= margin
        return by_group(lambda rows: context.classifier.decision(rows.float()).bool(),
                        x_cf, groups)


def boundary_fraction(
    context: RecourseContext, x: Tensor, cand: Tensor, allowed: Tensor, *, bisections: int = 20,
    groups: Groups = None, margin: float = 0.0,
) -> tuple[Tensor, Tensor]:
    """The bisection of BoundaryPointSearch (module docstring): ((m,) alpha_hi, (m,) bool
    favourable at alpha = 1); rows are independent (x, cand, allowed are (m, d)). alpha_hi
    is meaningful only where the candidate is favourable."""
    # the same people every halving: abducted and checked once
    prepared = Counterfactuals(context, x, allowed, grouped_abduction(context, x, groups))
    valid = is_favourable(context, x, cand, allowed, groups=groups, margin=margin,
                          prepared=prepared)
    lo = torch.zeros(len(x), dtype=torch.float64)
    hi = torch.ones(len(x), dtype=torch.float64)
    for _ in range(bisections):
        mid = (lo + hi) / 2.0
        ok = is_favourable(context, x, mid[:, None] * cand, allowed, groups=groups,
                           margin=margin, prepared=prepared)
        hi = torch.where(ok, mid, hi)
        lo = torch.where(ok, lo, mid)
    return hi, valid


def boundary_point_search(
    context: RecourseContext, x: Tensor, cand: Tensor, allowed: Tensor, *, bisections: int = 20,
    groups: Groups = None, margin: float = 0.0,
) -> tuple[Tensor, Tensor]:
    """Calibrated candidates and their validity: ((m, d), (m,) bool); rows are independent
    (x, cand, allowed are (m, d)); ``groups``: rows per machine (module docstring)."""
    hi, valid = boundary_fraction(context, x, cand, allowed, bisections=bisections,
                                  groups=groups, margin=margin)
    z = torch.where(valid[:, None], hi[:, None] * cand, cand)
    return obey_rules(context, x, z, allowed, valid, groups=groups, margin=margin)


def obey_rules(context: RecourseContext, x: Tensor, z: Tensor, allowed: Tensor,
               valid: Tensor, *, groups: Groups = None,
               margin: float = 0.0) -> tuple[Tensor, Tensor]:
    """Shifts z (m, d) under the context's plan rules: projected onto the direction cone,
    the coordinates too small to show dropped (plan_rules.snap_shifts), and the validity
    checked again; (z, valid) unchanged without rules (the paper's runs). ``groups``: rows
    per machine (module docstring), each snapped with exactly its own rows; ``margin``: the
    boundary margin the validity is checked again with."""
    if context.rules is None:
        return z, valid
    if groups is not None and len(groups) > 1:  # the rules' display maps, per machine
        split = [t.split(list(groups)) for t in (x, z, allowed, valid)]
        parts = [_snapped(context, *t, margin) for t in zip(*split, strict=True)]
        return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])
    return _snapped(context, x, z, allowed, valid, margin)


def _snapped(context: RecourseContext, x: Tensor, z: Tensor, allowed: Tensor,
             valid: Tensor, margin: float) -> tuple[Tensor, Tensor]:
    """Shifts projected onto the direction cone, without the moves too small to show, and
    their validity again."""
    z = obeying(context, x, z, allowed)
    return z, valid & is_favourable(context, x, z, allowed, margin=margin)
