"""The causal Oracle, the search: optimality against brute force and the reference loop, cost
bands, pair counts and what it reports.

The decision model is the Bayes rule of the exact SCM (conftest's ``clf``), so no trained
artifact is needed; grids are small so the brute-force searches stay fast.
"""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from engine.metrics import action_cost
from engine.papers.recourse_benchmark import rejected_population
from engine.preferences import CostProfile
from engine.recourse.base import RecourseContext
from engine.recourse.oracle.grid import PLAUSIBILITY_MARGIN, ActionGrid, reference_grid_search
from engine.recourse.oracle.method import CausalOracle
from tests.engine.oracle.oracle_worlds import Approves, D, L, cost_tables
from tests.engine.scenario_profiles import context_of, profiles_of


@pytest.mark.parametrize(
    ("k", "cost_profile", "plausibility", "grid"),
    [
        (4, "constant", True, "factual"),
        (4, "convex", True, "factual"),
        (3, "linear", False, "factual"),
        (None, "concave", True, "factual"),
        (3, "linear", True, "shared"),
    ],
)
def test_optimum_equals_brute_force(loan, clf, people, k, cost_profile, plausibility, grid):
    ctx = context_of(loan, clf, cost_profile)
    oracle = CausalOracle(ctx, bins=6, plausibility=plausibility, grid=grid, chunk_people=7,
                          band=8)
    x = people[:20]
    profiles = profiles_of(loan, len(x), k, seed=3)
    batch = oracle.recourse(x, profiles)
    assert 0 < int(batch.found.sum()) < len(x) or not plausibility
    weights = profiles.weights(ctx.cost_profile)
    # the Oracle minimizes over its own ranges; the batch reports over the scenario's
    objective = oracle.objective(batch, profiles)
    assert torch.allclose(objective, action_cost(x, batch.action_values, batch.action_mask,
                                                 oracle.cost_ranges, weights))
    reported = action_cost(x, batch.action_values, batch.action_mask, loan.ranges, weights)
    assert torch.allclose(batch.weighted_cost[batch.found], reported[batch.found])
    ties = 0
    for i in range(len(x)):
        ref = reference_grid_search(
            loan, clf, oracle.grid, x[i], profiles.hard_mask[i], weights[i], plausibility,
            ranges=oracle.cost_ranges,
        )
        assert bool(batch.found[i]) == ref.found, i
        if ref.found:
            assert math.isclose(float(objective[i]), ref.weighted_cost, rel_tol=1e-9)
            if not torch.equal(batch.action_mask[i], ref.action_mask):
                # an exact tie between plans: every action's cost is a multiple of half a
                # bin over the range the grid spans (a half step on each of three features
                # costs a step and a half on one); the plan's validity is checked below
                ties += 1
                continue
            acted = ref.action_mask
            if not torch.allclose(batch.action_values[i][acted], ref.action_values[acted]):
                # an exact tie (an even number of factual bins puts values half a bin either
                # side of x, at equal cost): the Oracle's plan must be another grid point
                vals, ok = oracle.grid.values(x[i : i + 1])
                cols = [list(loan.actionable).index(j) for j in torch.nonzero(acted).flatten()]
                for col, v in zip(cols, batch.action_values[i][acted], strict=True):
                    assert bool((ok[0, col] & torch.isclose(vals[0, col], v)).any()), i
    assert ties <= int(batch.found.sum()) // 2  # ties are the exception, not the rule
    assert bool(batch.valid[batch.found].all())
    assert not bool(batch.valid[~batch.found].any())
    if plausibility:
        assert bool(batch.plausible[batch.found].all())


def test_the_dearest_pair_is_not_lost_to_rounding(loan, clf):
    """With two features on a coarse grid the only valid plan is often the dearest pair, whose
    cost a_i + b_k is the search's upper bound: b_k <= top - a_i can fail by float rounding."""
    from engine.papers.recourse_benchmark import BenchmarkConfig, constraint_profiles

    x = rejected_population(loan, clf, 60)
    profiles = constraint_profiles(loan, "2", BenchmarkConfig(n=60, bins=8), 60)
    oracle = CausalOracle(context_of(loan, clf), bins=8)
    batch = oracle.recourse(x, profiles)
    weights = profiles.weights(oracle.context.cost_profile)
    for i in range(len(x)):
        ref = reference_grid_search(loan, clf, oracle.grid, x[i], profiles.hard_mask[i], weights[i])
        assert bool(batch.found[i]) == ref.found, i


