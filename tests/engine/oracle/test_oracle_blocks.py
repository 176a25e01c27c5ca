"""The causal Oracle, the block decomposition: independent blocks of features, exact against the
whole search, and the worlds it needs.

The decision model is the Bayes rule of the exact SCM (conftest's ``clf``), so no trained
artifact is needed; grids are small so the brute-force searches stay fast.
"""

from __future__ import annotations

import pytest
import torch

from engine.preferences import CostProfile
from engine.recourse.base import RecourseContext
from engine.recourse.oracle.grid import (
    ActionGrid,
    BlockTable,
    PersonTables,
    action_blocks,
    assemble,
    build_tables,
    reference_grid_search,
)
from engine.recourse.oracle.method import CausalOracle
from engine.scenarios import get_scenario
from engine.scenarios.loan import FEATURES
from tests.engine.oracle.oracle_worlds import INC, Approves, D, IndependentWorld, L, S
from tests.engine.scenario_profiles import context_of, profiles_of


class _LinkedWorld(IndependentWorld):
    """IndependentWorld with some features adding up their parents' values:
    x_k = u_k + sum of x_j over the parents j of k (``parents``: k -> parents, in causal
    order; unit Jacobian)."""

    def __init__(self, parents: dict[int, tuple[int, ...]]):
        super().__init__()
        self.parents = {j: () for j in range(len(FEATURES))} | parents

    def equation(self, j, x, u_j):
        return u_j + sum(x[:, k] for k in self.parents[j])

    def inverse_equation(self, j, x):
        return x[:, j] - sum(x[:, k] for k in self.parents[j])


def test_loan_splits_into_two_independent_blocks(loan):
    assert action_blocks(loan.scm, loan.actionable) == [((L, D), (L, D)), ((INC, S), (INC, S))]


def test_block_decomposition_is_exact(loan, people):
    """Assembled counterfactuals equal the SCM's own; log-density changes add up."""

    grid = ActionGrid.from_scenario(loan, 3)
    x = people[:5]
    hard = torch.zeros(5, loan.d, dtype=torch.bool)
    hard[:, list(loan.actionable)] = True
    t = build_tables(loan, grid, x, hard, torch.ones(5, loan.d, dtype=torch.float64))
    assert (t.first.m, t.second.m) == (16, 16)
    i1, i2 = torch.meshgrid(torch.arange(16), torch.arange(16), indexing="ij")
    i1, i2 = i1.flatten().repeat(5), i2.flatten().repeat(5)
    person = torch.arange(5).repeat_interleave(256)
    x_cf, mask, values = assemble(t, person, i1, i2)
    assert not values[~mask].any()  # 0 where not acted (BlockTable.values)
    direct = loan.scm.counterfactual(x[person], mask, torch.where(mask, values, x[person]))
    assert torch.equal(x_cf, direct)
    dl = t.first.dlogp[person, i1] + t.second.dlogp[person, i2] + t.offset[person]
    exact = loan.scm.log_prob(direct) - loan.scm.log_prob(x[person])
    assert torch.allclose(dl, exact, atol=1e-9, rtol=0)


def test_merged_blocks_give_the_same_optimum(loan, clf, people):
    """One merged table (paired with "no action") searches the same grid as two tables."""
    oracle = CausalOracle(context_of(loan, clf), bins=5)
    x = people[:10]
    profiles = profiles_of(loan, 10, None, seed=11)
    t = oracle._tables(x, profiles.hard_mask, profiles.weights(CostProfile()))
    merged = PersonTables(t.x0, t.offset, t.first.product(t.second), BlockTable.no_action(10, 7))
    b1, b2, _ = oracle._search(t)
    m1, m2, _ = oracle._search(merged)
    assert torch.equal(m1 >= 0, b1 >= 0)
    assert torch.equal(m2[m1 >= 0], torch.zeros(int((m1 >= 0).sum()), dtype=torch.long))
    assert torch.equal(m1[m1 >= 0], (b1 * t.second.m + b2)[b1 >= 0])
    # option i * m2 + k of the product is option i of the first table with option k of the
    # second: costs and density changes add up, and it assembles into the same plan
    i, k = (g.flatten() for g in torch.meshgrid(torch.arange(t.first.m),
                                                 torch.arange(t.second.m), indexing="ij"))
    for name in ("cost", "wcost", "dlogp"):
        assert torch.equal(getattr(merged.first, name),
                           getattr(t.first, name)[:, i] + getattr(t.second, name)[:, k]), name
    person = torch.arange(10).repeat_interleave(len(i))
    i, k = i.repeat(10), k.repeat(10)
    for got, want in zip(assemble(merged, person, i * t.second.m + k, torch.zeros_like(i)),
                         assemble(t, person, i, k), strict=True):
        assert torch.equal(got, want)


