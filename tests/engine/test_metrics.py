"""Recourse metrics against hand-computed values (the papers' definitions)."""

from __future__ import annotations

import math

import pytest
import torch

from engine import metrics
from engine.decision import BayesDecision
from engine.preferences import CostProfile, profiles_from_elicitation
from engine.recourse.base import RecourseContext
from engine.scenarios import get_scenario

RANGES = torch.tensor([1.0, 10.0, 2.0, 4.0], dtype=torch.float64)
CATEGORICAL = torch.tensor([True, False, False, False])


def _t(rows):
    return torch.tensor(rows, dtype=torch.float64)


def test_cost_counts_only_intervened_features():
    x = _t([[0.0, 0.0, 0.0, 0.0]])
    x_cf = _t([[1.0, 5.0, 1.0, 2.0]])  # feature 2 and 3 changed as consequences only
    mask = torch.tensor([[False, True, False, False]])
    assert float(metrics.action_cost(x, x_cf, mask, RANGES)[0]) == pytest.approx(0.5)
    w = _t([[9.0, 3.0, 9.0, 9.0]])
    assert float(metrics.action_cost(x, x_cf, mask, RANGES, w)[0]) == pytest.approx(1.5)
    mask_all = torch.ones(1, 4, dtype=torch.bool)
    assert float(metrics.action_cost(x, x_cf, mask_all, RANGES)[0]) == pytest.approx(
        1.0 + 0.5 + 0.5 + 0.5
    )


