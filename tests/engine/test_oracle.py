"""The causal Oracle: exactness of the block decomposition, optimality against brute force,
hard constraints under adversarial profiles, plausibility, and the candidate set.

The decision model is the Bayes rule of the exact SCM (engine.decision.BayesDecision), so no
trained artifact is needed; grids are small so the brute-force searches stay fast.
"""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from engine.benchmarks.recourse import rejected_population
from engine.decision import BayesDecision
from engine.metrics import action_cost
from engine.preferences import ActionabilityProfiles, CostProfile, sample_profiles
from engine.recourse import get_method
from engine.recourse.base import RecourseContext
from engine.recourse.oracle import CausalOracle
from engine.recourse.oracle_grid import (
    PLAUSIBILITY_MARGIN,
    ActionGrid,
    BlockTable,
    PersonTables,
    action_blocks,
    assemble,
    build_tables,
    reference_grid_search,
)
from engine.recourse.oracle_range import cost_ranges, grid_bounds
from engine.scenarios import get_scenario
from engine.scenarios.loan import FEATURES
from engine.scm import StructuralCausalModel

L, D, INC, S = 3, 4, 5, 6


@pytest.fixture(scope="module")
def loan():
    return get_scenario("loan")


@pytest.fixture(scope="module")
def clf(loan):
    return BayesDecision(loan)


@pytest.fixture(scope="module")
def people(loan, clf):
    return rejected_population(loan, clf, 40)


def _context(loan, clf, cost_profile: str = "constant") -> RecourseContext:
    return RecourseContext(loan, clf, cost_profile=CostProfile(cost_profile))


def _profiles(loan, n: int, k: int | None, seed: int = 0, elicitation="ranking"):
    return sample_profiles(
        loan.feature_names, loan.actionable, n, n_actionable=k, elicitation=elicitation, seed=seed
    )


def _manual_profiles(loan, hard: list[list[int]], scores: list[list[float]] | None = None):
    n = len(hard)
    mask = torch.zeros(n, loan.d, dtype=torch.bool)
    sc = torch.full((n, loan.d), 5.0, dtype=torch.float64)
    for i, feats in enumerate(hard):
        mask[i, feats] = True
        for r, j in enumerate(feats):
            sc[i, j] = float(r + 1) if scores is None else scores[i][r]
    return ActionabilityProfiles(mask, sc, torch.full((n,), 4.0, dtype=torch.float64), "likert")


class _Approves:
    """A decision model that approves exactly the given rows of x' (as tuples of ints), or
    every row (``rows`` None)."""

    def __init__(self, rows=None):
        self.rows = rows

    def decision(self, x):
        if self.rows is None:
            return torch.ones(len(x), dtype=torch.bool)
        return torch.tensor([tuple(int(v) for v in r) in self.rows for r in x.tolist()],
                            dtype=torch.bool)


class _IndependentWorld(StructuralCausalModel):
    """Loan's features as independent standard normals (x = u): nothing descends from
    anything, so each actionable feature is a block of its own."""

    feature_names = FEATURES
    parents = {j: () for j in range(len(FEATURES))}
    immutable = (0, 1)

    def sample_noise(self, n, rng):
        return torch.from_numpy(rng.normal(size=(n, self.d)))

    def equation(self, j, x, u_j):
        return u_j

    def inverse_equation(self, j, x):
        return x[:, j]

    def noise_log_prob(self, u):
        return -0.5 * u**2 - 0.5 * math.log(2 * math.pi)

    def log_abs_det_jacobian(self, x):
        return torch.zeros(x.shape[0], dtype=torch.float64)

    def check_support(self, x, name):
        pass

    def label_logit(self, x):
        return torch.zeros(len(x), dtype=torch.float64)


class _LinkedWorld(_IndependentWorld):
    """_IndependentWorld with some features adding up their parents' values:
    x_k = u_k + sum of x_j over the parents j of k (``parents``: k -> parents, in causal
    order; unit Jacobian)."""

    def __init__(self, parents: dict[int, tuple[int, ...]]):
        super().__init__()
        self.parents = {j: () for j in range(len(FEATURES))} | parents

    def equation(self, j, x, u_j):
        return u_j + sum(x[:, k] for k in self.parents[j])

    def inverse_equation(self, j, x):
        return x[:, j] - sum(x[:, k] for k in self.parents[j])


