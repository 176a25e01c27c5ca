"""The plan rules at their boundaries (engine.recourse.plan_rules, engine.recourse.plan_bounds):
each rule exactly at, just inside and just outside its threshold, so that a threshold moved
(halved, doubled, a strict comparison made loose) fails a test; and every searching part
(the shift realization, the targets, the Oracle's grid, the pool, HARE's pairs) kept inside
the bounds."""

from __future__ import annotations

import pytest
import torch

from engine.decision import BayesDecision
from engine.recourse import PlanRules, plan_rules
from engine.recourse.base import RecourseContext
from engine.recourse.hare.config import HareConfig
from engine.recourse.hare.state import HareState
from engine.recourse.oracle.grid import ActionGrid
from engine.recourse.plan_bounds import DEFAULT_RELATIVE, DEFAULT_SPREAD, Bound, box
from engine.recourse.shift_actions import realize
from engine.recourse.targets import realize_targets
from engine.scenarios import get_scenario


@pytest.fixture(scope="module")
def credit():
    return get_scenario("german-credit")


def _col(sc, name: str) -> int:
    return sc.feature_names.index(name)


def _model(sc, name: str, shown: float) -> float:
    return float(sc.features[_col(sc, name)].display.from_display(shown))


def _one_action(sc, name: str, current: float, new: float) -> tuple[torch.Tensor, ...]:
    """x (1, d) with ``name`` at ``current`` (display units) and the action setting it to
    ``new``: (x, values, mask)."""
    j = _col(sc, name)
    x = sc.dataset["test"][0][:1].to(torch.float64).clone()
    x[0, j] = _model(sc, name, current)
    values = x.clone()
    values[0, j] = _model(sc, name, new)
    mask = torch.zeros_like(x, dtype=torch.bool)
    mask[0, j] = True
    return x, values, mask


def _breaks(sc, rules, name: str, current: float, new: float) -> dict[str, bool]:
    x, values, mask = _one_action(sc, name, current, new)
    return {k: bool(v.any()) for k, v in plan_rules.action_breaks(sc, rules, x, values,
                                                                  mask).items()}


# ---- below precision and no-op: the display resolution ($1 of income) -----------------------
@pytest.mark.parametrize(("step", "below"), [
    (1.0, False),     # exactly one resolution: a change a person sees
    (1.001, False),   # just above
    (0.999, True),    # just below: rounding may show $1, the change is $0.999
    (0.75, True),     # a threshold halved (0.5) would let this through
    (0.51, True),
])
def test_below_precision_is_one_resolution(loan, step: float, below: bool) -> None:
    rules = PlanRules.of(loan)
    assert _breaks(loan, rules, "income", 30_000.2, 30_000.2 + step)["below_precision"] is below


@pytest.mark.parametrize(("current", "new", "no_op"), [
    (30_000.2, 30_000.4, True),    # both show $30,000
    (30_000.2, 30_000.6, False),   # $30,000 -> $30,001 (a visible change, if below precision)
    (30_000.0, 30_001.0, False),
])
def test_no_op_is_the_same_shown_value(loan, current: float, new: float, no_op: bool) -> None:
    assert _breaks(loan, PlanRules.of(loan), "income", current, new)["no_op"] is no_op


@pytest.mark.parametrize(("new", "against"), [
    (30_000.0, False),  # no move is not against the direction (no_op catches it)
    (30_000.5, False),
    (29_999.5, True),   # the smallest fall in an increase-only item
])
def test_direction_at_zero(loan, new: float, against: bool) -> None:
    rules = PlanRules.of(loan, {"income": "increase"})
    assert _breaks(loan, rules, "income", 30_000.0, new)["direction"] is against


# ---- the bounds: step (relative, absolute), range, levels --------------------------------
def test_the_default_bounds_are_the_documented_ones(loan, credit) -> None:
    rules = PlanRules.of(loan)
    amount = rules.bounds[_col(loan, "loan_amount")]
    lo, hi = loan.display_bounds[:, _col(loan, "loan_amount")].tolist()
    m = loan.features[_col(loan, "loan_amount")].display
    spread = float(m.to_display(hi)) - float(m.to_display(lo))
    assert amount.relative == DEFAULT_RELATIVE == 0.5
    assert amount.absolute == pytest.approx(DEFAULT_SPREAD * spread)
    assert PlanRules.of(credit).bounds[_col(credit, "employment")] == Bound(absolute=1.0)
    # a count shown in whole numbers (1 to 4) may move by one, not only by a tenth of 3
    assert PlanRules.of(credit).bounds[_col(credit, "residence_years")].absolute == 1.0
    assert PlanRules.of(credit).bounds[_col(credit, "checking")] == Bound()  # levels only