def test_reference_search_matches_a_point_by_point_loop(loan, clf, people):
    """The reference itself against the plainest possible loop (one SCM call per point)."""

    grid = ActionGrid.from_scenario(loan, 3)
    profiles = profiles_of(loan, 3, 3, seed=5, elicitation="likert")
    weights = profiles.weights(CostProfile("linear"))
    for i in range(3):
        x = people[i : i + 1]
        best, best_cost = None, math.inf
        feats = [j for j in loan.actionable if profiles.hard_mask[i, j]]
        for codes in itertools.product(range(4), repeat=len(feats)):
            if not any(codes):
                continue
            mask = torch.zeros(1, loan.d, dtype=torch.bool)
            values = x.clone()
            grid_vals = grid.values(x)[0][0]
            for j, c in zip(feats, codes, strict=True):
                if c:
                    mask[0, j] = True
                    values[0, j] = grid_vals[grid.features.index(j), c - 1]
            x_cf = loan.scm.counterfactual(x, mask, values)
            if not bool(clf.decision(x_cf.float())[0]):
                continue
            if loan.scm.log_prob(x_cf) < loan.scm.log_prob(x) + PLAUSIBILITY_MARGIN:
                continue
            cost = float(((values - x).abs()[0] / loan.ranges * weights[i] * mask[0]).sum())
            if cost < best_cost:
                best, best_cost = mask[0].clone(), cost
        ref = reference_grid_search(loan, clf, grid, x[0], profiles.hard_mask[i], weights[i])
        assert ref.found == (best is not None)
        if best is not None:
            assert math.isclose(ref.weighted_cost, best_cost, rel_tol=1e-12)
            assert torch.equal(ref.action_mask, best)


@pytest.mark.parametrize("plausibility", [True, False])
def test_the_methods_reference_search_finds_the_same_optimum(loan, clf, people, plausibility):
    """CausalOracle.reference_search (the whole grid, one person at a time, under the
    method's own grid, weights and plausibility setting) agrees with the batched search:
    who has recourse and at what weighted cost (the Oracle's objective)."""
    ctx = context_of(loan, clf, "linear")
    oracle = CausalOracle(ctx, bins=4, plausibility=plausibility)
    x = people[:6]
    profiles = profiles_of(loan, len(x), 3, seed=8, elicitation="likert")
    batch = oracle.recourse(x, profiles)
    found, cost = oracle.reference_search(x, profiles)
    assert found.dtype == torch.bool and cost.dtype == torch.float64
    assert found.tolist() == batch.found.tolist()
    assert found.any()
    objective = oracle.objective(batch, profiles)
    for i in range(len(x)):
        if found[i]:
            assert math.isclose(float(cost[i]), float(objective[i]), rel_tol=1e-9)
        else:
            assert cost[i] == math.inf
    with pytest.raises(ValueError, match=r"^factuals is empty: expected at least one profile$"):
        oracle.reference_search(x[:0], profiles[torch.arange(0)])


def test_recourse_reports_its_method_runtime_and_grid_points(loan, clf, people):
    ctx = context_of(loan, clf)
    oracle = CausalOracle(ctx, bins=4, chunk_people=3)
    x = people[:7]
    profiles = profiles_of(loan, len(x), 3, seed=2)
    batch = oracle.recourse(x, profiles)
    assert batch.method == "oracle" and isinstance(batch.runtime, float) and batch.runtime > 0
    assert batch.found.dtype == torch.bool and batch.found.any()
    evaluated = batch.extras["grid_points_evaluated"]
    assert evaluated.dtype == torch.long and len(evaluated) == len(x)
    assert bool((evaluated[batch.found] >= 1).all()) and bool((evaluated <= 5 ** 4).all())


def test_the_reference_reports_no_recourse_as_an_empty_plan(loan, clf, people):
    """Without actionable features (nothing searched) and when no grid point is valid (the
    whole grid searched), the reference returns found False, no action, zero values, an
    infinite cost and the number of grid points it evaluated."""

    grid = ActionGrid.from_scenario(loan, 3)
    weights = torch.ones(loan.d, dtype=torch.float64)
    x = people[0]
    none = torch.zeros(loan.d, dtype=torch.bool)
    empty = reference_grid_search(loan, clf, grid, x, none, weights)
    assert (empty.found, empty.weighted_cost, empty.grid_points) == (False, math.inf, 0)
    assert empty.action_mask.dtype == torch.bool and not empty.action_mask.any()
    assert empty.action_mask.shape == (loan.d,)
    assert empty.action_values.dtype == torch.float64
    assert torch.equal(empty.action_values, torch.zeros(loan.d, dtype=torch.float64))

    class Never:
        def decision(self, x):
            return torch.zeros(x.shape[0], dtype=torch.bool)

    one = torch.zeros(loan.d, dtype=torch.bool)
    one[[L, D]] = True
    miss = reference_grid_search(loan, Never(), grid, x, one, weights, plausibility=False)
    assert (miss.found, miss.weighted_cost, miss.grid_points) == (False, math.inf, 4 * 4 - 1)
    assert miss.action_mask.dtype == torch.bool and not miss.action_mask.any()
    assert miss.action_values.dtype == torch.float64
    assert torch.equal(miss.action_values, torch.zeros(loan.d, dtype=torch.float64))
    hit = reference_grid_search(loan, clf, grid, x, one | True, weights, plausibility=False)
    assert hit.found and hit.grid_points == 4 ** len(grid.features) - 1