class _StepDensityWorld(_IndependentWorld):
    """Independent features whose log-density is flat but PLAUSIBILITY_MARGIN higher below a
    given point ``top``: from x = top, a plan lowering one feature changes log p by exactly
    the margin, one lowering none leaves it unchanged."""

    def __init__(self, top: torch.Tensor):
        super().__init__()
        self.top = top

    def noise_log_prob(self, u):
        return PLAUSIBILITY_MARGIN * (u < self.top).double()


def _cost_tables(first: list[list[float]], second: list[list[float]], *,
                 dlogp: tuple[list[list[float]], list[list[float]]] | None = None,
                 offset: list[float] | None = None, tag_people: bool = True) -> PersonTables:
    """Search tables with the given weighted option costs per person (option 0: no action),
    whose plans a decision model can tell apart: plan (i1, i2) of person p has x' = (i1, i2, p)
    (x' = (i1, i2) without ``tag_people``: then both features of x' are actionable). ``dlogp``:
    the two tables' log-density changes (default 0), ``offset`` per person (default 0)."""
    w1 = torch.tensor(first, dtype=torch.float64)
    w2 = torch.tensor(second, dtype=torch.float64)
    p = len(w1)
    d = 3 if tag_people else 2
    dl = [torch.zeros_like(w) for w in (w1, w2)] if dlogp is None else [
        torch.tensor(v, dtype=torch.float64) for v in dlogp]

    def table(w, j):
        m = w.shape[1]
        acted = torch.zeros(m, d, dtype=torch.bool)
        acted[1:, j] = True
        values = torch.zeros(p, m, d, dtype=torch.float64)
        values[:, 1:, j] = 1.0
        x_aff = torch.arange(m, dtype=torch.float64).expand(p, m)[..., None].clone()
        return BlockTable((j,), acted, values, x_aff, w.clone(), w.clone(), dl[j].clone())

    x0 = torch.zeros(p, d, dtype=torch.float64)
    if tag_people:
        x0[:, 2] = torch.arange(p)
    off = torch.zeros(p, dtype=torch.float64) if offset is None else torch.tensor(
        offset, dtype=torch.float64)
    return PersonTables(x0, off, table(w1, 0), table(w2, 1))


def _expected_grid(lo, hi, start, stop, bins=25):
    t = torch.linspace(0.0, 1.0, bins, dtype=torch.float64)
    raw = start[..., None] + (stop - start)[..., None] * t
    return torch.minimum(torch.maximum(raw, lo[:, None]), hi[:, None])


def test_catalogue_builds_the_oracle_with_the_papers_grid(loan, clf, people):
    """Default grid: 25 bins centred on the factual, one bin = 1/24 of the range of the
    training split's rejected people, clipped to that range; duplicates from clipping are
    unavailable."""
    oracle = get_method("oracle", _context(loan, clf))
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


def _rejected_range(loan, clf) -> tuple[torch.Tensor, torch.Tensor]:
    """Min / max of the actionable features over the training people ``clf`` rejects."""
    x = loan.dataset["train"][0].double()
    rejected = x[~clf.decision(x).bool()][:, list(loan.actionable)]
    return rejected.min(dim=0).values, rejected.max(dim=0).values


def test_the_grid_range_is_the_rejected_peoples_for_the_papers_layouts(loan, clf):
    """CARMA's reference Oracle takes the range of its training data after filtering them to
    the rejected: the default of the papers' layouts. ``shared`` (ours) spans the whole
    training split, and either range can be asked for."""
    lo_r, hi_r = _rejected_range(loan, clf)
    lo_t, hi_t = loan.bounds[:, list(loan.actionable)]
    ctx = _context(loan, clf)
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
    oracle = get_method("oracle", _context(loan, clf), grid="carma")
    x = people[:6]
    vals, ok = oracle.grid.values(x)
    lo, hi = _rejected_range(loan, clf)
    xa = x[:, list(loan.actionable)]
    assert torch.allclose(vals, _expected_grid(lo, hi, xa - 2 * (xa - lo), xa + 2 * (hi - xa)))
    assert torch.equal(vals[..., 0], lo.expand(6, 4)) and torch.equal(vals[..., -1], hi.expand(6, 4))
    assert 12 <= int(ok.sum(dim=2).min()) and int(ok.sum(dim=2).max()) <= 15


