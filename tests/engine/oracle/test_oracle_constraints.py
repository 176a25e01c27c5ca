"""The causal Oracle, hard constraints and plausibility: actionable sets never exceeded,
adversarial profiles, the plausibility margin.

The decision model is the Bayes rule of the exact SCM (conftest's ``clf``), so no trained
artifact is needed; grids are small so the brute-force searches stay fast.
"""

from __future__ import annotations

import math

import pytest
import torch

from engine.preferences import ActionabilityProfiles, CostProfile
from engine.recourse.base import RecourseContext
from engine.recourse.oracle.grid import PLAUSIBILITY_MARGIN
from engine.recourse.oracle.method import CausalOracle
from tests.engine.oracle.oracle_worlds import (
    INC,
    Approves,
    D,
    IndependentWorld,
    L,
    S,
    cost_tables,
    manual_profiles,
)
from tests.engine.scenario_profiles import context_of, profiles_of


class _StepDensityWorld(IndependentWorld):
    """Independent features whose log-density is flat but PLAUSIBILITY_MARGIN higher below a
    given point ``top``: from x = top, a plan lowering one feature changes log p by exactly
    the margin, one lowering none leaves it unchanged."""

    def __init__(self, top: torch.Tensor):
        super().__init__()
        self.top = top

    def noise_log_prob(self, u):
        return PLAUSIBILITY_MARGIN * (u < self.top).double()


@pytest.mark.parametrize("plausibility", [True, False])
def test_one_actionable_feature_is_never_exceeded(loan, clf, people, plausibility):
    """Each person may act on one feature only, each of the four in turn."""
    oracle = CausalOracle(context_of(loan, clf), bins=25, plausibility=plausibility)
    x = people[:40]
    for j in loan.actionable:
        profiles = manual_profiles(loan, [[j]] * len(x))
        batch = oracle.recourse(x, profiles)
        assert int(batch.violations.sum()) == 0
        assert not bool(batch.action_mask[:, [f for f in range(loan.d) if f != j]].any())
        assert torch.equal(batch.action_mask[:, j], batch.found)


def test_adversarial_profiles_never_violate(loan, clf, people):
    """Weights that make the forbidden features look free and allowed ones dear change nothing.

    The profile marks only savings as actionable; its weight is huge and the non-actionable
    features' scores say "easiest". No plausibility constraint, so other actions would help.
    Nobody may act outside their set, and someone with no actionable feature gets nothing.
    """
    x = people[:30]
    n = len(x)
    hard = torch.zeros(n, loan.d, dtype=torch.bool)
    hard[:, S] = True
    hard[0] = False  # nothing actionable at all
    scores = torch.ones(n, loan.d, dtype=torch.float64)
    scores[:, S] = 4.0
    profiles = ActionabilityProfiles(hard, scores, torch.full((n,), 4.0), "likert")
    ctx = context_of(loan, clf, "convex")
    ctx.cost_profile = CostProfile("convex", a=1e6)
    batch = CausalOracle(ctx, bins=25, plausibility=False).recourse(x, profiles)
    assert int(batch.violations.sum()) == 0
    assert not bool(batch.found[0])
    assert not bool(batch.action_mask[0].any())
    assert torch.equal(batch.x_cf[0], x[0])
    assert not bool(batch.action_mask[:, [L, D, INC]].any())
    assert bool(batch.found[1:].any())


def test_plausibility_constraint_holds_and_costs_validity(loan, clf, people):
    x = people
    profiles = profiles_of(loan, len(x), 2, seed=2)
    ctx = context_of(loan, clf)
    on = CausalOracle(ctx, bins=25).recourse(x, profiles)
    off = CausalOracle(ctx, bins=25, plausibility=False).recourse(x, profiles)
    assert bool(on.plausible.all() | ~on.found.any())
    assert bool(on.plausible[on.found].all())
    assert bool(off.valid[on.valid].all())
    assert off.valid.double().mean() > on.valid.double().mean()
    # Where both found recourse, dropping a constraint can only make the optimum cheaper.
    both = on.found & off.found
    assert bool((off.weighted_cost[both] <= on.weighted_cost[both] + 1e-12).all())


def test_validity_falls_as_features_are_removed(loan, clf, people):
    oracle = CausalOracle(context_of(loan, clf), bins=25)
    validity = [
        float(
            oracle.recourse(people, profiles_of(loan, len(people), k, seed=9)).valid.double().mean()
        )
        for k in (4, 1)
    ]
    assert validity[0] > validity[1]


def test_bad_inputs_raise(loan, clf, people):
    oracle = CausalOracle(context_of(loan, clf), bins=3)
    with pytest.raises(ValueError, match="actionability profiles"):
        oracle.recourse(people[:3], profiles_of(loan, 2, 2))
    with pytest.raises(ValueError, match="bins"):
        CausalOracle(context_of(loan, clf), bins=0)
    for setting in ("chunk_people", "band", "max_band", "batch_rows"):
        with pytest.raises(ValueError, match=r"^chunk_people, band, max_band and batch_rows "
                           r"must be >= 1$"):
            CausalOracle(context_of(loan, clf), bins=3, **{setting: 0})