def test_the_search_visits_doubling_cost_bands_and_counts_what_it_evaluated(loan):
    """Band after band, cheapest first: each band holds the next ``band`` pairs by weighted
    cost (1, 2, 4, then max_band = 4 each); a person is done at the first band holding a
    valid plan, and gets its cheapest valid plan (original option indices; -1 without
    recourse); ``evaluated`` counts the admissible plans of the bands visited."""
    # pair (i1, i2) costs first[i1] + second[i2]: the 16 finite pairs cost 0, 1, ..., 15
    # (options stored out of cost order; option 4 of the first table is not available)
    first = [0.0, 2.0, 3.0, 1.0, math.inf]
    second = [0.0, 8.0, 4.0, 12.0]
    tables = cost_tables([first] * 3, [second] * 3)
    valid = {(3, 1, 0),  # person 0: 1 + 8 = 9
             (1, 2, 1), (1, 3, 1)}  # person 1: 2 + 4 = 6 and 2 + 12 = 14; person 2: none
    ctx = RecourseContext(loan, Approves(valid))
    oracle = CausalOracle(ctx, bins=1, plausibility=False, band=1, max_band=4)
    best1, best2, evaluated = oracle._search(tables)
    assert best1.tolist() == [3, 1, -1] and best2.tolist() == [1, 2, -1]
    assert best1.dtype == best2.dtype == evaluated.dtype == torch.long
    # bands: cost 0 (the empty plan: not admissible), 1-2, 3-6, 7-10, 11-14, 15
    assert evaluated.tolist() == [10, 6, 15]


def test_a_band_that_ends_at_the_dearest_cost_still_reaches_the_dearest_plan(loan):
    """a + b rounds to a float t with t - a < b, so the dearest pair fails b <= t - a and is
    not counted at its own cost: a band that ends exactly at that cost (the bisection stops
    there when the band's last places are taken by pairs within 1e-12 of it) leaves it out,
    and the search must go on past it."""
    am, bm, a2 = 0.3101475693193326, 0.7298317482601286, 0.3101475693184338
    assert (am + bm) - am < bm
    tables = cost_tables([[0.0, a2, am]], [[0.0, bm - 1e-13, bm]])
    ctx = RecourseContext(loan, Approves({(2, 2, 0)}))  # only the dearest plan is valid
    oracle = CausalOracle(ctx, bins=1, plausibility=False, band=1)
    best1, best2, evaluated = oracle._search(tables)
    assert (best1.tolist(), best2.tolist(), evaluated.tolist()) == ([2], [2], [8])