@pytest.mark.parametrize(("new", "outside"), [
    (30_000.0, False),   # 20,000 + half of it: exactly the relative step
    (29_990.0, False),   # just inside
    (30_010.0, True),    # just outside (a relative step doubled would allow it)
    (26_000.0, False),   # a relative step halved (25,000) would refuse this
    (10_000.0, False),   # down by exactly half
    (9_990.0, True),
])
def test_relative_step(loan, new: float, outside: bool) -> None:
    rules = PlanRules.of(loan, bounds={"loan_amount": Bound(relative=0.5)})
    assert _breaks(loan, rules, "loan_amount", 20_000.0, new)["bounds"] is outside


@pytest.mark.parametrize(("new", "outside"), [
    (6_000.0, False),    # 1,000 + 5,000: exactly the absolute step (relative gives only 500)
    (5_990.0, False),
    (6_010.0, True),
    (3_600.0, False),    # an absolute step halved (2,500) would refuse this
])
def test_absolute_step_where_it_allows_more(loan, new: float, outside: bool) -> None:
    rules = PlanRules.of(loan, bounds={"savings": Bound(relative=0.5, absolute=5_000.0)})
    assert _breaks(loan, rules, "savings", 1_000.0, new)["bounds"] is outside


@pytest.mark.parametrize(("new", "outside"), [
    (40_000.0, False),   # exactly the range's top
    (39_990.0, False),
    (40_010.0, True),
    (2_000.0, False),    # exactly its bottom
    (1_990.0, True),
])
def test_range_without_a_step_limit(loan, new: float, outside: bool) -> None:
    rules = PlanRules.of(loan, bounds={"loan_amount": Bound(low=2_000.0, high=40_000.0)})
    assert _breaks(loan, rules, "loan_amount", 20_000.0, new)["bounds"] is outside


def test_the_population_range_is_the_default_range(loan) -> None:
    j = _col(loan, "loan_amount")
    top = float(loan.features[j].display.to_display(loan.display_bounds[1, j]))
    rules = PlanRules.of(loan, bounds={"loan_amount": Bound()})  # no step limit
    assert not _breaks(loan, rules, "loan_amount", top - 100.0, top)["bounds"]
    assert _breaks(loan, rules, "loan_amount", top - 100.0, top * 1.001)["bounds"]


@pytest.mark.parametrize(("new", "outside"), [(2, False), (3, True), (0, False)])
def test_an_ordinal_item_moves_one_level(credit, new: int, outside: bool) -> None:
    # employment "under 1 year" (1): "1 to 4 years" (2) is one level, "4 to 7 years" two
    assert _breaks(credit, PlanRules.of(credit), "employment", 1, new)["bounds"] is outside


def test_without_rules_nothing_is_bounded(loan) -> None:
    assert not _breaks(loan, None, "loan_amount", 17_514.0, 60_429.0)["bounds"]
    assert _breaks(loan, PlanRules.of(loan), "loan_amount", 17_514.0, 60_429.0)["bounds"]


def test_count_broken_reports_bounds(loan) -> None:
    names = loan.feature_names
    x, values, mask = _one_action(loan, "loan_amount", 17_514.0, 60_429.0)
    record = {"x": dict(zip(names, x[0].tolist(), strict=True)),
              "x_cf": dict(zip(names, values[0].tolist(), strict=True)),
              "actions": {"loan_amount": float(values[0, _col(loan, "loan_amount")])}}
    counts = plan_rules.count_broken(loan, PlanRules.of(loan), [record])
    assert "bounds" in plan_rules.RULES and counts["bounds"] == 1


# ---- the searches stay inside ------------------------------------------------------------
def _context(sc, rules):
    return RecourseContext(sc, BayesDecision(sc), rules=rules)