def test_the_shared_grid_is_an_option(loan, clf, people):
    oracle = get_method("oracle", _context(loan, clf), bins=5, grid="shared")
    vals, ok = oracle.grid.values(people[:3])
    lo, hi = loan.bounds[:, list(loan.actionable)]
    assert vals.shape == ok.shape == (3, 4, 5) and ok.dtype == torch.bool
    assert bool(ok.all())
    assert torch.allclose(vals[1], vals[0]) and torch.allclose(vals[0, :, 0], lo)
    assert torch.allclose(vals[0, :, -1], hi)
    with pytest.raises(ValueError, match=r"^unknown Oracle grid 'everywhere'; expected one of "
                       r"factual, carma, shared$"):
        CausalOracle(_context(loan, clf), grid="everywhere")


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
    ctx = _context(loan, clf, cost_profile)
    oracle = CausalOracle(ctx, bins=6, plausibility=plausibility, grid=grid, chunk_people=7,
                          band=8)
    x = people[:20]
    profiles = _profiles(loan, len(x), k, seed=3)
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
    from engine.benchmarks.recourse import BenchmarkConfig, constraint_profiles

    x = rejected_population(loan, clf, 60)
    profiles = constraint_profiles(loan, "2", BenchmarkConfig(n=60, bins=8), 60)
    oracle = CausalOracle(_context(loan, clf), bins=8)
    batch = oracle.recourse(x, profiles)
    weights = profiles.weights(oracle.context.cost_profile)
    for i in range(len(x)):
        ref = reference_grid_search(loan, clf, oracle.grid, x[i], profiles.hard_mask[i], weights[i])
        assert bool(batch.found[i]) == ref.found, i


def test_reference_search_matches_a_point_by_point_loop(loan, clf, people):
    """The reference itself against the plainest possible loop (one SCM call per point)."""

    grid = ActionGrid.from_scenario(loan, 3)
    profiles = _profiles(loan, 3, 3, seed=5, elicitation="likert")
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


def test_merged_blocks_give_the_same_optimum(loan, clf, people):
    """One merged table (paired with "no action") searches the same grid as two tables."""
    oracle = CausalOracle(_context(loan, clf), bins=5)
    x = people[:10]
    profiles = _profiles(loan, 10, None, seed=11)
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


@pytest.mark.parametrize("plausibility", [True, False])
def test_one_actionable_feature_is_never_exceeded(loan, clf, people, plausibility):
    """Each person may act on one feature only, each of the four in turn."""
    oracle = CausalOracle(_context(loan, clf), bins=25, plausibility=plausibility)
    x = people[:40]
    for j in loan.actionable:
        profiles = _manual_profiles(loan, [[j]] * len(x))
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
    ctx = _context(loan, clf, "convex")
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
    profiles = _profiles(loan, len(x), 2, seed=2)
    ctx = _context(loan, clf)
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
    oracle = CausalOracle(_context(loan, clf), bins=25)
    validity = [
        float(
            oracle.recourse(people, _profiles(loan, len(people), k, seed=9)).valid.double().mean()
        )
        for k in (4, 1)
    ]
    assert validity[0] > validity[1]


def test_candidates_are_valid_plausible_and_bounded(loan, clf, people):
    ctx = _context(loan, clf, "linear")
    oracle = CausalOracle(ctx, bins=8)
    x = people[:3]
    profiles = _profiles(loan, 3, None, seed=4)
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


def test_rejects_a_world_model_that_is_not_an_scm(loan, clf):
    class Flow:
        def counterfactual(self, x, m, v):
            return x

        def log_prob(self, x):
            return torch.zeros(len(x))

    with pytest.raises(ValueError, match=r"^the causal Oracle needs the exact SCM as the "
                       r"context's world model \(got Flow\)$"):
        CausalOracle(RecourseContext(loan, clf, world=Flow(), density_source="flow"))