def test_pair_counts_bands_and_thresholds_of_sorted_cost_tables(loan, clf):
    """The search's primitives on two people's sorted option costs a, b (pair cost a_i + b_k;
    +inf: not available): the pairs up to a threshold, the pairs of a band in original option
    indices, and a band's upper threshold: the cost of its ``band``-th pair (ties included),
    or past the dearest pair when every remaining pair fits."""
    a = torch.tensor([[0.0, 1.0, 2.0, math.inf], [0.0, 3.0, 5.0, 6.0]], dtype=torch.float64)
    b = torch.tensor([[0.0, 4.0, 8.0], [0.0, 0.5, math.inf]], dtype=torch.float64)
    order1 = torch.tensor([[2, 0, 3, 1], [0, 1, 2, 3]])
    order2 = torch.tensor([[1, 2, 0], [2, 0, 1]])
    cost = a[:, :, None] + b[:, None, :]  # (person, i, k)

    def count(tau):
        return [int((cost[q] <= tau[q]).sum()) for q in range(2)]

    for tau in ([-1.0, -1.0], [0.0, 0.0], [4.0, 3.5], [5.0, 6.0], [9.0, 6.5], [10.0, 100.0]):
        t = torch.tensor(tau, dtype=torch.float64)  # mostly pair costs exactly
        assert CausalOracle._count(a, b, t).tolist() == count(t), tau

    lo, hi = torch.tensor([2.0, 3.0], dtype=torch.float64), torch.tensor([9.0, 6.0])
    pairs = CausalOracle._band_pairs(a, b, order1, order2, lo, hi.double())
    got = sorted(zip(pairs.person.tolist(), pairs.i1.tolist(), pairs.i2.tolist(),
                     pairs.wcost.tolist(), strict=True))
    want = sorted((q, int(order1[q, i]), int(order2[q, k]), float(cost[q, i, k]))
                  for q in range(2) for i in range(4) for k in range(3)
                  if lo[q] < cost[q, i, k] <= hi[q])
    assert got == want and len(want) == 9

    oracle = CausalOracle(context_of(loan, clf), bins=1)
    top = torch.tensor([10.0, 6.5], dtype=torch.float64)  # the dearest finite pairs
    # the next 3 pairs after 1.5 (0, 1 counted) are 2, 4, 5; after 0.2 (0): 0.5, 3, 3.5
    tau = oracle._next_threshold(a, b, torch.tensor([1.5, 0.2], dtype=torch.float64), top, 3)
    assert count(tau) == [5, 4]
    assert bool((tau >= torch.tensor([5.0, 3.5])).all())
    # every remaining pair fits (3 < 4 and exactly 4): past the dearest pair, even when
    # costs are large
    for scale in (1.0, 1e7):
        rest = torch.tensor([6.5, 4.0], dtype=torch.float64) * scale
        tau = oracle._next_threshold(a * scale, b * scale, rest, top * scale, 4)
        assert bool((tau > top * scale).all()), scale
        assert bool((tau <= top * scale + 1e-8 * (1 + top * scale)).all())
        assert CausalOracle._count(a * scale, b * scale, tau).tolist() == [9, 8]


def test_first_minimum_is_each_persons_earliest_cheapest_entry():
    """The search's pick per person: the position of its cheapest entry, the earliest one
    among equal costs (so the plan found does not depend on tensor internals), and -1 for a
    person without entries."""
    from engine.recourse.oracle.method import _first_minimum

    person = torch.tensor([2, 0, 2, 0, 0, 2])
    cost = torch.tensor([3.0, 5.0, 1.0, 4.0, 4.0, 1.0], dtype=torch.float64)
    first = _first_minimum(person, cost, 4)
    assert first.dtype == torch.long and first.tolist() == [3, -1, 2, -1]
    assert _first_minimum(person[:0], cost[:0], 2).tolist() == [-1, -1]


def test_selected_pairs_keep_every_field_row_by_row():
    from engine.recourse.oracle.method import _Pairs

    f64 = torch.float64
    pairs = _Pairs(torch.tensor([0, 0, 1]), torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6]),
                   torch.tensor([0.5, 1.5, 2.5], dtype=f64), torch.tensor([-1.0, 0.0, 1.0], dtype=f64))
    for idx in (torch.tensor([2, 0]), torch.tensor([True, False, True])):
        rows = idx.nonzero().flatten().tolist() if idx.dtype == torch.bool else idx.tolist()
        sub = pairs.select(idx)
        for name in ("person", "i1", "i2", "wcost", "dlogp"):
            assert getattr(sub, name).tolist() == [getattr(pairs, name).tolist()[r] for r in rows]


def test_a_persons_search_does_not_depend_on_who_else_is_in_the_chunk(loan):
    """Cost bands are per person: beside somebody whose plans cost a trillion times more, a
    person evaluates the same plans and gets the same plan as when searched alone."""
    first, second = [0.0, 2.0, 3.0, 1.0, math.inf], [0.0, 8.0, 4.0, 12.0]
    dear1, dear2 = [1e12 * c for c in first], [1e12 * c for c in second]
    ctx = RecourseContext(loan, Approves({(3, 1, 0), (1, 2, 1)}))
    oracle = CausalOracle(ctx, bins=1, grid_range="training", plausibility=False, band=1, max_band=4)
    alone = oracle._search(cost_tables([first], [second]))
    both = oracle._search(cost_tables([first, dear1], [second, dear2]))
    assert [t.tolist() for t in alone] == [[3], [1], [10]]
    assert [t.tolist()[0] for t in both] == [3, 1, 10]
    assert (both[0][1], both[1][1]) == (1, 2)
