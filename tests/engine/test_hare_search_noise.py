"""Searches that move the same people many times abduct them once: realize with the noise
computed ahead gives exactly the counterfactuals, gradients and boundary points it gives
when it abducts each time."""

from __future__ import annotations

import torch

from engine.artifacts import load_classifier
from engine.recourse.base import RecourseContext
from engine.recourse.hare.search import actionable_sampling, boundary_point_search
from engine.recourse.shift_actions import abduction, allowed_mask, realize
from engine.scenarios import get_scenario


def _setup():
    loan = get_scenario("loan")
    ctx = RecourseContext(loan, load_classifier(loan, "bayes"))
    x = loan.dataset["test"][0][:6].to(torch.float64)
    allowed = allowed_mask(ctx, torch.ones(6, loan.d, dtype=torch.bool))
    z = (torch.randn(6, loan.d, generator=torch.Generator().manual_seed(1),
                     dtype=torch.float64) * 0.2).requires_grad_(True)
    return ctx, x, allowed, z


def test_realize_with_noise_equals_abducting_each_time():
    ctx, x, allowed, z = _setup()
    noise = abduction(ctx, x)
    assert noise is not None and noise.shape == x.shape
    plain = realize(ctx, x, z, allowed)
    ahead = realize(ctx, x, z, allowed, noise)
    assert torch.equal(plain.x_cf, ahead.x_cf) and torch.equal(plain.action_mask,
                                                                ahead.action_mask)
    (g_plain,) = torch.autograd.grad(plain.x_cf.sum(), z)
    (g_ahead,) = torch.autograd.grad(ahead.x_cf.sum(), z)
    assert torch.equal(g_plain, g_ahead)


def test_hare_searches_unchanged_by_abducting_once(monkeypatch):
    """The candidate and boundary searches give bit-identical results with the noise
    computed once (as they run) and abducted at every step (``abduction`` disabled)."""
    import engine.recourse.hare.search as hs

    ctx, x, allowed, _ = _setup()
    gamma = torch.full((6,), 0.5, dtype=torch.float64)
    incumbent = torch.zeros_like(x)

    def search():
        cand = actionable_sampling(ctx, x, incumbent, allowed, gamma, 3,
                                   torch.Generator().manual_seed(4), steps=15)
        flat = cand.reshape(18, -1)
        rows = x.repeat_interleave(3, dim=0), allowed.repeat_interleave(3, dim=0)
        return cand, *boundary_point_search(ctx, rows[0], flat, rows[1], bisections=12)

    once = search()
    monkeypatch.setattr(hs, "abduction", lambda context, x: None)
    every_step = search()
    for a, b in zip(once, every_step, strict=True):
        assert torch.equal(a, b)
