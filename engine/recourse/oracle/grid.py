"""The causal Oracle's action grid and its exact decomposition into independent SCM blocks.

Grid. Each globally actionable feature j gets ``bins`` values per person plus the option "no
action"; a grid point picks one option per feature, so there are (B + 1)^|F_g| points
(26^4 = 456,976 for Loan). Three layouts (``GRIDS``), with [lo_j, hi_j] the grid's range:

- ``factual`` (the iCARMA paper, App. C.2.3: "bins around the factual feature value while
  ensuring the value lies within the feasible range"): B values centred on the person's
  value x_j, one bin apart, a bin being 1/(B - 1) of the training range, i.e. evenly spaced
  over [x_j - (hi_j - lo_j)/2, x_j + (hi_j - lo_j)/2], then clipped to [lo_j, hi_j];
- ``carma`` (CARMA's reference Oracle, ``run_brute_force_oracle.py``, with the clipping):
  B values evenly spaced over [x_j - 2 (x_j - lo_j), x_j + 2 (hi_j - x_j)], clipped — bins
  twice as wide, about half of them inside the range;
- ``shared`` (our option): B values evenly spaced over [lo_j, hi_j], the same for everybody.

Values that clipping makes equal to an earlier one are dropped (their options are
unavailable), and so is a value equal to the factual (``factual``'s centre bin): setting a
feature to its own value is no change to recommend. Over the whole training split's range,
on CARMA's Loan samples with our accurate decision model (Table 1 settings, all / 3 / 2 / 1 /
random actionable, one profile draw), the Oracle's validity is 0.914 / 0.797 / 0.521 / 0.208
/ 0.609 with ``factual``, 0.870 / 0.717 / 0.433 / 0.172 / 0.555 with ``carma``, 0.921 / 0.798
/ 0.529 / 0.216 / 0.614 with ``shared`` (paper 0.959 / 0.796 / 0.539 / 0.22 / 0.637); finer
grids, the exact Bayes rule or the flow's density do not close the gap; the decision model
trained as CARMA's code trains it (scenario ``loan-carma-reference``) and the range below do.

Range: the grid's [lo_j, hi_j] comes from engine.recourse.oracle.grid_range (the papers': the
training split's rejected people; ours: the whole split, the scenario's ``bounds``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import torch
from torch import Tensor

from engine import metrics
from engine.recourse.plan_rules import GridLimit, PlanRules, grid_allowed
from engine.scenarios.base import Scenario
from engine.scm import StructuralCausalModel

# log p(x') >= log p(x) + PLAUSIBILITY_MARGIN: the margin absorbs float rounding of the block
# decomposition so that the flag recorded from a direct log_prob computation always agrees.
PLAUSIBILITY_MARGIN = 1e-9


GRIDS: tuple[str, ...] = ("factual", "carma", "shared")


def check_layout(layout: str) -> None:
    """Raise ValueError naming the layouts unless ``layout`` is one of ``GRIDS``."""
    if layout not in GRIDS:
        raise ValueError(f"unknown Oracle grid {layout!r}; expected one of {', '.join(GRIDS)}")


@dataclass(frozen=True)
class ActionGrid:
    """Per-feature grid values (module docstring): ``layout`` factual, carma or shared.

    ``features``: the globally actionable features; ``lo``/``hi``: their training range;
    ``limit``: a study's plan rules, which lay the bins (GridLimit.spread; None: the layout).
    """

    features: tuple[int, ...]
    bins: int
    lo: Tensor  # (K,) float64
    hi: Tensor  # (K,) float64
    layout: str = "factual"
    limit: GridLimit | None = None

    @classmethod
    def from_scenario(
        cls, scenario: Scenario, bins: int, layout: str = "factual",
        bounds: tuple[Tensor, Tensor] | None = None, rules: PlanRules | None = None,
    ) -> ActionGrid:
        """The grid of ``scenario``'s globally actionable features over ``bounds`` ((d,) lo
        and hi; default the training range, ``scenario.bounds``), limited by a study's plan
        ``rules`` when given."""
        if bins < 1:
            raise ValueError(f"bins must be >= 1, got {bins}")
        check_layout(layout)
        lo, hi = scenario.bounds if bounds is None else bounds
        lo, hi = lo.to(torch.float64), hi.to(torch.float64)
        feats = scenario.actionable
        limit = None if rules is None else grid_allowed(scenario, rules, feats)
        return cls(feats, bins, lo[list(feats)].clone(), hi[list(feats)].clone(), layout, limit)

    def values(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """(values (p, K, B), available (p, K, B) bool) of people x (p, d)."""
        p, k, b = x.shape[0], len(self.features), self.bins
        t = torch.linspace(0.0, 1.0, b, dtype=torch.float64)
        xf = x[:, list(self.features)].to(torch.float64)  # (p, K)
        if self.layout == "shared":
            vals = (self.lo[:, None] + (self.hi - self.lo)[:, None] * t).expand(p, k, b).clone()
            if self.limit is None:
                return vals, torch.ones(p, k, b, dtype=torch.bool)
        elif self.layout == "factual":  # x + k bins, k = -(B-1)/2 .. (B-1)/2 (k = 0 exactly x)
            k_bins = torch.arange(b, dtype=torch.float64) - (b - 1) / 2
            step = (self.hi - self.lo) / max(b - 1, 1)
            vals = xf[..., None] + step[:, None] * k_bins
        else:  # carma
            start, stop = xf - 2.0 * (xf - self.lo), xf + 2.0 * (self.hi - xf)
            vals = start[..., None] + (stop - start)[..., None] * t
        vals = torch.minimum(torch.maximum(vals, self.lo[:, None]), self.hi[:, None])
        vals = vals if self.limit is None else self.limit.spread(x, t)  # the rules' bins
        # the grid is increasing: a value equal to its predecessor is a clipped duplicate;
        # the centre bin is the factual value itself, which changes nothing
        available = torch.ones_like(vals, dtype=torch.bool)
        available[..., 1:] = vals[..., 1:] != vals[..., :-1]
        return vals, self._limited(x, vals, available & (vals != xf[..., None]))

    def _limited(self, x: Tensor, vals: Tensor, available: Tensor) -> Tensor:
        return available if self.limit is None else available & self.limit(x, vals)


def action_blocks(
    scm: StructuralCausalModel, features: tuple[int, ...]
) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Blocks of actionable features with disjoint affected sets: [(features, affected)].
    Call desc+(j) = {j} and the descendants of j. Link two actionable features when their
    desc+ sets intersect; the connected components are the blocks b with affected sets
    A_b = union of desc+(j) over j in b, pairwise disjoint by construction. No feature of A_b is
    a parent of a feature of A_c (c != b): a child of A_b is a descendant, hence in A_b. So for a
    grid point g = (g_1, ..., g_K), one option tuple per block,

    - the counterfactual x'(g) equals the no-action counterfactual x^0 with the columns A_b
      replaced by those of the block-only counterfactual x'(g_b), bitwise (the same equations
      run on the same inputs);
    - the exact log-density splits, because log p(x) = sum_j l_j(x_j, x_pa(j)) and the terms
      that change under block b are those with j in A_b, whose parents are in A_b or unchanged:
          log p(x'(g)) - log p(x) = sum_b [log p(x'(g_b)) - log p(x^0)] + [log p(x^0) - log p(x)];
    - the (weighted) action cost is a sum over intervened features, hence over blocks.

    Loan has two blocks, {loan_amount, loan_duration} and {income, savings}, of 26^2 = 676
    options each: a person's whole grid is the sum of two 676-entry tables, computed once per
    person through the SCM (``build_tables``). ``product`` merges blocks when a scenario has more
    than two, and a one-entry "no action" table pads a scenario that has one.
    """
    closure = {j: {j} | scm.descendants(j) for j in features}
    blocks: list[tuple[set[int], set[int]]] = []
    for j in features:
        merged_f, merged_a = {j}, set(closure[j])
        rest = []
        for f, a in blocks:
            if a & merged_a:
                merged_f |= f
                merged_a |= a
            else:
                rest.append((f, a))
        blocks = [*rest, (merged_f, merged_a)]
    return sorted((tuple(sorted(f)), tuple(sorted(a))) for f, a in blocks)


