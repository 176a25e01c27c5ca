"""The causal Oracle, the grid: its layout, range and options (the paper's, CARMA's reference grid,
a shared one).

The decision model is the Bayes rule of the exact SCM (conftest's ``clf``), so no trained
artifact is needed; grids are small so the brute-force searches stay fast.
"""

from __future__ import annotations

import pytest
import torch

from engine.recourse import get_method
from engine.recourse.oracle.grid import ActionGrid, build_tables
from engine.recourse.oracle.grid_range import cost_ranges, grid_bounds
from engine.recourse.oracle.method import CausalOracle
from engine.scenarios.loan import FEATURES
from tests.engine.oracle.oracle_worlds import INC, D, L, S
from tests.engine.scenario_profiles import context_of


def _expected_grid(lo, hi, start, stop, bins=25):
    t = torch.linspace(0.0, 1.0, bins, dtype=torch.float64)
    raw = start[..., None] + (stop - start)[..., None] * t
    return torch.minimum(torch.maximum(raw, lo[:, None]), hi[:, None])


def _rejected_range(loan, clf) -> tuple[torch.Tensor, torch.Tensor]:
    """Min / max of the actionable features over the training people ``clf`` rejects."""
    x = loan.dataset["train"][0].double()
    rejected = x[~clf.decision(x).bool()][:, list(loan.actionable)]
    return rejected.min(dim=0).values, rejected.max(dim=0).values


def test_catalogue_builds_the_oracle_with_the_papers_grid(loan, clf, people):
    """Default grid: 25 bins centred on the factual, one bin = 1/24 of the range of the
    training split's rejected people, clipped to that range; duplicates from clipping are
    unavailable."""
    oracle = get_method("oracle", context_of(loan, clf))
    assert isinstance(oracle, CausalOracle)
    assert (oracle.grid.layout, oracle.grid.bins, oracle.grid_range) == ("factual", 25, "rejected")
    x = people[:6]
    vals, ok = oracle.grid.values(x)
    assert vals.shape == ok.shape == (6, 4, 25)
    lo, hi = _rejected_range(loan, clf)
    xa = x[:, list(loan.actionable)]
    half = (hi - lo) / 2
    assert torch.allclose(vals, _expected_grid(lo, hi, xa - half, xa + half))
    assert torch.allclose(vals[..., 12], xa)  # the centre bin is the factual value ...
    assert not bool(ok[..., 12].any())  # ... which is no change, so not an option
    for i in range(6):
        for k in range(4):
            v = vals[i, k][ok[i, k]]
            assert len(v.unique()) == len(v)
            assert float(v.min()) >= float(lo[k]) and float(v.max()) <= float(hi[k])
            # a bin apart: 1/24 of the range between consecutive values inside the range
            inner = v[(v > lo[k]) & (v < hi[k])]
            steps = (inner[1:] - inner[:-1]) / ((hi[k] - lo[k]) / 24)
            assert torch.allclose(steps[steps < 1.5], torch.ones(1, dtype=torch.float64))
            assert torch.allclose(steps[steps >= 1.5], 2 * torch.ones(1, dtype=torch.float64))
    # two bins: one bin is the whole range, so the values lie half a range either side
    two, _ = ActionGrid.from_scenario(loan, 2).values(x)  # (the training range by default)
    lo, hi = loan.bounds[:, list(loan.actionable)]
    half = (hi - lo) / 2
    assert torch.allclose(two, _expected_grid(lo, hi, xa - half, xa + half, bins=2))