def test_pruning_and_admission_follow_the_plausibility_rule_at_its_margin(loan, monkeypatch):
    """A plan (i1, i2) is plausible when dl1[i1] + dl2[i2] + offset >= PLAUSIBILITY_MARGIN
    (offset = log p(x^0) - log p(x), non-zero in a world whose no-action counterfactual is
    not x). The tables drop exactly the available options that no available partner of the
    same person makes plausible, and the search admits exactly the plausible non-empty plans:
    at the margin itself too. Without the constraint nothing is pruned."""
    import engine.recourse.oracle.method as oracle_module

    m, inf = PLAUSIBILITY_MARGIN, math.inf
    w1 = [[0.0, 1.0, 2.0, inf], [0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0]]
    w2 = [[0.0, 10.0, 20.0, inf], [0.0, 10.0, 20.0, 30.0], [0.0, 10.0, 20.0, 30.0],
          [0.0, 10.0, 20.0, 30.0]]
    # person 0: plausible exactly at the margin (dl2 = m), unavailable options of high density;
    # person 1: offset 1, so the empty plan and losses below 1 are plausible;
    # persons 2 and 3: their best partners differ from everybody else's
    dl1 = [[0.0, 0.0, -3.0, 7.0], [0.0, -0.5, -2.0, 0.0], [0.0, 5.0, -1.0, 0.0],
           [0.0, 4.0, -1.0, 0.0]]
    dl2 = [[0.0, m, -3.0, 7.0], [0.0, -0.5, -2.0, 0.0], [0.0, -8.0, -1.0, 0.0],
           [0.0, 4.0, -6.0, 0.0]]
    offset = [0.0, 1.0, 0.0, 0.0]

    def tables():
        return cost_tables(w1, w2, dlogp=(dl1, dl2), offset=offset)

    f64 = torch.float64
    a1, a2 = (torch.tensor(w, dtype=f64).isfinite() for w in (w1, w2))
    plausible = (torch.tensor(dl1, dtype=f64)[:, :, None] + torch.tensor(dl2, dtype=f64)[:, None]
                 + torch.tensor(offset, dtype=f64)[:, None, None] >= m)
    ok = plausible & a1[:, :, None] & a2[:, None, :]
    keep1, keep2 = a1 & ok.any(dim=2), a2 & ok.any(dim=1)
    assert keep1[0].tolist() == [True, True, False, False]  # kept at the margin
    assert keep2[0].tolist() == [False, True, False, False]
    assert keep1[1].tolist() == [True, True, False, True]  # kept thanks to the offset

    ctx = RecourseContext(loan, Approves())
    monkeypatch.setattr(oracle_module, "build_tables", lambda *args: tables())
    pruned = CausalOracle(ctx, bins=1, grid_range="training")._tables(None, None, None)
    assert torch.equal(pruned.first.wcost.isfinite(), keep1)
    assert torch.equal(pruned.second.wcost.isfinite(), keep2)
    unpruned = CausalOracle(ctx, bins=1, plausibility=False, grid_range="training")._tables(None, None, None)
    assert torch.equal(unpruned.first.wcost.isfinite(), a1)
    assert torch.equal(unpruned.second.wcost.isfinite(), a2)

    # every plan is approved: the optimum is the cheapest plausible non-empty plan
    best1, best2, _ = CausalOracle(ctx, bins=1, grid_range="training")._search(pruned)
    cost = torch.tensor(w1, dtype=f64)[:, :, None] + torch.tensor(w2, dtype=f64)[:, None]
    admissible = ok.clone()
    admissible[:, 0, 0] = False
    want = [divmod(int(cost[q].masked_fill(~admissible[q], inf).argmin()), 4) for q in range(4)]
    assert list(zip(best1.tolist(), best2.tolist(), strict=True)) == want
    assert want == [(0, 1), (1, 0), (1, 0), (1, 0)]


def test_plans_exactly_at_the_plausibility_margin_are_plausible(loan, clf, people):
    """In a world where lowering one feature gains exactly PLAUSIBILITY_MARGIN of log-density
    and raising gains nothing, the plausible plans are those lowering a feature (dearer than
    the raises the decision model would take without the constraint): the Oracle and its
    reference find the same optimum, which gains exactly the margin."""
    at_margin = 0
    for i in range(4):
        x = people[i : i + 1]
        world = _StepDensityWorld(x[0])
        oracle = CausalOracle(RecourseContext(loan, clf, world=world), bins=4)
        profiles = manual_profiles(loan, [[L, D, INC, S]])
        batch = oracle.recourse(x, profiles)
        found, cost = oracle.reference_search(x, profiles)
        assert found.tolist() == batch.found.tolist() == [True], i
        assert math.isclose(float(cost[0]), float(oracle.objective(batch, profiles)[0]),
                            rel_tol=1e-9)
        gain = float((world.log_prob(batch.x_cf) - world.log_prob(x))[0])
        assert gain >= PLAUSIBILITY_MARGIN
        at_margin += gain == PLAUSIBILITY_MARGIN
    assert at_margin > 0