@dataclass
class BlockTable:
    """Every option of one block for a batch of p people (m options, option 0 = no action).

    ``acted`` is shared by everyone; the rest is per person. ``wcost`` is +inf for options
    outside a person's actionable set, for grid values the person's grid does not have, and
    for options pruned as never plausible.
    """

    affected: tuple[int, ...]
    acted: Tensor  # (m, d) bool
    values: Tensor  # (p, m, d) float64, 0 where not acted
    x_aff: Tensor  # (p, m, |affected|) counterfactual values of the affected features
    cost: Tensor  # (p, m) unweighted action cost
    wcost: Tensor  # (p, m) weighted action cost
    dlogp: Tensor  # (p, m) log p(x'(option)) - log p(x^0)

    @property
    def m(self) -> int:
        return int(self.acted.shape[0])

    def product(self, other: BlockTable) -> BlockTable:
        """The block of both option sets (option index = i * other.m + k)."""
        p, m1, m2 = self.cost.shape[0], self.m, other.m
        return BlockTable(
            affected=self.affected + other.affected,
            acted=(self.acted[:, None] | other.acted[None]).reshape(m1 * m2, -1),
            values=(self.values[:, :, None] + other.values[:, None]).reshape(p, m1 * m2, -1),
            x_aff=torch.cat(
                [
                    self.x_aff[:, :, None].expand(-1, -1, m2, -1),
                    other.x_aff[:, None].expand(-1, m1, -1, -1),
                ],
                dim=3,
            ).reshape(p, m1 * m2, -1),
            cost=(self.cost[:, :, None] + other.cost[:, None]).reshape(p, -1),
            wcost=(self.wcost[:, :, None] + other.wcost[:, None]).reshape(p, -1),
            dlogp=(self.dlogp[:, :, None] + other.dlogp[:, None]).reshape(p, -1),
        )

    @staticmethod
    def no_action(p: int, d: int) -> BlockTable:
        z = torch.zeros(p, 1, dtype=torch.float64)
        return BlockTable(
            affected=(),
            acted=torch.zeros(1, d, dtype=torch.bool),
            values=torch.zeros(p, 1, d, dtype=torch.float64),
            x_aff=torch.zeros(p, 1, 0, dtype=torch.float64),
            cost=z,
            wcost=z.clone(),
            dlogp=z.clone(),
        )