def test_the_grid_range_is_the_rejected_peoples_for_the_papers_layouts(loan, clf):
    """CARMA's reference Oracle takes the range of its training data after filtering them to
    the rejected: the default of the papers' layouts. ``shared`` (ours) spans the whole
    training split, and either range can be asked for."""
    lo_r, hi_r = _rejected_range(loan, clf)
    lo_t, hi_t = loan.bounds[:, list(loan.actionable)]
    ctx = context_of(loan, clf)
    for grid, grid_range, (lo, hi) in (
        ("factual", None, (lo_r, hi_r)), ("carma", None, (lo_r, hi_r)),
        ("shared", None, (lo_t, hi_t)), ("factual", "training", (lo_t, hi_t)),
        ("shared", "rejected", (lo_r, hi_r)),
    ):
        oracle = CausalOracle(ctx, bins=5, grid=grid, grid_range=grid_range)
        assert torch.equal(oracle.grid.lo, lo) and torch.equal(oracle.grid.hi, hi), grid
        # the objective's M_j: the same range on the actionable features (CARMA's
        # measure_cost over the filtered data), the scenario's everywhere else
        want = loan.ranges.to(torch.float64).clone()
        want[list(loan.actionable)] = (hi - lo).to(torch.float64)
        if oracle.grid_range == "training":
            want = loan.ranges.to(torch.float64)
        assert torch.allclose(oracle.cost_ranges, want), grid
    income = list(loan.actionable).index(FEATURES.index("income"))
    assert float(hi_r[income]) < float(hi_t[income]) - 1.0  # approval comes with income
    with pytest.raises(ValueError, match="unknown Oracle grid range 'everyone'"):
        CausalOracle(ctx, grid_range="everyone")
    # a feature constant among the rejected keeps the scenario's range (no division by 0)
    lo, hi = grid_bounds(loan, clf, "rejected")
    hi = hi.clone()
    hi[FEATURES.index("savings")] = lo[FEATURES.index("savings")]
    m = cost_ranges(loan, (lo, hi), "rejected")
    assert float(m[FEATURES.index("savings")]) == float(loan.ranges[FEATURES.index("savings")])
    assert float(m[FEATURES.index("income")]) == float(hi[FEATURES.index("income")]
                                                       - lo[FEATURES.index("income")])


def test_carmas_reference_grid_is_an_option(loan, clf, people):
    """CARMA's brute-force Oracle: 25 values over [x - 2 (x - lo), x + 2 (hi - x)], clipped
    (so the first is lo, the last hi and about half fall inside the range)."""
    oracle = get_method("oracle", context_of(loan, clf), grid="carma")
    x = people[:6]
    vals, ok = oracle.grid.values(x)
    lo, hi = _rejected_range(loan, clf)
    xa = x[:, list(loan.actionable)]
    assert torch.allclose(vals, _expected_grid(lo, hi, xa - 2 * (xa - lo), xa + 2 * (hi - xa)))
    assert torch.equal(vals[..., 0], lo.expand(6, 4)) and torch.equal(vals[..., -1], hi.expand(6, 4))
    assert 12 <= int(ok.sum(dim=2).min()) and int(ok.sum(dim=2).max()) <= 15


def test_the_shared_grid_is_an_option(loan, clf, people):
    oracle = get_method("oracle", context_of(loan, clf), bins=5, grid="shared")
    vals, ok = oracle.grid.values(people[:3])
    lo, hi = loan.bounds[:, list(loan.actionable)]
    assert vals.shape == ok.shape == (3, 4, 5) and ok.dtype == torch.bool
    assert bool(ok.all())
    assert torch.allclose(vals[1], vals[0]) and torch.allclose(vals[0, :, 0], lo)
    assert torch.allclose(vals[0, :, -1], hi)
    with pytest.raises(ValueError, match=r"^unknown Oracle grid 'everywhere'; expected one of "
                       r"factual, carma, shared$"):
        CausalOracle(context_of(loan, clf), grid="everywhere")


def test_leaving_a_feature_alone_is_an_option_at_the_edge_of_its_range(loan, people):
    """A person at the lower end of a feature's range (the grid's lowest value is their own,
    which is no change): the options that leave that feature alone stay available (the
    empty one at zero cost, and one per available value of the block's other feature)."""
    grid = ActionGrid.from_scenario(loan, 3)
    x = people[:4].clone()
    x[:, [L, S]] = loan.bounds[0, [L, S]]
    _, available = grid.values(x)
    assert not bool(available[:, grid.features.index(S), 0].any())  # lo is x itself
    hard = torch.zeros(4, loan.d, dtype=torch.bool)
    hard[:, list(loan.actionable)] = True
    t = build_tables(loan, grid, x, hard, torch.ones(4, loan.d, dtype=torch.float64))
    for table, j, other in ((t.first, L, D), (t.second, S, INC)):
        alone = ~table.acted[:, j]  # options leaving j alone
        n_other = available[:, grid.features.index(other)].sum(dim=1)
        assert torch.isfinite(table.wcost[:, alone]).sum(dim=1).tolist() == (1 + n_other).tolist()
        assert not bool(table.wcost[:, 0].any())
