"""The causal Oracle, the candidate set: valid, plausible, bounded plans of every sparsity level,
evenly spaced and ranked.

The decision model is the Bayes rule of the exact SCM (conftest's ``clf``), so no trained
artifact is needed; grids are small so the brute-force searches stay fast.
"""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from engine.metrics import action_cost
from engine.recourse.base import RecourseContext
from engine.recourse.oracle.grid import PLAUSIBILITY_MARGIN
from engine.recourse.oracle.method import CausalOracle
from tests.engine.oracle.oracle_worlds import INC, Approves, D, L, S, cost_tables, manual_profiles
from tests.engine.scenario_profiles import context_of, profiles_of


def _valid_plan_costs(loan, clf, oracle, x, feats):
    """(L1 cost, L0) of every valid (and plausible when the oracle asks for it) grid plan of
    one person acting on ``feats`` (enumerated point by point)."""
    plans = []
    grid_vals, grid_ok = (g[0] for g in oracle.grid.values(x.reshape(1, -1)))
    nb = grid_vals.shape[1]
    for codes in itertools.product(range(nb + 1), repeat=len(feats)):
        if not any(codes) or not all(c == 0 or grid_ok[oracle.grid.features.index(j), c - 1]
                                     for j, c in zip(feats, codes, strict=True)):
            continue
        mask = torch.zeros(1, loan.d, dtype=torch.bool)
        values = x.clone().reshape(1, -1)
        for j, c in zip(feats, codes, strict=True):
            if c:
                mask[0, j] = True
                values[0, j] = grid_vals[oracle.grid.features.index(j), c - 1]
        plans.append((mask, values))
    mask = torch.cat([p[0] for p in plans])
    values = torch.cat([p[1] for p in plans])
    xr = x.reshape(1, -1).expand(len(mask), -1)
    x_cf = loan.scm.counterfactual(xr, mask, values)
    ok = clf.decision(x_cf.float())
    if oracle.plausibility:
        ok &= loan.scm.log_prob(x_cf) >= loan.scm.log_prob(xr) + PLAUSIBILITY_MARGIN
    cost = ((values - xr).abs() / loan.ranges * mask).sum(dim=1)[ok]
    return cost, mask[ok].sum(dim=1)


def test_candidates_are_valid_plausible_and_bounded(loan, clf, people):
    ctx = context_of(loan, clf, "linear")
    oracle = CausalOracle(ctx, bins=8)
    x = people[:3]
    profiles = profiles_of(loan, 3, None, seed=4)
    cands = oracle.candidates(x, profiles, top_k=5, per_l0=3)
    best = oracle.recourse(x, profiles)
    assert int(cands.violations.sum()) == 0
    # every row is measured against its person's stated profile (weights, satisfaction)
    w_rows = profiles.weights(ctx.cost_profile)[cands.person]
    assert torch.allclose(cands.weighted_cost, action_cost(
        cands.x, cands.x_cf, cands.action_mask, ctx.ranges, w_rows))
    assert bool((cands.weighted_cost > cands.cost + 1e-9).any())
    assert not bool(torch.isnan(cands.satisfaction).any())
    assert bool(cands.valid.all()) and bool(cands.plausible.all())
    for i in range(3):
        rows = (cands.person == i).nonzero().flatten()
        k = int(profiles.n_actionable[i])
        assert len(rows) <= 5 + 3 * k
        if not bool(best.found[i]):
            assert len(rows) == 0
            continue
        # sorted by the Oracle's objective (its own ranges), the first is recourse's plan's
        w = profiles.weights(ctx.cost_profile)[i : i + 1]
        wc = action_cost(cands.x[rows], cands.action_values[rows], cands.action_mask[rows],
                         oracle.cost_ranges, w.expand(len(rows), -1))
        assert bool((wc[1:] >= wc[:-1]).all())
        opt = action_cost(x[i : i + 1], best.action_values[i : i + 1],
                          best.action_mask[i : i + 1], oracle.cost_ranges, w)
        assert math.isclose(float(wc[0]), float(opt[0]), rel_tol=1e-9)
        plans = {
            tuple(cands.action_mask[r].tolist() + cands.action_values[r].tolist()) for r in rows
        }
        assert len(plans) == len(rows)
        assert set(cands.l0_actions[rows].long().tolist()) <= set(range(1, k + 1))