def test_bad_inputs_raise(loan, clf, people):
    oracle = CausalOracle(_context(loan, clf), bins=3)
    with pytest.raises(ValueError, match="actionability profiles"):
        oracle.recourse(people[:3], _profiles(loan, 2, 2))
    with pytest.raises(ValueError, match="bins"):
        CausalOracle(_context(loan, clf), bins=0)
    for setting in ("chunk_people", "band", "max_band", "batch_rows"):
        with pytest.raises(ValueError, match=r"^chunk_people, band, max_band and batch_rows "
                           r"must be >= 1$"):
            CausalOracle(_context(loan, clf), bins=3, **{setting: 0})


def test_candidates_cover_every_sparsity_level_and_its_extremes(loan, clf, people):
    """Against the full set of valid plausible plans enumerated point by point."""
    ctx = _context(loan, clf)
    oracle = CausalOracle(ctx, bins=5)
    profiles = _manual_profiles(loan, [[L, D, INC, S]] * 4)
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


@pytest.mark.parametrize("plausibility", [True, False])
def test_the_methods_reference_search_finds_the_same_optimum(loan, clf, people, plausibility):
    """CausalOracle.reference_search (the whole grid, one person at a time, under the
    method's own grid, weights and plausibility setting) agrees with the batched search:
    who has recourse and at what weighted cost (the Oracle's objective)."""
    ctx = _context(loan, clf, "linear")
    oracle = CausalOracle(ctx, bins=4, plausibility=plausibility)
    x = people[:6]
    profiles = _profiles(loan, len(x), 3, seed=8, elicitation="likert")
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


def test_ranked_within_picks_ranks_within_each_group():
    """The selection helper of ``candidates``: the k lowest keys of every group, or the entry
    at rank round(q (size - 1) / (c' - 1)), c' = min(c, size), of every group with q < c';
    equal keys keep their order of position."""
    from engine.recourse.oracle import _ranked_within

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


def test_candidates_take_evenly_spaced_plans_of_every_sparsity_level(loan, clf, people):
    """With top_k = 0 the candidates of a sparsity level L0 are exactly its valid plans at
    ranks round(q (size - 1) / (c' - 1)) of the L1 cost, q < c' = min(per_l0, size); with
    per_l0 = 0 they are the top_k cheapest. Several people share a chunk (and one person per
    chunk gives the same plans). Over the training range the Oracle's objective is the
    reported cost, which the expected ranks are computed on."""
    ctx = _context(loan, clf)
    oracle = CausalOracle(ctx, bins=4, plausibility=False, grid_range="training")
    feats = [L, D, INC, S]
    x = people[:10]  # a chunk of more people than sparsity levels + 1 (groups stay apart)
    profiles = _manual_profiles(loan, [feats] * len(x))
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


def test_recourse_reports_its_method_runtime_and_grid_points(loan, clf, people):
    ctx = _context(loan, clf)
    oracle = CausalOracle(ctx, bins=4, chunk_people=3)
    x = people[:7]
    profiles = _profiles(loan, len(x), 3, seed=2)
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
    tables = _cost_tables([first] * 3, [second] * 3)
    valid = {(3, 1, 0),  # person 0: 1 + 8 = 9
             (1, 2, 1), (1, 3, 1)}  # person 1: 2 + 4 = 6 and 2 + 12 = 14; person 2: none
    ctx = RecourseContext(loan, _Approves(valid))
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
    tables = _cost_tables([[0.0, a2, am]], [[0.0, bm - 1e-13, bm]])
    ctx = RecourseContext(loan, _Approves({(2, 2, 0)}))  # only the dearest plan is valid
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

    oracle = CausalOracle(_context(loan, clf), bins=1)
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


