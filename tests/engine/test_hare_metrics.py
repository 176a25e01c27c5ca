"""A failed plan scored as no change (ours) or dropped (the paper's released code)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from engine.papers.hare.metrics import plan_metrics


class _Batch(SimpleNamespace):
    def __len__(self) -> int:
        return len(self.x)


def _batch_and_people():
    """Three people with ideals; the second person's plan failed. GTD of the plan shown: 0.2
    for the two favourable plans, 1.0 for x' = x (no plan)."""
    x = torch.zeros(3, 2, dtype=torch.float64)
    x_cf = torch.tensor([[1.0, 0.0], [5.0, 5.0], [0.0, 1.0]], dtype=torch.float64)
    batch = _Batch(
        x=x, x_cf=x_cf, valid=torch.tensor([True, False, True]), found=torch.ones(3, dtype=bool),
        violations=torch.zeros(3), l1_profile=torch.ones(3), l0_actions=torch.ones(3),
        action_mask=torch.zeros(3, 2, dtype=bool))
    people = SimpleNamespace(
        found=torch.ones(3, dtype=bool),
        gtd=lambda shown: torch.where(shown.abs().sum(1) > 0, 0.2, 1.0).double(),
        gtp=lambda shown: torch.where(shown.abs().sum(1) > 0, 0.5, 2.0).double())
    context = SimpleNamespace(ranges=torch.ones(2), categorical=None)
    return context, batch, people


def test_a_failed_plan_counts_as_no_change_or_is_dropped():
    context, batch, people = _batch_and_people()
    ours = plan_metrics(context, batch, people)
    assert ours["gtd"] == pytest.approx((0.2 + 1.0 + 0.2) / 3)
    assert ours["gtp"] == pytest.approx((0.5 + 2.0 + 0.5) / 3)
    released = plan_metrics(context, batch, people, "dropped")
    assert released["gtd"] == pytest.approx(0.2) and released["gtp"] == pytest.approx(0.5)
    assert ours["success_rate"] == released["success_rate"] == pytest.approx(2 / 3)