def test_deltas_and_distances_over_actions_and_profile():
    x = _t([[0.0, 1.0, 0.0, 0.0]])
    x_cf = _t([[1.0, 3.0, 1.0, 0.0]])
    mask = torch.tensor([[False, True, False, False]])
    delta = metrics.feature_deltas(x, x_cf, RANGES, CATEGORICAL)
    assert delta[0].tolist() == pytest.approx([1.0, 0.2, 0.5, 0.0])
    # a categorical change counts 1 whatever its size (the numeric formula would give 3 and
    # 0.25 here); an unchanged category counts 0
    far = metrics.feature_deltas(_t([[0.0, 1.0, 0.0, 0.0], [2.0, 1.0, 0.0, 0.0]]),
                                 _t([[3.0, 1.0, 0.0, 0.0], [2.0, 1.0, 0.0, 0.0]]),
                                 RANGES, CATEGORICAL)
    assert far.tolist() == [[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
    assert metrics.feature_deltas(_t([[0.0, 1.0, 0.0, 0.0]]), _t([[3.0, 1.0, 0.0, 0.0]]),
                                  RANGES)[0, 0] == pytest.approx(3.0)  # numeric without the flag
    dist = metrics.distances(x, x_cf, mask, RANGES, CATEGORICAL)
    assert float(dist.l0_actions[0]) == 1 and float(dist.l1_actions[0]) == pytest.approx(0.2)
    assert float(dist.l0_profile[0]) == 3 and float(dist.l1_profile[0]) == pytest.approx(1.7)


def test_changed_items_and_the_change_tolerance():
    """A change counts when delta > CHANGE_TOLERANCE (strictly): exactly at it, not."""
    tol = metrics.CHANGE_TOLERANCE
    ones = torch.ones(4, dtype=torch.float64)
    x = _t([[0.0, 0.0, 0.0, 0.0]])
    x_cf = _t([[0.0, tol, tol / 2, 2 * tol]])
    ch = metrics.changed_items(x, x_cf, ones)
    assert ch.dtype == torch.bool and ch.tolist() == [[False, False, False, True]]
    cat = metrics.changed_items(_t([[1.0, 0, 0, 0]]), _t([[2.0, 0, 0, 0]]), RANGES, CATEGORICAL)
    assert cat.tolist() == [[True, False, False, False]]
    # a category changes or not, whatever the size of the code difference
    tiny = metrics.changed_items(_t([[1.0, 0, 0, 0]]), _t([[1.0 + tol / 2, 0, 0, 0]]), RANGES,
                                 CATEGORICAL)
    assert tiny.tolist() == [[True, False, False, False]]
    mask = torch.tensor([[False, True, True, True]])
    dist = metrics.distances(x, x_cf, mask, ones)
    assert dist.changed.tolist() == ch.tolist()
    assert dist.l0_actions.dtype == dist.l0_profile.dtype == torch.float64
    assert float(dist.l0_actions[0]) == 1 and float(dist.l0_profile[0]) == 1
    # the categorical flag reaches distances: a category moved by 3 counts 1
    d2 = metrics.distances(_t([[0.0, 0, 0, 0]]), _t([[3.0, 0, 0, 0]]),
                           torch.tensor([[True, False, False, False]]), RANGES, CATEGORICAL)
    assert float(d2.l1_actions[0]) == 1.0 and float(d2.l1_profile[0]) == 1.0
    assert metrics.feature_deltas(_t([[0.0, 0, 0, 0]]), _t([[3.0, 0, 0, 0]]), RANGES,
                                  CATEGORICAL).dtype == torch.float64
    w = metrics.action_cost(x, x_cf, mask, ones)
    assert w.dtype == torch.float64 and float(w[0]) == pytest.approx(3.5 * tol)


def test_an_action_that_keeps_the_value_is_not_a_change():
    x = _t([[0.0, 2.0, 0.0, 0.0]])
    mask = torch.tensor([[False, True, False, False]])
    dist = metrics.distances(x, x.clone(), mask, RANGES)
    assert float(dist.l0_actions[0]) == 0 and float(dist.l0_profile[0]) == 0


def test_ranges_must_be_positive():
    with pytest.raises(ValueError, match="^feature ranges must be positive$"):
        metrics.feature_deltas(_t([[0.0]]), _t([[1.0]]), _t([0.0]))


def test_plausible_is_at_least_as_likely():
    assert metrics.plausible(_t([-1.0, -2.0, -3.0]), _t([-1.0, -1.5, -4.0])).tolist() == [
        True,
        False,
        True,
    ]


def test_hap_needs_two_actionable_features():
    mask = torch.tensor([[True, False, False], [False, True, False], [True, False, False]])
    least = torch.tensor([[True, False, False], [True, False, False], [True, False, False]])
    out = metrics.hap(mask, least, torch.tensor([2, 3, 1]))
    assert out[0].item() == 1.0 and out[1].item() == 0.0 and math.isnan(out[2].item())


def test_violations_count_actions_outside_the_set():
    mask = torch.tensor([[True, True, False], [False, False, True]])
    hard = torch.tensor([[True, False, False], [False, False, True]])
    assert metrics.violations(mask, hard).tolist() == [1, 0]


def test_gtp_gtd():
    x = _t([[0.0, 0.0]])
    r = _t([[1.0, 0.0]])
    gt = _t([[0.0, 2.0]])
    assert float(metrics.gtp(r, gt)[0]) == pytest.approx(math.sqrt(5))
    assert metrics.gtp(_t([[3.0, 1.0], [1.0, 1.0]]), _t([[1.0, 1.0], [1.0, 1.0]])).tolist() == [
        2.0, 0.0]
    assert float(metrics.gtd(x, r, gt)[0]) == pytest.approx(1.0)  # orthogonal
    assert float(metrics.gtd(x, 2 * gt, gt)[0]) == pytest.approx(0.0)
    assert float(metrics.gtd(x, -gt, gt)[0]) == pytest.approx(2.0)  # opposite direction
    x2 = _t([[1.0, 1.0], [1.0, 1.0]])  # measured from the factual, not from the origin
    r2 = _t([[2.0, 2.0], [1.0, 2.0]])
    gt2 = _t([[3.0, 3.0], [2.0, 1.0]])
    assert metrics.gtd(x2, r2, gt2).tolist() == pytest.approx([0.0, 1.0])
    tiny = 1e-3  # short shifts: the direction counts, not the length
    for tiny_ in (1e-3, 1e-9):
        assert metrics.gtd(x, _t([[tiny_, 0.0]]), _t([[-tiny_, 0.0]])).tolist() == pytest.approx(
            [2.0])
    # float32 in: float64 out (every metric is computed in double precision)
    x32 = x.float()
    assert metrics.gtd(x32, r.float(), gt.float()).dtype == torch.float64
    assert metrics.feature_deltas(x32, r.float(), RANGES[:2].float()).dtype == torch.float64
    assert metrics.gtd(x, _t([[tiny, 0.0]]), _t([[-tiny, 0.0]])).tolist() == pytest.approx([2.0])


def test_nan_aware_summaries():
    t = _t([1.0, float("nan"), 3.0])
    assert metrics.nanmean(t) == 2.0
    assert metrics.nanstd(t) == pytest.approx(math.sqrt(2))
    assert math.isnan(metrics.nanmean(_t([float("nan")])))
    assert math.isnan(metrics.nanstd(_t([1.0])))


def test_context_evaluate_records_every_metric():
    """RecourseContext.evaluate wires the metrics to the SCM's counterfactual and density."""
    loan = get_scenario("loan")
    ctx = RecourseContext(loan, BayesDecision(loan), cost_profile=CostProfile("linear"))
    x = loan.dataset["test"][0][:2]
    profiles = profiles_from_elicitation(
        loan.feature_names,
        loan.actionable,
        [{"income": 1, "savings": 2}, {"loan_amount": 1}],
        "ranking",
    )
    mask = torch.zeros(2, loan.d, dtype=torch.bool)
    mask[0, 5] = True  # income: savings follows as a consequence
    mask[1, 6] = True  # savings, outside person 1's set
    values = x.clone()
    values[0, 5] += 2.0
    values[1, 6] += 5.0
    b = ctx.evaluate("test", x, mask, values, profiles, runtime=0.0)
    expected_cf = loan.scm.counterfactual(x, mask, values)
    assert torch.equal(b.x_cf, expected_cf)
    assert b.violations.tolist() == [0, 1]
    assert float(b.cost[0]) == pytest.approx(2.0 / float(loan.ranges[5]))
    assert float(b.weighted_cost[0]) == pytest.approx(float(b.cost[0]))  # rank 1: weight 1
    assert b.hap[0].item() == 0.0 and math.isnan(b.hap[1].item())
    assert b.plausible.tolist() == (b.log_prob_cf >= b.log_prob_factual).tolist()
    assert b.l0_profile[0].item() >= 1 and b.l0_actions[0].item() == 1


def test_the_papers_hap_counts_valid_recourses_and_one_feature_people():
    """hap as the paper's tables count it: among people with a valid recourse, the share
    whose x' changes their least-preferred actionable feature (a consequence counts; a
    person with one actionable feature counts, it is their least preferred); an invalid
    recourse is left out, not counted as 0."""
    from engine.papers.recourse_benchmark import hap_paper, hap_profile, rejected_population

    loan = get_scenario("loan")
    ctx = RecourseContext(loan, BayesDecision(loan), cost_profile=CostProfile("linear"))
    x = rejected_population(loan, ctx.classifier, 4)
    profiles = profiles_from_elicitation(
        loan.feature_names, loan.actionable,
        [{"income": 1, "savings": 2}, {"loan_amount": 1},
         {"loan_amount": 1, "income": 2}, {"income": 1, "savings": 2}], "ranking")
    mask = torch.zeros(4, loan.d, dtype=torch.bool)
    mask[[0, 3], 5] = True  # income
    mask[[1, 2], 3] = True  # loan amount (the duration follows)
    values = x.clone()
    values[0, 5] += 30.0  # savings follows income up: approved
    values[[1, 2], 3] -= 30.0
    b = ctx.evaluate("test", x, mask, values, profiles, runtime=0.0)
    assert b.valid.tolist() == [True, True, True, False]  # person 3's income is unchanged
    # person 0: savings (least preferred) moves as a consequence; 1: its only feature;
    # 2: income (least preferred) untouched; 3: no valid recourse, left out
    assert hap_paper(b, profiles) == pytest.approx(2 / 3)
    # over people with >= 2 features, the invalid one counting 0: 1 of 3
    assert hap_profile(b, profiles) == pytest.approx(1 / 3)
    none = ctx.evaluate("test", x[3:], mask[3:], values[3:], profiles[3:], runtime=0.0)
    assert math.isnan(hap_paper(none, profiles[3:]))