def test_the_search_and_its_reference_plan_in_the_contexts_world(loan, clf, people):
    """A world other than the scenario's SCM (independent features: acting on the loan
    amount leaves the duration as it is) is where both the batched search and
    ``reference_search`` plan: they agree with each other, not with Loan's SCM."""
    world = _IndependentWorld()
    x = people[:10]
    profiles = _profiles(loan, len(x), None, seed=6)
    oracle = CausalOracle(RecourseContext(loan, clf, world=world), bins=5)
    batch = oracle.recourse(x, profiles)
    found, cost = oracle.reference_search(x, profiles)
    assert found.tolist() == batch.found.tolist() and found.any()
    objective = oracle.objective(batch, profiles)
    assert torch.allclose(cost[found], objective[found], rtol=1e-9, atol=0)
    on_loan = CausalOracle(_context(loan, clf), bins=5).reference_search(x, profiles)
    assert on_loan[0].tolist() != found.tolist()


def test_the_default_candidate_set_is_the_ten_cheapest_and_four_per_sparsity_level(
        loan, clf, people):
    """What a study shows (``plans(candidates=True)``) is ``candidates`` with its defaults,
    top_k = 10 and per_l0 = 4."""
    oracle = CausalOracle(_context(loan, clf), bins=4, plausibility=False)
    x = people[:2]
    profiles = _manual_profiles(loan, [[L, D, INC, S]] * len(x))
    default = oracle.plans(x, profiles, candidates=True)
    explicit = oracle.candidates(x, profiles, top_k=10, per_l0=4)
    assert default.person.tolist() == explicit.person.tolist()
    assert torch.equal(default.action_mask, explicit.action_mask)
    assert torch.equal(default.action_values, explicit.action_values)
    for top_k, per_l0 in ((11, 4), (10, 5)):  # one more of either gives more plans here
        more = oracle.candidates(x, profiles, top_k=top_k, per_l0=per_l0)
        assert len(more.person) > len(default.person)


def test_first_minimum_is_each_persons_earliest_cheapest_entry():
    """The search's pick per person: the position of its cheapest entry, the earliest one
    among equal costs (so the plan found does not depend on tensor internals), and -1 for a
    person without entries."""
    from engine.recourse.oracle import _first_minimum

    person = torch.tensor([2, 0, 2, 0, 0, 2])
    cost = torch.tensor([3.0, 5.0, 1.0, 4.0, 4.0, 1.0], dtype=torch.float64)
    first = _first_minimum(person, cost, 4)
    assert first.dtype == torch.long and first.tolist() == [3, -1, 2, -1]
    assert _first_minimum(person[:0], cost[:0], 2).tolist() == [-1, -1]


def test_selected_pairs_keep_every_field_row_by_row():
    from engine.recourse.oracle import _Pairs

    f64 = torch.float64
    pairs = _Pairs(torch.tensor([0, 0, 1]), torch.tensor([1, 2, 3]), torch.tensor([4, 5, 6]),
                   torch.tensor([0.5, 1.5, 2.5], dtype=f64), torch.tensor([-1.0, 0.0, 1.0], dtype=f64))
    for idx in (torch.tensor([2, 0]), torch.tensor([True, False, True])):
        rows = idx.nonzero().flatten().tolist() if idx.dtype == torch.bool else idx.tolist()
        sub = pairs.select(idx)
        for name in ("person", "i1", "i2", "wcost", "dlogp"):
            assert getattr(sub, name).tolist() == [getattr(pairs, name).tolist()[r] for r in rows]


def test_pruning_and_admission_follow_the_plausibility_rule_at_its_margin(loan, monkeypatch):
    """A plan (i1, i2) is plausible when dl1[i1] + dl2[i2] + offset >= PLAUSIBILITY_MARGIN
    (offset = log p(x^0) - log p(x), non-zero in a world whose no-action counterfactual is
    not x). The tables drop exactly the available options that no available partner of the
    same person makes plausible, and the search admits exactly the plausible non-empty plans:
    at the margin itself too. Without the constraint nothing is pruned."""
    import engine.recourse.oracle as oracle_module

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
        return _cost_tables(w1, w2, dlogp=(dl1, dl2), offset=offset)

    f64 = torch.float64
    a1, a2 = (torch.tensor(w, dtype=f64).isfinite() for w in (w1, w2))
    plausible = (torch.tensor(dl1, dtype=f64)[:, :, None] + torch.tensor(dl2, dtype=f64)[:, None]
                 + torch.tensor(offset, dtype=f64)[:, None, None] >= m)
    ok = plausible & a1[:, :, None] & a2[:, None, :]
    keep1, keep2 = a1 & ok.any(dim=2), a2 & ok.any(dim=1)
    assert keep1[0].tolist() == [True, True, False, False]  # kept at the margin
    assert keep2[0].tolist() == [False, True, False, False]
    assert keep1[1].tolist() == [True, True, False, True]  # kept thanks to the offset

    ctx = RecourseContext(loan, _Approves())
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