def test_candidates_cover_every_sparsity_level_and_its_extremes(loan, clf, people):
    """Against the full set of valid plausible plans enumerated point by point."""
    ctx = context_of(loan, clf)
    oracle = CausalOracle(ctx, bins=5)
    profiles = manual_profiles(loan, [[L, D, INC, S]] * 4)
    cands = oracle.candidates(people[:4], profiles, top_k=3, per_l0=2)
    assert len(cands.person.unique()) >= 2
    assert oracle.plausibility  # the enumeration keeps valid *plausible* plans
    for i in range(4):
        cost, l0 = _valid_plan_costs(loan, clf, oracle, people[i], [L, D, INC, S])
        rows = (cands.person == i).nonzero().flatten()
        got_cost = cands.cost[rows]
        if len(cost) == 0:
            assert len(rows) == 0
            continue
        assert torch.allclose(got_cost[:3], cost.sort().values[:3])
        assert set(cands.l0_actions[rows].long().tolist()) == set(l0.tolist())
        for level in l0.unique().tolist():
            mine = got_cost[cands.l0_actions[rows] == level]
            theirs = cost[l0 == level]
            assert torch.isclose(mine.min(), theirs.min()) and torch.isclose(
                mine.max(), theirs.max()
            )


def test_ranked_within_picks_ranks_within_each_group():
    """The selection helper of ``candidates``: the k lowest keys of every group, or the entry
    at rank round(q (size - 1) / (c' - 1)), c' = min(c, size), of every group with q < c';
    equal keys keep their order of position."""
    from engine.recourse.oracle.method import _ranked_within

    group = torch.tensor([2, 0, 0, 1, 0, 0, 0, 1, 3, 3, 3])
    key = torch.tensor([5.0, 4.0, 1.0, 9.0, 3.0, 1.0, 7.0, 2.0, 6.0, 6.0, 0.5])
    # group 0 by key: positions 2 (1.0), 5 (1.0, after 2), 4, 1, 6; group 1: 7, 3; group 2: 0;
    # group 3: 10, 8 (6.0), 9 (6.0, after 8)
    assert sorted(_ranked_within(group, key, 2, 0).tolist()) == [0, 2, 3, 5, 7, 8, 10]
    assert sorted(_ranked_within(group, key, 1, 0).tolist()) == [0, 2, 7, 10]
    assert _ranked_within(group, key, 0, 0).tolist() == []

    def spread(q, c):
        return sorted(_ranked_within(group, key, 1, q, spread=c).tolist())

    # c = 3: group 0 (size 5) ranks 0, 2, 4; group 1 (size 2) ranks 0, 1 (c' = 2);
    # group 2 (size 1) rank 0 (c' = 1); group 3 (size 3) ranks 0, 1, 2
    assert spread(0, 3) == [0, 2, 7, 10]
    assert spread(1, 3) == [3, 4, 8]
    assert spread(2, 3) == [6, 9]
    assert spread(3, 3) == []
    # c = 4 on group 0: ranks round(q * 4 / 3) = 0, 1, 3, 4
    assert [i for i in (spread(q, 4) for q in range(4)) for i in i if group[i] == 0] == [
        2, 5, 1, 6]