def _block_options(
    grid: ActionGrid, block: tuple[int, ...], d: int, x: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """(acted (m, d), values (p, m, d), available (p, m)) of every option tuple of a block for
    people x (p, d); option 0 = no action."""
    bins, p = grid.bins, x.shape[0]
    grid_vals, grid_ok = grid.values(x)  # (p, K, B)
    codes = torch.tensor(list(itertools.product(range(bins + 1), repeat=len(block))))
    m = codes.shape[0]
    acted = torch.zeros(m, d, dtype=torch.bool)
    values = torch.zeros(p, m, d, dtype=torch.float64)
    available = torch.ones(p, m, dtype=torch.bool)
    for col, j in enumerate(block):
        k = grid.features.index(j)
        c = codes[:, col]
        acted[:, j] = c > 0
        pick = (c - 1).clamp(min=0)
        values[:, :, j] = torch.where(c > 0, grid_vals[:, k, pick], 0.0)
        available &= (c == 0) | grid_ok[:, k, pick]
    return acted, values, available


@dataclass
class PersonTables:
    """The search space of p people: two block tables plus the no-action baseline."""

    x0: Tensor  # (p, d) the no-action counterfactual (x pushed through abduct/predict)
    offset: Tensor  # (p,) log p(x^0) - log p(x)
    first: BlockTable
    second: BlockTable


def build_tables(
    scenario: Scenario,
    grid: ActionGrid,
    x: Tensor,
    hard_mask: Tensor,
    weights: Tensor,
    world: StructuralCausalModel | None = None,
    ranges: Tensor | None = None,
) -> PersonTables:
    """Per-block option tables for people x (p, d), through ``world`` (default: the
    scenario's exact SCM; a data scenario's learned world is an SCM too, engine.flow_scm).

    Options acting on a feature outside ``hard_mask`` (or on a grid value the person's grid
    lacks) get weighted cost +inf. The noise u = f^-1(x) is abducted once per person; an
    option's counterfactual recomputes only its block's affected features from x^0, and its
    log-density change needs only the acted features' implied noise: every other feature
    keeps its noise, so

        log p(x') - log p(x^0) = sum_{j acted} [log p_j(u'_j) - log p_j(u_j)]
                                 + log|det| (x') - log|det| (x^0),   u'_j = f_j^-1(a_j; x'_pa(j)).
    """
    scm = world or scenario.require_scm("the Oracle")
    ranges = scenario.ranges if ranges is None else ranges  # the cost's M_j (grid_range)
    p, d = x.shape
    u = scm.abduct(x)
    x0 = scm.counterfactual(x, torch.zeros(p, d, dtype=torch.bool), x)
    lp0 = scm.log_prob(x0)
    tables: list[BlockTable] = []
    for block, affected in action_blocks(scm, grid.features):
        acted, values, available = _block_options(grid, block, d, x)
        m = acted.shape[0]
        xc, dlogp = _block_counterfactuals(scm, x0, u, block, affected, acted, values)
        cols = list(block)
        xb = x[:, None, cols].expand(p, m, len(cols)).reshape(p * m, -1)
        vb = values[:, :, cols].reshape(p * m, -1)
        ab = acted[None, :, cols].expand(p, m, -1).reshape(p * m, -1)
        wb = weights[:, None, cols].expand(p, m, -1).reshape(p * m, -1)
        cost = metrics.action_cost(xb, vb, ab, ranges[cols]).reshape(p, m)
        wcost = metrics.action_cost(xb, vb, ab, ranges[cols], wb).reshape(p, m)
        outside = (acted[None] & ~hard_mask[:, None]).any(dim=2) | ~available
        tables.append(
            BlockTable(
                affected=affected,
                acted=acted,
                values=values,
                x_aff=xc[:, list(affected)].reshape(p, m, len(affected)),
                cost=cost,
                wcost=wcost.masked_fill(outside, float("inf")),
                dlogp=dlogp.reshape(p, m),
            )
        )
    while len(tables) > 2:
        tables.sort(key=lambda t: t.m)
        tables = [tables[0].product(tables[1]), *tables[2:]]
    if len(tables) == 1:
        tables.append(BlockTable.no_action(p, d))
    return PersonTables(x0, lp0 - scm.log_prob(x), tables[0], tables[1])


def _block_counterfactuals(
    scm: StructuralCausalModel,
    x0: Tensor,
    u: Tensor,
    block: tuple[int, ...],
    affected: tuple[int, ...],
    acted: Tensor,
    values: Tensor,
) -> tuple[Tensor, Tensor]:
    """(x' (p m, d), log p(x') - log p(x^0) (p m,)) of every option of one block: x^0 with
    the affected columns recomputed in causal order (acted ones set), bitwise what the SCM's
    own ``counterfactual`` gives (the same equations on the same inputs)."""
    p, m, d = values.shape
    xc = x0[:, None].expand(p, m, d).reshape(p * m, d).clone()
    ur = u[:, None].expand(p, m, d).reshape(p * m, d)
    ar = acted[None].expand(p, m, d).reshape(p * m, d)
    vr = values.reshape(p * m, d)
    for j in sorted(affected):  # features are indexed in causal order
        xc[:, j] = torch.where(ar[:, j], vr[:, j], scm.equation(j, xc, ur[:, j]))
    u_cf = ur.clone()
    for j in block:
        u_cf[:, j] = torch.where(ar[:, j], scm.inverse_equation(j, xc), ur[:, j])
    ladj0 = scm.log_abs_det_jacobian(x0)[:, None].expand(p, m).reshape(-1)
    dlogp = (scm.noise_log_prob(u_cf) - scm.noise_log_prob(ur)).sum(dim=1)
    return xc, dlogp + scm.log_abs_det_jacobian(xc) - ladj0


def assemble(
    tables: PersonTables, person: Tensor, i1: Tensor, i2: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """(x_cf, action mask, action values) of grid points (i1, i2) of the given people."""
    t1, t2 = tables.first, tables.second
    x_cf = tables.x0[person].clone()
    x_cf[:, list(t1.affected)] = t1.x_aff[person, i1]
    x_cf[:, list(t2.affected)] = t2.x_aff[person, i2]
    values = t1.values[person, i1] + t2.values[person, i2]
    return x_cf, t1.acted[i1] | t2.acted[i2], values


@dataclass(frozen=True)
class ReferenceResult:
    """One person's optimum from the straightforward search (``found`` False: none)."""

    found: bool
    action_mask: Tensor  # (d,) bool
    action_values: Tensor  # (d,)
    weighted_cost: float
    grid_points: int


def reference_grid_search(
    scenario: Scenario,
    classifier: object,
    grid: ActionGrid,
    x: Tensor,
    hard_mask: Tensor,
    weights: Tensor,
    plausibility: bool = True,
    world: StructuralCausalModel | None = None,
    ranges: Tensor | None = None,
) -> ReferenceResult:
    """Straightforward Oracle for ONE person: evaluate the whole grid, keep the cheapest.

    Enumerates every option tuple over the person's actionable features (no action or one of
    the grid values each; the all-no-action point excluded), computes every counterfactual and
    log-density through the SCM's generic ``counterfactual``/``log_prob`` and the decision
    model on all of them, and returns argmin weighted cost over valid (and, if asked,
    plausible: log p(x') >= log p(x) + PLAUSIBILITY_MARGIN) points.

    ``reference_grid_search`` is the straightforward baseline the benchmark measures the Oracle
    against: one person at a time, the whole grid through the SCM's generic counterfactual and
    log-density. The tests check the Oracle against it.
    """
    scm, d = world or scenario.require_scm("the Oracle"), scenario.d
    feats = [j for j in grid.features if bool(hard_mask[j])]
    if not feats:
        empty = torch.zeros(d, dtype=torch.bool)
        return ReferenceResult(False, empty, torch.zeros(d, dtype=torch.float64), float("inf"), 0)
    codes = torch.tensor(list(itertools.product(range(grid.bins + 1), repeat=len(feats))))[1:]
    n = codes.shape[0]
    mask = torch.zeros(n, d, dtype=torch.bool)
    xr = x.reshape(1, d).expand(n, d)
    values = xr.clone()
    grid_vals = grid.values(x.reshape(1, d))[0][0]  # (K, B); clipped duplicates are harmless
    for col, j in enumerate(feats):
        c = codes[:, col]
        mask[:, j] = c > 0
        values[:, j] = torch.where(c > 0, grid_vals[grid.features.index(j)][(c - 1).clamp(0)], 0.0)
    with torch.no_grad():
        x_cf = scm.counterfactual(xr, mask, values)
        ok = classifier.decision(x_cf.float()).bool()
    if plausibility:
        ok &= scm.log_prob(x_cf) >= scm.log_prob(x.reshape(1, d)) + PLAUSIBILITY_MARGIN
    ranges = scenario.ranges if ranges is None else ranges
    cost = metrics.action_cost(xr, x_cf, mask, ranges, weights.reshape(1, d))
    cost = cost.masked_fill(~ok, float("inf"))
    best = int(torch.argmin(cost))
    if not torch.isfinite(cost[best]):
        empty = torch.zeros(d, dtype=torch.bool)
        return ReferenceResult(False, empty, torch.zeros(d, dtype=torch.float64), float("inf"), n)
    return ReferenceResult(True, mask[best], values[best], float(cost[best]), n)