def test_a_persons_search_does_not_depend_on_who_else_is_in_the_chunk(loan):
    """Cost bands are per person: beside somebody whose plans cost a trillion times more, a
    person evaluates the same plans and gets the same plan as when searched alone."""
    first, second = [0.0, 2.0, 3.0, 1.0, math.inf], [0.0, 8.0, 4.0, 12.0]
    dear1, dear2 = [1e12 * c for c in first], [1e12 * c for c in second]
    ctx = RecourseContext(loan, _Approves({(3, 1, 0), (1, 2, 1)}))
    oracle = CausalOracle(ctx, bins=1, grid_range="training", plausibility=False, band=1, max_band=4)
    alone = oracle._search(_cost_tables([first], [second]))
    both = oracle._search(_cost_tables([first, dear1], [second, dear2]))
    assert [t.tolist() for t in alone] == [[3], [1], [10]]
    assert [t.tolist()[0] for t in both] == [3, 1, 10]
    assert (both[0][1], both[1][1]) == (1, 2)


def test_candidates_keep_people_apart_when_every_feature_is_actionable(loan):
    """The (person, sparsity level) groups of ``candidates`` stay apart when a plan can act on
    every feature of x' (L0 up to d): x' has two features here, both actionable. With
    ``per_l0`` = 1 every person gets its cheapest plan of each level."""
    w1 = [[0.0, 1.0, 2.0], [0.0, 3.0, 4.0], [0.0, 5.0, 6.0]]
    w2 = [[0.0, 1.5, 2.5], [0.0, 3.5, 4.5], [0.0, 5.5, 6.5]]
    oracle = CausalOracle(RecourseContext(loan, _Approves()), bins=1, plausibility=False,
                          grid_range="training")  # it rejects nobody: no rejected range
    pairs = oracle._candidate_pairs(_cost_tables(w1, w2, tag_people=False), 0, 1)
    got = list(zip(pairs.person.tolist(), pairs.i1.tolist(), pairs.i2.tolist(), strict=True))
    assert got == [(q, 1, i2) for q in range(3) for i2 in (0, 1)]  # L0 = 1, then L0 = 2


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
    profiles = _profiles(loan, len(x), None, seed=1)
    t = oracle._tables(x, profiles.hard_mask, profiles.weights(ctx.cost_profile))
    assert t.first.affected == (L, D, INC, S) and (t.first.m, t.second.m) == (4 ** 4, 1)
    batch = oracle.recourse(x, profiles)
    found, cost = oracle.reference_search(x, profiles)
    assert found.tolist() == batch.found.tolist() and found.any()
    objective = oracle.objective(batch, profiles)
    assert torch.allclose(cost[found], objective[found], rtol=1e-9, atol=0)


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
        reference_grid_search(tominaga, _Approves(), grid, x[0], hard[0], weights[0])


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
        profiles = _manual_profiles(loan, [[L, D, INC, S]])
        batch = oracle.recourse(x, profiles)
        found, cost = oracle.reference_search(x, profiles)
        assert found.tolist() == batch.found.tolist() == [True], i
        assert math.isclose(float(cost[0]), float(oracle.objective(batch, profiles)[0]),
                            rel_tol=1e-9)
        gain = float((world.log_prob(batch.x_cf) - world.log_prob(x))[0])
        assert gain >= PLAUSIBILITY_MARGIN
        at_margin += gain == PLAUSIBILITY_MARGIN
    assert at_margin > 0