def test_shift_realization_clamps_acted_features_into_the_bounds(loan) -> None:
    rules = PlanRules.of(loan, {"income": "increase"})
    x = loan.dataset["test"][0][:8].to(torch.float64)
    z = torch.zeros_like(x)
    inc, amount = _col(loan, "income"), _col(loan, "loan_amount")
    z[:, inc], z[:, amount] = 5.0, -5.0  # far beyond any bound
    allowed = loan.actionable_mask().bool().expand_as(x).clone()
    r = realize(_context(loan, rules), x, z, allowed)
    lo, hi = box(loan, rules.bounds, x)
    assert torch.allclose(r.action_values[:, inc], hi[:, inc])
    assert torch.allclose(r.action_values[:, amount], lo[:, amount])
    assert not plan_rules.action_breaks(loan, rules, x, r.action_values,
                                        r.action_mask)["bounds"].any()
    free = realize(_context(loan, None), x, z, allowed)  # the papers' methods: unbounded
    assert (free.action_values[:, inc] > hi[:, inc] + 1e-6).all()


def test_targets_are_clamped_and_invisible_changes_dropped(loan) -> None:
    rules = PlanRules.of(loan, {"income": "increase"})
    x = loan.dataset["test"][0][:4].to(torch.float64)
    t = x.clone()
    inc, sav = _col(loan, "income"), _col(loan, "savings")
    t[:, inc] = x[:, inc] - 1.0  # against the direction: clamped onto x, no action
    t[:, sav] = x[:, sav] + 10.0  # far up: clamped to the bound
    r = realize_targets(_context(loan, rules), x, t,
                        loan.actionable_mask().bool().expand_as(x).clone())
    assert not r.action_mask[:, inc].any() and r.action_mask[:, sav].all()
    assert not plan_rules.action_breaks(loan, rules, x, r.action_values,
                                        r.action_mask)["bounds"].any()


def test_the_oracle_grid_offers_only_values_inside_and_their_edges(loan) -> None:
    rules = PlanRules.of(loan)
    grid = ActionGrid.from_scenario(loan, 21, rules=rules)
    x = loan.dataset["test"][0][:6].to(torch.float64)
    vals, ok = grid.values(x)
    lo, hi = box(loan, rules.bounds, x)
    cols = list(grid.features)
    inside = (vals >= lo[:, cols, None] - 1e-9) & (vals <= hi[:, cols, None] + 1e-9)
    assert ok.any() and bool(inside[ok].all())
    amount = cols.index(_col(loan, "loan_amount"))
    edge = (vals[:, amount] - hi[:, _col(loan, "loan_amount"), None]).abs() < 1e-9
    assert bool((edge & ok[:, amount]).any(dim=1).all())  # the top of the bound is offered


def test_hare_never_asks_a_pair_that_reads_the_same(loan) -> None:
    rules = PlanRules.of(loan)
    ctx = _context(loan, rules)
    x = loan.dataset["test"][0][:1].to(torch.float64)
    sav = _col(loan, "savings")
    z = torch.zeros(1, loan.d, dtype=torch.float64)
    z[0, sav] = 0.05
    twin = z.clone()
    twin[0, sav] += 1e-7  # the same plan up to a fraction of a dollar: reads the same
    other = z.clone()
    other[0, sav] = 0.1
    data = {"seed": 0, "t": 0, "phase": "compare", "pos": 0, "x": x.tolist(),
            "allowed": loan.actionable_mask().bool().expand_as(x).tolist(),
            "incumbent": z.tolist(), "incumbent_valid": [True], "gamma": [1.0],
            "contenders": torch.stack([z, twin, other], dim=1).tolist(),
            "valid": [[True, True, True]], "winner": [0], "done": [False],
            "accepted": [False], "asked": [0]}
    allowed = loan.actionable_mask().bool().expand_as(x).clone()
    assert bool(plan_rules.reads_same(loan, realize(ctx, x, z, allowed).x_cf,
                                      realize(ctx, x, twin, allowed).x_cf)[0])
    assert not bool(HareState(ctx, HareConfig(), {**data, "pos": 1}).query().ask[0])
    state = HareState(ctx, HareConfig(), data)
    state._advance()  # the tournament starts: the twin pair resolves itself (not asked) ...
    assert state.pos == 2 and bool(state.query().ask[0])  # ... the next is a real choice
    assert state.unasked_same.tolist() == [1]
    assert HareState.from_dict(ctx, {**state.to_dict(), "config": {}}).unasked_same.tolist() \
        == [1]
    # without rules (the paper's runs) the same pair is asked as published
    assert bool(HareState(_context(loan, None), HareConfig(), {**data, "pos": 1}).query().ask[0])


