"""Plans a person can take seriously (engine.recourse.realism): display bounds, no needless
action, no invisible action. Checked against the exact SCM and the Bayes rule directly (not
through the module's own helpers)."""

from __future__ import annotations

import pytest
import torch

from engine.decision import BayesDecision
from engine.papers.recourse_benchmark import rejected_population
from engine.preferences import sample_profiles
from engine.recourse import get_method, realism
from engine.recourse.base import RecourseContext
from engine.scenarios import get_scenario

L, D, INC, S = 3, 4, 5, 6


@pytest.fixture(scope="module")
def setting():
    sc = get_scenario("loan")
    ctx = RecourseContext(sc, BayesDecision(sc))
    x = rejected_population(sc, ctx.classifier, 60)
    profiles = sample_profiles(sc.feature_names, sc.actionable, len(x), seed=4)
    plans = get_method("oracle", ctx, bins=6, plausibility=False).candidates(x, profiles)
    return sc, ctx, plans, profiles


def _valid(sc, x: torch.Tensor, mask: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    x_cf = sc.scm.counterfactual(x, mask, values)
    return sc.scm.label_proba(x_cf.double()) >= 0.5


def test_display_bounds_are_the_scenario_setting_or_the_quantiles() -> None:
    sc = get_scenario("loan")
    lo, hi = sc.display_bounds
    loan = sc.features[L].display
    assert float(loan.to_display(lo[L])) == pytest.approx(1_000.0)  # Loan's explicit minimum
    train = sc.dataset["train"][0]
    assert float(hi[INC]) == pytest.approx(float(torch.quantile(train[:, INC], 0.999)))
    assert float(lo[S]) == pytest.approx(float(torch.quantile(train[:, S], 0.001)))
    # the $172 loan of the training split's minimum is not shown; a $1,000 one is
    x = train[:1].clone()
    x_cf = x.clone()
    x_cf[0, L] = float(loan.from_display(172.0))
    assert not realism.within_bounds(sc, x, x_cf)[0]
    x_cf[0, L] = float(loan.from_display(1_000.0)) + 1e-9
    assert realism.within_bounds(sc, x, x_cf)[0]
    # a person's own unchanged value is shown as it is, whatever it is
    assert realism.within_bounds(sc, x_cf, x_cf)[0]


def test_pruned_plans_keep_no_action_they_are_valid_without(setting) -> None:
    sc, ctx, plans, profiles = setting
    pruned = realism.prune_actions(ctx, plans, profiles[plans.person])
    out = pruned.plans
    assert len(out) == len(plans)
    assert torch.equal(out.valid, plans.valid)  # pruning never breaks a plan
    assert (pruned.dropped > 0).any(), "the grid has plans with needless actions"
    # an action is only ever removed, never added or changed
    assert not (out.action_mask & ~plans.action_mask).any()
    kept = out.action_mask
    assert torch.equal(out.action_values[kept], plans.action_values[kept])
    # minimal: dropping any single remaining action of a valid multi-action plan breaks it
    rows = (out.valid & (kept.sum(1) > 1)).nonzero().flatten()
    for j in range(sc.d):
        has = rows[kept[rows, j]]
        if len(has) == 0:
            continue
        trial = kept[has].clone()
        trial[:, j] = False
        assert not _valid(sc, out.x[has], trial, out.action_values[has]).any(), sc.features[j].name


def test_a_needless_loan_increase_beside_savings_is_dropped(setting) -> None:
    """The browser walk's plan: a small loan increase (which only hurts approval) beside a
    savings increase large enough alone."""
    sc, ctx, _, _ = setting
    x = rejected_population(sc, ctx.classifier, 200)
    mask = torch.zeros_like(x, dtype=torch.bool)
    mask[:, [L, S]] = True
    values = x.clone()
    values[:, L] = x[:, L] + 0.2
    values[:, S] = x[:, S] + 40.0
    ok = _valid(sc, x, mask, values) & _valid(sc, x, mask & (torch.arange(7) == S), values)
    assert ok.sum() > 10
    batch = ctx.evaluate("test", x[ok], mask[ok], values[ok], None)
    out = realism.prune_actions(ctx, batch, None).plans
    assert not out.action_mask[:, L].any()
    assert out.action_mask[:, S].all() and out.valid.all()


def test_changes_below_display_resolution_are_not_shown_as_actions(setting) -> None:
    sc, ctx, _, _ = setting
    x = rejected_population(sc, ctx.classifier, 300)[250:]
    mask = torch.zeros_like(x, dtype=torch.bool)
    mask[:, [INC, S]] = True
    values = x.clone()
    values[:, S] = x[:, S] + 15.0
    values[:, INC] = x[:, INC] + 1e-7  # a fraction of a dollar of income
    batch = ctx.evaluate("test", x, mask, values, None)
    assert realism.invisible_actions(sc, batch.x, batch.x_cf, batch.action_mask)[:, INC].all()
    assert not realism.showable(sc, batch)[batch.valid].any()
    out = realism.prune_actions(ctx, batch, None).plans
    fine = out.valid
    assert fine.sum() > 10
    assert not out.action_mask[fine, INC].any()  # the invisible action went first
    assert not realism.invisible_actions(sc, out.x, out.x_cf, out.action_mask)[fine].any()
    inside = realism.within_bounds(sc, out.x, out.x_cf)
    assert torch.equal(realism.showable(sc, out), fine & inside)