def test_rejects_a_world_model_that_is_not_an_scm(loan, clf):
    class Flow:
        def counterfactual(self, x, m, v):
            return x

        def log_prob(self, x):
            return torch.zeros(len(x))

    with pytest.raises(ValueError, match=r"^the causal Oracle needs the exact SCM as the "
                       r"context's world model \(got Flow\)$"):
        CausalOracle(RecourseContext(loan, clf, world=Flow(), density_source="flow"))


def test_the_search_and_its_reference_plan_in_the_contexts_world(loan, clf, people):
    """A world other than the scenario's SCM (independent features: acting on the loan
    amount leaves the duration as it is) is where both the batched search and
    ``reference_search`` plan: they agree with each other, not with Loan's SCM."""
    world = IndependentWorld()
    x = people[:10]
    profiles = profiles_of(loan, len(x), None, seed=6)
    oracle = CausalOracle(RecourseContext(loan, clf, world=world), bins=5)
    batch = oracle.recourse(x, profiles)
    found, cost = oracle.reference_search(x, profiles)
    assert found.tolist() == batch.found.tolist() and found.any()
    objective = oracle.objective(batch, profiles)
    assert torch.allclose(cost[found], objective[found], rtol=1e-9, atol=0)
    on_loan = CausalOracle(context_of(loan, clf), bins=5).reference_search(x, profiles)
    assert on_loan[0].tolist() != found.tolist()


def test_blocks_merge_features_whose_consequences_meet():
    """Features join one block when the features they change (themselves and their
    descendants) meet, also through a feature that links two blocks formed before it."""
    # 0 -> 3 <- 2 -> 4 <- 1: feature 2 links {0, 3} and {1, 4}; 5 -> 6 stays apart
    world = _LinkedWorld({3: (0, 2), 4: (1, 2), 6: (5,)})
    assert action_blocks(world, (0, 1, 2, 5)) == [((0, 1, 2), (0, 1, 2, 3, 4)), ((5,), (5, 6))]
    assert action_blocks(world, (0, 1)) == [((0,), (0, 3)), ((1,), (1, 4))]


def test_the_no_action_table_is_one_free_option():
    t = BlockTable.no_action(3, 7)
    assert t.m == 1 and t.affected == ()
    assert t.acted.shape == (1, 7) and t.acted.dtype == torch.bool and not t.acted.any()
    for name, shape in (("values", (3, 1, 7)), ("x_aff", (3, 1, 0)), ("cost", (3, 1)),
                        ("wcost", (3, 1)), ("dlogp", (3, 1))):
        v = getattr(t, name)
        assert v.shape == shape and v.dtype == torch.float64 and not v.any(), name


def test_a_world_of_one_block_is_searched_against_no_action(loan, clf, people):
    """When every actionable feature changes a common descendant (here savings, the sum of
    the other three), the grid is one block, paired with the no-action table; the search
    finds the reference's optimum."""
    world = _LinkedWorld({S: (L, D, INC)})
    ctx = RecourseContext(loan, clf, world=world)
    oracle = CausalOracle(ctx, bins=3, plausibility=False)
    x = people[:8]
    profiles = profiles_of(loan, len(x), None, seed=1)
    t = oracle._tables(x, profiles.hard_mask, profiles.weights(ctx.cost_profile))
    assert t.first.affected == (L, D, INC, S) and (t.first.m, t.second.m) == (4 ** 4, 1)
    batch = oracle.recourse(x, profiles)
    found, cost = oracle.reference_search(x, profiles)
    assert found.tolist() == batch.found.tolist() and found.any()
    objective = oracle.objective(batch, profiles)
    assert torch.allclose(cost[found], objective[found], rtol=1e-9, atol=0)


def test_the_grid_search_says_it_needs_an_exact_scm():
    tominaga = get_scenario("tominaga")
    grid = ActionGrid.from_scenario(tominaga, 2)
    x = tominaga.bounds[:1].clone()
    hard = torch.ones(1, tominaga.d, dtype=torch.bool)
    weights = torch.ones(1, tominaga.d, dtype=torch.float64)
    message = r"^the Oracle needs an exact SCM; scenario 'tominaga' is a pool world$"
    with pytest.raises(ValueError, match=message):
        build_tables(tominaga, grid, x, hard, weights)
    with pytest.raises(ValueError, match=message):
        reference_grid_search(tominaga, Approves(), grid, x[0], hard[0], weights[0])
