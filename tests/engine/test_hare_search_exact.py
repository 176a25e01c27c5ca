"""HARE's candidate search without the per-step overhead computes exactly what the plain
loop computes: Adam written out (engine.recourse.adam_step) against torch.optim.Adam, the
prepared counterfactuals (shift_actions.Counterfactuals) against ``realize``, and the whole
search against the loop written with both, bit for bit (values and gradients)."""

from __future__ import annotations

import torch

from engine.artifacts import load_classifier
from engine.recourse.adam_step import AdamStep
from engine.recourse.base import RecourseContext
from engine.recourse.hare.search import (
    actionable_sampling,
    diversity_loss,
    grouped_abduction,
    project,
    random_directions,
    search_loss,
)
from engine.recourse.plan_rules import PlanRules, project_shifts
from engine.recourse.shift_actions import (
    Counterfactuals,
    abduction,
    allowed_mask,
    favourable_logit,
    realize,
)
from engine.scenarios import get_scenario


def test_adam_step_equals_torch_adam():
    gen = torch.Generator().manual_seed(0)
    start = torch.randn(2, 3, 7, dtype=torch.float64, generator=gen)
    theirs = start.clone().requires_grad_(True)
    mine = start.clone()
    opt, step = torch.optim.Adam([theirs], lr=0.1), AdamStep(mine, lr=0.1)
    for i in range(200):  # gradients over seven orders of magnitude, renormalized as HARE does
        grad = torch.randn(2, 3, 7, dtype=torch.float64, generator=gen) * 10.0 ** (i % 7 - 3)
        theirs.grad = grad.clone()
        opt.step()
        step.step(grad)
        with torch.no_grad():
            theirs.copy_(theirs / theirs.norm(dim=2, keepdim=True))
            mine.copy_(mine / mine.norm(dim=2, keepdim=True))
    assert torch.equal(theirs.detach(), mine)
    assert not torch.equal(mine, start)


def _loan(classifier: str = "bayes", rules: bool = False):
    loan = get_scenario("loan")
    plan_rules = PlanRules.of(loan, {"income": "increase", "savings": "increase"}) if rules \
        else None
    ctx = RecourseContext(loan, load_classifier(loan, classifier), rules=plan_rules)
    x = loan.dataset["test"][0][:5].to(torch.float64)
    allowed = allowed_mask(ctx, torch.ones(5, loan.d, dtype=torch.bool))
    allowed[1, 5] = False  # one person cannot change their income
    return ctx, x, allowed


def test_counterfactuals_equal_realize():
    ctx, x, allowed = _loan()
    z = (torch.randn(5, x.shape[1], generator=torch.Generator().manual_seed(1),
                     dtype=torch.float64) * 0.3).requires_grad_(True)
    prepared = Counterfactuals(ctx, x, allowed, abduction(ctx, x))
    assert prepared.fast  # the exact SCM's one pass
    ours, plain = prepared(z), realize(ctx, x, z, allowed).x_cf
    assert torch.equal(ours, plain)
    weights = torch.linspace(-1.0, 2.0, x.numel(), dtype=torch.float64).reshape(x.shape)
    (g_ours,) = torch.autograd.grad((ours * weights).sum(), z)
    (g_plain,) = torch.autograd.grad((plain * weights).sum(), z)
    assert torch.equal(g_ours, g_plain) and bool(g_ours.abs().sum() > 0)
    assert not Counterfactuals(ctx, x, allowed).fast  # without noise: realize itself


def test_columnwise_pass_equals_the_tensor_pass():
    """The Loan SCM's pass over computed columns (``columnwise``), with the equations no
    shift changes computed once (``fixed_equations``) or not, gives the values and
    gradients of the pass over a growing (n, d) tensor."""
    ctx, x, allowed = _loan()
    scm = ctx.world
    assert scm.columnwise
    u = scm.abduct(x)
    mask = allowed.clone()
    mask[2] = False  # a row nobody shifts
    lo, hi = ctx.scenario.bounds.to(torch.float64)
    s = (torch.randn(x.shape, generator=torch.Generator().manual_seed(2),
                     dtype=torch.float64) * 2.0).requires_grad_(True)
    shifted = [j for j in range(scm.d) if bool(mask[:, j].any())]
    weights = torch.linspace(-1.0, 2.0, x.numel(), dtype=torch.float64).reshape(x.shape)
    fixed = scm.fixed_equations(u, shifted)
    assert 0 < len(fixed) < scm.d and 0 in fixed  # gender: no parents, never shifted
    out = {}
    for columnwise, once in ((True, fixed), (True, None), (False, None)):
        scm.columnwise = columnwise
        try:
            x_cf = scm.shift_pass(u, mask, s, lo, hi, shifted, once)
        finally:
            scm.columnwise = True
        (grad,) = torch.autograd.grad((torch.tanh(x_cf) * weights).sum(), s)
        out[columnwise, once is not None] = x_cf.detach(), grad
    plain = out[False, False]
    for key in ((True, True), (True, False)):
        assert torch.equal(out[key][0], plain[0]) and torch.equal(out[key][1], plain[1])
    grad = plain[1]
    assert bool(grad[0].abs().sum() > 0) and not bool(grad[2].any())  # row 2 is not shifted


def _plain_loss(ctx, x_cf, p, rows):
    """search_loss with the decision model's checked forward pass (one machine)."""
    if rows is not None:
        return search_loss(ctx, x_cf, p, 10.0, rows)
    n, k, _ = p.shape
    validity = torch.nn.functional.softplus(-favourable_logit(ctx, x_cf)).reshape(n, k)
    return (10.0 * diversity_loss(p) + validity.mean(dim=1)).sum()


def _plain_search(ctx, x, incumbent, allowed, gamma, k, seed, steps, groups=None):
    """The candidate search as torch's optimizer and ``realize`` run it."""
    n, d = x.shape
    p = random_directions(allowed, k, torch.Generator().manual_seed(seed)).requires_grad_(True)
    opt = torch.optim.Adam([p], lr=0.1)
    xs, rows_allowed = x.repeat_interleave(k, dim=0), allowed.repeat_interleave(k, dim=0)
    rows = None if groups is None else [g * k for g in groups]
    noise = grouped_abduction(ctx, xs, rows)
    for _ in range(steps):
        cand = project_shifts(ctx.rules, incumbent[:, None] + gamma[:, None, None] * p)
        x_cf = realize(ctx, xs, cand.reshape(n * k, d), rows_allowed, noise).x_cf
        opt.zero_grad()
        _plain_loss(ctx, x_cf, p, rows).backward()
        opt.step()
        with torch.no_grad():
            p.copy_(project(p, allowed))
    return project_shifts(ctx.rules, incumbent[:, None] + gamma[:, None, None] * p.detach())


def test_candidate_search_equals_the_plain_loop(trained_home):
    """With the trained float32 decision model and a study's plan rules, alone and with
    machines searched together (``groups``)."""
    ctx, x, allowed = _loan("trained", rules=True)
    gamma = torch.ones(5, dtype=torch.float64)
    incumbent = torch.zeros_like(x)
    for groups in (None, [2, 3]):
        ours = actionable_sampling(ctx, x, incumbent, allowed, gamma, 3,
                                   torch.Generator().manual_seed(4), steps=25, groups=groups)
        plain = _plain_search(ctx, x, incumbent, allowed, gamma, 3, 4, 25, groups)
        assert torch.equal(ours, plain)