def test_candidates_take_evenly_spaced_plans_of_every_sparsity_level(loan, clf, people):
    """With top_k = 0 the candidates of a sparsity level L0 are exactly its valid plans at
    ranks round(q (size - 1) / (c' - 1)) of the L1 cost, q < c' = min(per_l0, size); with
    per_l0 = 0 they are the top_k cheapest. Several people share a chunk (and one person per
    chunk gives the same plans). Over the training range the Oracle's objective is the
    reported cost, which the expected ranks are computed on."""
    ctx = context_of(loan, clf)
    oracle = CausalOracle(ctx, bins=4, plausibility=False, grid_range="training")
    feats = [L, D, INC, S]
    x = people[:10]  # a chunk of more people than sparsity levels + 1 (groups stay apart)
    profiles = manual_profiles(loan, [feats] * len(x))
    spread = oracle.candidates(x, profiles, top_k=0, per_l0=3)
    cheapest = oracle.candidates(x, profiles, top_k=3, per_l0=0)
    one_by_one = CausalOracle(ctx, bins=4, plausibility=False, batch_rows=1,
                              grid_range="training").candidates(x, profiles, top_k=0, per_l0=3)
    assert one_by_one.person.tolist() == spread.person.tolist()
    assert torch.equal(one_by_one.action_mask, spread.action_mask)
    assert torch.allclose(one_by_one.action_values, spread.action_values)
    assert spread.method == cheapest.method == "oracle"
    assert isinstance(spread.runtime, float) and spread.runtime > 0
    levels_seen = 0
    for i in range(len(x)):
        cost, l0 = _valid_plan_costs(loan, clf, oracle, x[i], feats)
        rows = (spread.person == i).nonzero().flatten()
        top = (cheapest.person == i).nonzero().flatten()
        assert torch.allclose(cheapest.cost[top], cost.sort().values[:3])
        assert len(rows) == sum(min(3, int((l0 == v).sum())) for v in l0.unique().tolist())
        for level in l0.unique().tolist():
            theirs = cost[l0 == level].sort().values
            size = len(theirs)
            c = min(3, size)
            ranks = [round(q * (size - 1) / max(c - 1, 1)) for q in range(c)]
            mine = spread.cost[rows][spread.l0_actions[rows] == level].sort().values
            assert torch.allclose(mine, theirs[ranks]), (i, level)
            levels_seen += size > 3
    assert levels_seen > 0  # some level had more plans than picks: interior ranks were used
    for top_k, per_l0 in ((-1, 1), (1, -1)):
        with pytest.raises(ValueError, match=r"^top_k and per_l0 must be >= 0$"):
            oracle.candidates(x, profiles, top_k=top_k, per_l0=per_l0)


def test_the_default_candidate_set_is_the_ten_cheapest_and_four_per_sparsity_level(
        loan, clf, people):
    """What a study shows (``plans(candidates=True)``) is ``candidates`` with its defaults,
    top_k = 10 and per_l0 = 4."""
    oracle = CausalOracle(context_of(loan, clf), bins=4, plausibility=False)
    x = people[:2]
    profiles = manual_profiles(loan, [[L, D, INC, S]] * len(x))
    default = oracle.plans(x, profiles, candidates=True)
    explicit = oracle.candidates(x, profiles, top_k=10, per_l0=4)
    assert default.person.tolist() == explicit.person.tolist()
    assert torch.equal(default.action_mask, explicit.action_mask)
    assert torch.equal(default.action_values, explicit.action_values)
    for top_k, per_l0 in ((11, 4), (10, 5)):  # one more of either gives more plans here
        more = oracle.candidates(x, profiles, top_k=top_k, per_l0=per_l0)
        assert len(more.person) > len(default.person)


def test_candidates_keep_people_apart_when_every_feature_is_actionable(loan):
    """The (person, sparsity level) groups of ``candidates`` stay apart when a plan can act on
    every feature of x' (L0 up to d): x' has two features here, both actionable. With
    ``per_l0`` = 1 every person gets its cheapest plan of each level."""
    w1 = [[0.0, 1.0, 2.0], [0.0, 3.0, 4.0], [0.0, 5.0, 6.0]]
    w2 = [[0.0, 1.5, 2.5], [0.0, 3.5, 4.5], [0.0, 5.5, 6.5]]
    oracle = CausalOracle(RecourseContext(loan, Approves()), bins=1, plausibility=False,
                          grid_range="training")  # it rejects nobody: no rejected range
    pairs = oracle._candidate_pairs(cost_tables(w1, w2, tag_people=False), 0, 1)
    got = list(zip(pairs.person.tolist(), pairs.i1.tolist(), pairs.i2.tolist(), strict=True))
    assert got == [(q, 1, i2) for q in range(3) for i2 in (0, 1)]  # L0 = 1, then L0 = 2