@pytest.mark.parametrize(("method", "options"), [
    ("pool", {}), ("pool-profiles", {}), ("gs", {"samples": 64, "max_layers": 60}),
    ("wachter", {"steps": 60}),
])
def test_the_base_generators_search_inside_the_rules(loan, method: str, options: dict) -> None:
    """Every plan the method returns under the rules breaks none (bounds, direction, no
    invisible change), and some person gets one; without rules the same people get plans
    the bounds would refuse (the paper's methods, unbounded)."""
    from engine.preferences import all_actionable
    from engine.recourse import get_method

    rules = PlanRules.of(loan, {"income": "increase", "savings": "increase"})
    x = loan.dataset["test"][0].to(torch.float64)
    x = x[~BayesDecision(loan).decision(x.float()).bool()][:16]
    profiles = all_actionable(loan.feature_names, loan.actionable, len(x))
    plans = get_method(method, _context(loan, rules), **options).plans(x, profiles,
                                                                        candidates=False)
    shown = plans.found & plans.valid
    assert bool(shown.any())
    bad = plan_rules.action_breaks(loan, rules, plans.x, plans.action_values,
                                   plans.action_mask)
    for rule, hit in bad.items():
        assert not bool(hit[shown].any()), rule
    free = get_method(method, _context(loan, None), **options).plans(x, profiles,
                                                                      candidates=False)
    loose = plan_rules.action_breaks(loan, rules, free.x, free.action_values, free.action_mask)
    assert bool((loose["bounds"] | loose["direction"])[free.found & free.valid].any())


def test_a_scenario_states_its_own_change_limits(tmp_path) -> None:
    """``change`` in a scenario file replaces the default of that feature only; a binary
    feature with one, or a limit both lifted and stated, is refused at its path."""
    from pathlib import Path


    loan_text = (Path(__file__).resolve().parents[2] / "engine" / "scenarios" /
                 "loan.yaml").read_text()
    assert "  - name: savings\n" in loan_text
    own = tmp_path / "bounded.yaml"
    own.write_text(loan_text.replace("name: loan\n", "name: bounded-loan\n", 1).replace(
        "  - name: savings\n", "  - name: savings\n    change: {relative: 2.0, absolute: 100}\n",
        1).replace("  - name: income\n", "  - name: income\n    change: {none: true}\n", 1))
    sc = get_scenario(str(own))
    rules = PlanRules.of(sc)
    assert rules.bounds[_col(sc, "savings")] == Bound(relative=2.0, absolute=100.0)
    assert rules.bounds[_col(sc, "income")] == Bound()
    assert rules.bounds[_col(sc, "loan_amount")].relative == DEFAULT_RELATIVE
    for bad, where in (("change: {none: true, relative: 1}", "change"),
                       ("change: {}", "change")):
        wrong = tmp_path / "wrong.yaml"
        wrong.write_text(own.read_text().replace("change: {none: true}", bad, 1).replace(
            "name: bounded-loan", "name: wrong-loan", 1))
        with pytest.raises(Exception, match=where):
            get_scenario(str(wrong))


