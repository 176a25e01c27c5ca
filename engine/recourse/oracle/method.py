"""The causal Oracle: exact grid search for minimum-cost individualized recourse on the SCM.

For a person x with actionable set F_i, cost weights w_i and decision model h, the Oracle
solves, over the grid G of engine.recourse.oracle.grid (no action or one of ``bins`` values
per globally actionable feature; by default the paper's bins around the factual value inside
the range of the training split's rejected people),

    min_{g in G, g acts only on F_i, g != no action}  sum_{j acted} w_ij |a_j - x_j| / M_j
    s.t.  h(x'(g)) = favourable,  and (if ``plausibility``)  log p(x'(g)) >= log p(x),

with x'(g) the exact SCM counterfactual, log p the exact density, M_j the grid's range
(grid_range.cost_ranges; the batch reports the cost over the scenario's ranges). Features
outside F_i are never acted on (infinite cost), downstream consequences cost nothing.

Search. The grid is the sum of two per-person option tables (oracle_grid: the counterfactual,
cost and log-density all split over two independent SCM blocks), so a grid point is a pair
(i1, i2) with cost c1[i1] + c2[i2] and density change dl1[i1] + dl2[i2] + offset. Each table
is sorted by cost; for every person the pairs are visited in cost bands (tau_lo, tau_hi],
found by bisection so that each band holds about ``band`` pairs (counting pairs under a
threshold is a batched searchsorted), doubling the band each round. Pairs of a band are
filtered by plausibility and pushed through h in float32 batches; a person is done at the
first band holding a valid point (its cheapest valid point is then the global optimum, every
cheaper point having been rejected in earlier bands) or when the grid is exhausted (no
recourse: ``found`` False, empty action). Options that cannot be plausible with any partner
are pruned before the search. Everything is batched over people; there is no per-person loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from engine import metrics
from engine.preferences import ActionabilityProfiles
from engine.recourse.base import Capabilities, RecourseContext, RecourseMethod, Timer
from engine.recourse.batch import RecourseBatch
from engine.recourse.oracle.grid import (
    PLAUSIBILITY_MARGIN,
    ActionGrid,
    PersonTables,
    assemble,
    build_tables,
    check_layout,
    reference_grid_search,
)
from engine.recourse.oracle.grid_range import DEFAULT_GRID_RANGE, cost_ranges, grid_bounds
from engine.scm import ArrayLike, StructuralCausalModel

_INF = float("inf")


@dataclass
class _Pairs:
    """Grid points (i1, i2) of some people, with their weighted cost and density change."""

    person: Tensor  # index into the chunk
    i1: Tensor
    i2: Tensor
    wcost: Tensor
    dlogp: Tensor

    def select(self, idx: Tensor) -> _Pairs:
        return _Pairs(
            self.person[idx], self.i1[idx], self.i2[idx], self.wcost[idx], self.dlogp[idx]
        )


class CausalOracle(RecourseMethod):
    """Grid-search Oracle on the exact SCM (math and search in the module docstring), or on
    any world read as an SCM (a data scenario's learned flow, engine.flow_scm).

    ``bins``: grid values per actionable feature; ``plausibility``: enforce
    log p(x') >= log p(x) as a hard constraint; ``grid``: ``factual`` (the paper's bins around
    each person's factual value), ``carma`` or ``shared`` (one grid over the range for
    everybody; oracle_grid); ``grid_range``: ``rejected`` (the min / max over the rejected
    people of the training split, the papers') or ``training`` (the whole split); by default
    the layout's own (grid_range.DEFAULT_GRID_RANGE); ``chunk_people``: people searched together;
    ``band``/``max_band``: pairs per person in the first/largest cost band;
    ``batch_rows``: rows per decision-model call.
    """

    name = "oracle"
    capabilities = Capabilities(candidates=True, exact_world=True, reference_search=True)

    def __init__(
        self,
        context: RecourseContext,
        bins: int = 25,
        plausibility: bool = True,
        *,
        grid: str = "factual",
        grid_range: str | None = None,
        chunk_people: int = 256,
        band: int = 512,
        max_band: int = 16_384,
        batch_rows: int = 1 << 20,
    ) -> None:
        super().__init__(context)
        if not isinstance(context.world, StructuralCausalModel):
            raise ValueError(
                "the causal Oracle needs the exact SCM as the context's world model "
                f"(got {type(context.world).__name__})"
            )
        if min(chunk_people, band, max_band, batch_rows) < 1:
            raise ValueError("chunk_people, band, max_band and batch_rows must be >= 1")
        check_layout(grid)  # before its default range is looked up
        self.grid_range = DEFAULT_GRID_RANGE[grid] if grid_range is None else grid_range
        bounds = grid_bounds(context.scenario, context.classifier, self.grid_range)
        self.grid = ActionGrid.from_scenario(context.scenario, bins, grid, bounds, context.rules)
        self.cost_ranges = cost_ranges(context.scenario, bounds, self.grid_range)
        self.plausibility = plausibility
        self.chunk_people = chunk_people
        self.band = band
        self.max_band = max(max_band, band)
        self.batch_rows = batch_rows

    # ---- public API ---------------------------------------------------------------------
    def recourse(self, factuals: ArrayLike, profiles: ActionabilityProfiles) -> RecourseBatch:
        """The minimum-weighted-cost valid (plausible) grid point per person."""
        ctx = self.context
        with Timer() as timer:
            x, weights = self._inputs(factuals, profiles)
            n, d = x.shape
            mask = torch.zeros(n, d, dtype=torch.bool)
            values = x.clone()
            x_cf = x.clone()
            found = torch.zeros(n, dtype=torch.bool)
            evaluated = torch.zeros(n, dtype=torch.long)
            for s in range(0, n, self.chunk_people):
                sl = slice(s, min(s + self.chunk_people, n))
                tables = self._tables(x[sl], profiles.hard_mask[sl], weights[sl])
                i1, i2, evaluated[sl] = self._search(tables)
                ok = i1 >= 0
                rows = ok.nonzero().flatten()
                if len(rows):
                    cf, m, v = assemble(tables, rows, i1[rows], i2[rows])
                    idx = rows + s
                    x_cf[idx], mask[idx] = cf, m
                    values[idx] = torch.where(m, v, x[idx])
                    found[idx] = True
                # Without recourse x' is x itself (the record of "no action offered").
        batch = ctx.evaluate(
            self.name, x, mask, values, profiles, runtime=timer.seconds, found=found, x_cf=x_cf
        )
        batch.extras["grid_points_evaluated"] = evaluated
        return batch

    def candidates(
        self,
        factuals: ArrayLike,
        profiles: ActionabilityProfiles,
        *,
        top_k: int = 10,
        per_l0: int = 4,
    ) -> RecourseBatch:
        """Valid (and plausible when on) plans per person, for a distance design to pick from.

        Per person: the ``top_k`` cheapest plans by ``objective``, plus, for every number of
        intervened features L0 = 1..|F_i|, ``per_l0`` plans at evenly spaced quantiles of the
        action L1 among that L0's valid plans (cheapest and dearest included; L1 and the
        order over ``cost_ranges``). At most top_k + per_l0 * |F_i| distinct plans per
        person, no row without a valid plan. The whole grid is evaluated (~0.5 M decision-model
        rows per person with four actionable features): a study's handful of people at a time.
        """
        if top_k < 0 or per_l0 < 0:
            raise ValueError("top_k and per_l0 must be >= 0")
        ctx = self.context
        with Timer() as timer:
            x, weights = self._inputs(factuals, profiles)
            n = x.shape[0]
            parts: list[tuple[Tensor, Tensor, Tensor, Tensor]] = []
            per_chunk = max(1, self.batch_rows // (self.grid.bins + 1) ** len(self.grid.features))
            for s in range(0, n, per_chunk):
                sl = slice(s, min(s + per_chunk, n))
                tables = self._tables(x[sl], profiles.hard_mask[sl], weights[sl])
                pairs = self._candidate_pairs(tables, top_k, per_l0)
                cf, m, v = assemble(tables, pairs.person, pairs.i1, pairs.i2)
                parts.append((pairs.person + s, cf, m, v))
            person, x_cf, mask, values = (torch.cat(t) for t in zip(*parts, strict=True))
        return ctx.evaluate(
            self.name,
            x[person],
            mask,
            torch.where(mask, values, x[person]),
            profiles[person],
            runtime=timer.seconds,
            person=person,
            x_cf=x_cf,
        )

    def objective(self, batch: RecourseBatch, profiles: ActionabilityProfiles) -> Tensor:
        """(n,) the weighted cost the Oracle minimizes (over ``cost_ranges``) of a batch's plans."""
        return metrics.action_cost(batch.x, batch.action_values, batch.action_mask,
                                   self.cost_ranges, profiles.weights(self.context.cost_profile))

    def reference_search(
        self, factuals: ArrayLike, profiles: ActionabilityProfiles
    ) -> tuple[Tensor, Tensor]:
        """(found (n,) bool, objective (n,)) of the straightforward per-person search
        (``oracle_grid.reference_grid_search``: the whole grid, one person at a time) that
        ``recourse`` batches; the same optimum (``objective`` of its batch), much slower."""
        x, weights = self._inputs(factuals, profiles)
        found = torch.zeros(len(x), dtype=torch.bool)
        cost = torch.full((len(x),), _INF, dtype=torch.float64)
        for i in range(len(x)):
            ref = reference_grid_search(self.context.scenario, self.context.classifier, self.grid,
                                        x[i], profiles.hard_mask[i], weights[i],
                                        plausibility=self.plausibility,
                                        world=self.context.world,  # type: ignore[arg-type]
                                        ranges=self.cost_ranges)
            found[i], cost[i] = ref.found, ref.weighted_cost
        return found, cost

    # ---- search -------------------------------------------------------------------------
    def _inputs(self, factuals: ArrayLike, profiles: ActionabilityProfiles) -> tuple[Tensor, Tensor]:
        """Checked factuals and the weighted-cost weights under the context's cost profile."""
        x = self.context.check_inputs(factuals, profiles)
        if x.shape[0] == 0:
            raise ValueError("factuals is empty: expected at least one profile")
        return x, profiles.weights(self.context.cost_profile)

    def _tables(self, x: Tensor, hard_mask: Tensor, weights: Tensor) -> PersonTables:
        """Option tables, with options that no partner can make plausible pruned."""
        tables = build_tables(self.context.scenario, self.grid, x, hard_mask, weights,
                              self.context.world, self.cost_ranges)  # type: ignore[arg-type]
        if self.plausibility:
            t1, t2 = tables.first, tables.second
            best1 = t1.dlogp.masked_fill(~torch.isfinite(t1.wcost), -_INF).amax(dim=1)
            best2 = t2.dlogp.masked_fill(~torch.isfinite(t2.wcost), -_INF).amax(dim=1)
            room = tables.offset - PLAUSIBILITY_MARGIN
            t1.wcost = t1.wcost.masked_fill(t1.dlogp + (best2 + room)[:, None] < 0, _INF)
            t2.wcost = t2.wcost.masked_fill(t2.dlogp + (best1 + room)[:, None] < 0, _INF)
        return tables

    def _admissible(self, tables: PersonTables, pairs: _Pairs) -> Tensor:
        """Not the empty action, and plausible when the constraint is on."""
        keep = (pairs.i1 != 0) | (pairs.i2 != 0)
        if self.plausibility:
            keep &= pairs.dlogp + tables.offset[pairs.person] >= PLAUSIBILITY_MARGIN
        return keep

    def _valid(self, tables: PersonTables, pairs: _Pairs) -> Tensor:
        """h(x') = favourable for every pair, in float32 batches of ``batch_rows``."""
        out = torch.zeros(len(pairs.person), dtype=torch.bool)
        with torch.no_grad():
            for s in range(0, len(out), self.batch_rows):
                sl = slice(s, s + self.batch_rows)
                x_cf, _, _ = assemble(tables, pairs.person[sl], pairs.i1[sl], pairs.i2[sl])
                out[sl] = self.context.classifier.decision(x_cf.float()).bool()
        return out

    def _search(self, tables: PersonTables) -> tuple[Tensor, Tensor, Tensor]:
        """Cost-banded search (module docstring): best (i1, i2) per person, -1 if none."""
        t1, t2 = tables.first, tables.second
        p = t1.wcost.shape[0]
        a, order1 = torch.sort(t1.wcost, dim=1)
        b, order2 = torch.sort(t2.wcost, dim=1)
        top = a.masked_fill(~torch.isfinite(a), -_INF).amax(dim=1) + b.masked_fill(
            ~torch.isfinite(b), -_INF
        ).amax(dim=1)  # largest finite pair cost (-inf: no admissible option at all)
        best1 = torch.full((p,), -1, dtype=torch.long)
        best2 = torch.full((p,), -1, dtype=torch.long)
        evaluated = torch.zeros(p, dtype=torch.long)
        tau_lo = torch.full((p,), -1.0, dtype=torch.float64)
        active = torch.isfinite(top).nonzero().flatten()
        band = self.band
        while len(active):
            aa, bb, top_a = a[active], b[active], top[active]
            tau_hi = self._next_threshold(aa, bb, tau_lo[active], top_a, band)
            pairs = self._band_pairs(aa, bb, order1[active], order2[active], tau_lo[active], tau_hi)
            pairs.person = active[pairs.person]
            pairs.dlogp = t1.dlogp[pairs.person, pairs.i1] + t2.dlogp[pairs.person, pairs.i2]
            glob = pairs.select(self._admissible(tables, pairs))
            evaluated += torch.bincount(glob.person, minlength=p)
            ok = self._valid(tables, glob)
            win = _first_minimum(glob.person[ok], glob.wcost[ok], p)
            has = win >= 0
            best1[has] = glob.i1[ok][win[has]]
            best2[has] = glob.i2[ok][win[has]]
            tau_lo[active] = tau_hi
            # done only past top (_next_threshold's cap): a band ending exactly at top can
            # leave out a pair costing top that rounding counts above it (b_k > top - a_i)
            done = has[active] | (tau_hi > top_a)
            active = active[~done]
            band = min(2 * band, self.max_band)
        return best1, best2, evaluated

    @staticmethod
    def _count(a: Tensor, b: Tensor, tau: Tensor) -> Tensor:
        """Number of pairs with a_i + b_k <= tau, per person (a, b sorted ascending)."""
        return torch.searchsorted(b, tau[:, None] - a, right=True).sum(dim=1)

    def _next_threshold(
        self, a: Tensor, b: Tensor, tau_lo: Tensor, top: Tensor, band: int
    ) -> Tensor:
        """Smallest-ish tau_hi with at least ``band`` pairs in (tau_lo, tau_hi] (bisection).

        When every remaining pair fits, tau_hi is ``top`` plus a relative 1e-9: a pair costing
        exactly ``top`` can fail b_k <= top - a_i by float rounding and would be skipped, while
        options of infinite cost (not actionable) must stay out.
        """
        target = self._count(a, b, tau_lo) + band
        lo, hi = tau_lo.clone(), top.clone()
        last = self._count(a, b, hi) <= target
        for _ in range(30):
            mid = 0.5 * (lo + hi)
            enough = self._count(a, b, mid) >= target
            hi = torch.where(enough, mid, hi)
            lo = torch.where(enough, lo, mid)
        return torch.where(last, top + 1e-9 * (1.0 + top.abs()), hi)

    @staticmethod
    def _band_pairs(
        a: Tensor, b: Tensor, order1: Tensor, order2: Tensor, tau_lo: Tensor, tau_hi: Tensor
    ) -> _Pairs:
        """Every pair with tau_lo < a_i + b_k <= tau_hi, in original option indices.

        ``person`` indexes the rows of ``a``; ``dlogp`` is left for the caller to fill.
        """
        p, m1 = a.shape
        lo = torch.searchsorted(b, tau_lo[:, None] - a, right=True).flatten()
        hi = torch.searchsorted(b, tau_hi[:, None] - a, right=True).flatten()
        cnt = hi - lo
        row = torch.repeat_interleave(torch.arange(p * m1), cnt)
        start = torch.cumsum(cnt, 0) - cnt
        k = lo[row] + torch.arange(len(row)) - start[row]
        person, i = row // m1, row % m1
        return _Pairs(
            person=person,
            i1=order1[person, i],
            i2=order2[person, k],
            wcost=a[person, i] + b[person, k],
            dlogp=torch.empty_like(row, dtype=torch.float64),
        )

    def _candidate_pairs(self, tables: PersonTables, top_k: int, per_l0: int) -> _Pairs:
        """Every admissible valid grid point of the chunk, then the selection of ``candidates``."""
        t1, t2 = tables.first, tables.second
        p = t1.wcost.shape[0]
        person, i1, i2 = (
            g.flatten()
            for g in torch.meshgrid(
                torch.arange(p), torch.arange(t1.m), torch.arange(t2.m), indexing="ij"
            )
        )
        wcost = t1.wcost[person, i1] + t2.wcost[person, i2]
        fin = torch.isfinite(wcost)
        person, i1, i2, wcost = person[fin], i1[fin], i2[fin], wcost[fin]
        pairs = _Pairs(person, i1, i2, wcost, t1.dlogp[person, i1] + t2.dlogp[person, i2])
        pairs = pairs.select(self._admissible(tables, pairs))
        pairs = pairs.select(self._valid(tables, pairs))
        person, i1, i2 = pairs.person, pairs.i1, pairs.i2
        # top_k cheapest per person
        chosen = [_ranked_within(person, pairs.wcost, top_k, 0)]
        # per_l0 plans per (person, L0), at evenly spaced ranks of the action L1 (= cost)
        l0 = (t1.acted[i1] | t2.acted[i2]).sum(dim=1)
        group = person * (t1.acted.shape[1] + 1) + l0
        l1 = t1.cost[person, i1] + t2.cost[person, i2]
        for q in range(per_l0):
            chosen.append(_ranked_within(group, l1, 1, q, spread=per_l0))
        sel = torch.cat(chosen).unique()
        pairs = pairs.select(sel)
        order = torch.argsort(pairs.wcost, stable=True)
        order = order[torch.argsort(pairs.person[order], stable=True)]
        return pairs.select(order)


def _ranked_within(group: Tensor, key: Tensor, k: int, q: int, spread: int | None = None) -> Tensor:
    """Positions of entries by rank of ``key`` within their ``group``.

    Without ``spread``: the entries of rank < k. With ``spread`` = c: the entry at rank
    round(q (size - 1) / (c' - 1)), c' = min(c, size), if q < c' (evenly spaced ranks).
    """
    order = torch.argsort(key, stable=True)
    order = order[torch.argsort(group[order], stable=True)]
    g = group[order]
    start = torch.searchsorted(g, g)
    rank = torch.arange(len(g)) - start
    if spread is None:
        return order[rank < k]
    size = torch.searchsorted(g, g, right=True) - start
    c = size.clamp(max=spread)
    target = torch.round(q * (size - 1) / (c - 1).clamp(min=1)).long()
    return order[(q < c) & (rank == target)]


def _first_minimum(person: Tensor, cost: Tensor, p: int) -> Tensor:
    """Per person, the position of its first minimum-cost entry (-1 if it has none)."""
    best = torch.full((p,), _INF, dtype=cost.dtype).scatter_reduce(
        0, person, cost, reduce="amin", include_self=True
    )
    at_min = cost == best[person]
    pos = torch.arange(len(person))
    big = len(person)
    first = torch.full((p,), big, dtype=torch.long).scatter_reduce(
        0, person[at_min], pos[at_min], reduce="amin", include_self=True
    )
    return torch.where(first < big, first, torch.full_like(first, -1))