@pytest.mark.parametrize(("step", "allowed"), [
    (1.0, True), (1.001, True), (0.999, False), (0.75, False), (0.51, False),
])
def test_the_oracle_grid_drops_changes_below_precision_as_the_rules_do(loan, step: float,
                                                                      allowed: bool) -> None:
    """The grid's own check of a visible change (GridLimit) at the threshold the rule sets
    (``action_breaks``' below_precision): a grid value one resolution from the current value
    is a plan, 0.51 to 0.999 of it is none; a threshold halved in either fails here."""
    rules = PlanRules.of(loan)
    limit = plan_rules.grid_allowed(loan, rules, loan.actionable)
    x, values, mask = _one_action(loan, "income", 30_000.2, 30_000.2 + step)
    k = list(loan.actionable).index(_col(loan, "income"))
    grid = x[:, list(loan.actionable), None].clone()  # (1, K, 1): every other feature stays
    grid[0, k, 0] = values[0, _col(loan, "income")]
    assert bool(limit(x, grid)[0, k, 0]) is allowed
    broken = plan_rules.action_breaks(loan, rules, x, values, mask)
    assert (not broken["below_precision"].any() and not broken["no_op"].any()) is allowed


@pytest.mark.parametrize(("new", "outside"), [
    (6_700.0, False),   # 1,500 + a tenth of the population's savings range (5,205)
    (6_720.0, True),    # just past it
    (4_500.0, False),   # a tenth halved (2,603) would refuse this; half the value (750) too
])
def test_the_default_step_of_a_small_amount_is_a_tenth_of_the_range(loan, new: float,
                                                                    outside: bool) -> None:
    """The scenario's default bound of savings (no ``change`` stated): a tenth of the range
    people have, $1,447 to $53,497, where half the current value allows less."""
    assert _breaks(loan, PlanRules.of(loan), "savings", 1_500.0, new)["bounds"] is outside


def test_moves_carried_to_the_edge_stay_inside_distinct_and_on_their_ray(loan) -> None:
    """plan_rules.toward_edge: a move far past the bounds (income x3, which clamping alone
    puts on the edge for every longer move) and a small one (savings +$100) give distinct
    points inside the bounds, on the clamped move's ray, the last on the bounds' edge; a
    person with no move stays put."""
    rules = PlanRules.of(loan, {"income": "increase", "savings": "increase"})
    x = loan.dataset["test"][0][:2].to(torch.float64).clone()
    values = x.clone()
    inc, sav = _col(loan, "income"), _col(loan, "savings")
    m_inc, m_sav = loan.features[inc].display, loan.features[sav].display
    values[0, inc] = float(m_inc.from_display(3 * float(m_inc.to_display(float(x[0, inc])))))
    values[0, sav] = float(m_sav.from_display(float(m_sav.to_display(float(x[0, sav]))) + 100))
    points = plan_rules.toward_edge(loan, rules, x, values, (0.25, 0.5, 0.75, 1.0))
    lo, hi = plan_rules.search_box(loan, rules, x)
    mask = torch.zeros_like(x, dtype=torch.bool)
    mask[:, [inc, sav]] = True
    for p in points:
        assert bool(((p >= lo - 1e-9) & (p <= hi + 1e-9)).all())
        assert not plan_rules.action_breaks(loan, rules, x, p, mask)["bounds"][0].any()
        assert torch.equal(p[1], x[1])  # no move: nothing carried
    moves = torch.stack([p[0] - x[0] for p in points])
    ratio = moves[:, sav] / moves[:, inc]
    assert torch.allclose(ratio, ratio[0].expand_as(ratio))  # one ray
    assert bool((moves[1:, inc] > moves[:-1, inc]).all())    # distinct, growing
    edge = (points[-1][0] - hi[0]).abs() < 1e-9
    assert bool(edge[[inc, sav]].any())                       # the last on the edge


@pytest.mark.parametrize(("new", "outside"), [
    (1_500.0, False),    # 1,000 + half of it: exactly German Credit's own step
    (1_490.0, False),
    (1_510.0, True),     # just above: the default's absolute step (a tenth of the range,
    (1_750.0, True),     # about 790 euro) would allow up to about 1,790
    (500.0, False),      # down by exactly half
    (490.0, True),
])
def test_german_credit_bounds_the_loan_amount_relative_to_itself(credit, new: float,
                                                                  outside: bool) -> None:
    """The scenario's ``change: {relative: 0.5}`` on the loan amount: a small loan may not
    grow several times over (the default's absolute step let 448 DM become 2,000)."""
    rules = PlanRules.of(credit)
    assert rules.bounds[_col(credit, "credit_amount")] == Bound(relative=0.5)
    assert _breaks(credit, rules, "credit_amount", 1_000.0, new)["bounds"] is outside
