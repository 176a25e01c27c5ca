"""Plan rules every method obeys before a plan is shown to a person (one place for all).

A plan is the action (mask m, do-values a) on a person's profile x and its counterfactual
x' = CF(x, do(x_m = a_m)). With D(v) a feature's value as shown (display units rounded to
its resolution r_j: one level, or one unit of the last shown decimal) and s_j in {+1, -1, 0}
the feature's allowed direction, an action on feature j (m_j = 1) must satisfy

- **direction**: s_j (a_j - x_j) >= 0 (nobody is asked to earn less when income may only
  rise);
- **no no-op**: D(a_j) != D(x_j) (a row marked "change" that shows the same value);
- **no change below precision**: |d(a_j) - d(x_j)| >= r_j with d the unrounded display map
  (a change of $0.40 that rounding happens to show as $1);
- **bounds**: d(a_j) within the plausible-change bounds B_j(x) (engine.recourse.plan_bounds:
  at most a step t_j(x) from the current value, inside the range people in the population
  have; a loan of $17,514 is not raised to $60,429);

and, when the protocol forbids them (``consequences: forbid``),

- **consequence**: no item the person marked unchangeable changes as a causal consequence of
  the actions (x'_j != x_j with m_j = 0 and j outside the person's actionable set).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from torch import Tensor

from engine.recourse import plan_bounds
from engine.recourse.plan_bounds import Bound
from engine.scenarios.base import Scenario

RULES: tuple[str, ...] = ("direction", "no_op", "below_precision", "bounds", "consequence")
DIRECTION_CODES: dict[str, int] = {"increase": 1, "decrease": -1, "any": 0}
Consequences = Literal["explain", "forbid"]
_TOL = 1e-9


@dataclass(frozen=True)
class PlanRules:
    """Allowed directions per feature (+1 up only, -1 down only, 0 either), the
    plausible-change bounds per feature (engine.recourse.plan_bounds; empty: none) and what
    happens to a consequence on an item the person cannot change (``explain``: the page says
    what it follows from; ``forbid``: the plan is not shown).

    >>> from engine import get_scenario
    >>> from engine.recourse import PlanRules
    >>> rules = PlanRules.of(get_scenario("loan"), {"income": "increase"})
    >>> rules.directions, rules.consequences
    ((0, 0, 1, 0, 0, 1, 0), 'explain')
    >>> rules.bounds[5].relative  # income: half of itself per plan (the default)
    0.5

    ``PlanRules`` holds s (the scenario's directions, with a study's own on top), the bounds
    (the scenario's, with a study's own on top) and the consequence mode; a ``RecourseContext``
    carrying rules makes every method obey them where it searches: the Oracle's grid offers only
    values that satisfy them, clipped into the bounds (``grid_allowed``, ``GridLimit``), the shift
    methods (Wachter, Growing Spheres, HARE's candidates) realize their shifts clamped into
    ``search_box`` (engine.recourse.shift_actions.realize) and judge a point valid only when its
    actions break no rule (``action_obeys``), HARE projects its candidate shifts onto the
    direction cone and drops the invisible ones (``project_shifts``, ``snap_shifts``), the
    target methods (FACE, CCHVAE, CLUE, CRUDS) clamp their targets into ``search_box``
    (engine.recourse.targets.realize_targets), the pool methods take their directions and boxes
    from here (``directions_of``, ``search_box``), and the planner shows only plans with no
    broken rule (``broken``). A context without rules (the paper reproductions and benchmarks)
    leaves the methods as published.
    """

    directions: tuple[int, ...]
    consequences: Consequences = "explain"
    bounds: tuple[Bound, ...] = ()

    @classmethod
    def of(cls, scenario: Scenario, directions: Mapping[str, str] | None = None,
           consequences: Consequences = "explain",
           bounds: Mapping[str, Bound] | None = None) -> PlanRules:
        """The scenario's directions with ``directions`` (feature -> increase | decrease |
        any) on top, and its bounds (plan_bounds.default_bound) with ``bounds`` (feature ->
        Bound) in place of theirs."""
        own = dict(directions or {})
        own_bounds = dict(bounds or {})
        unknown = sorted((set(own) | set(own_bounds)) - set(scenario.feature_names))
        if unknown:
            raise ValueError(f"plan rules name unknown feature(s) {', '.join(unknown)} "
                             f"(features: {', '.join(scenario.feature_names)})")
        dirs = tuple(DIRECTION_CODES[own[f.name]] if f.name in own else f.direction
                     for f in scenario.features)
        limits = tuple(own_bounds.get(f.name) or plan_bounds.default_bound(scenario, j)
                       for j, f in enumerate(scenario.features))
        return cls(dirs, consequences, limits)

    def tensor(self) -> Tensor:
        return torch.tensor(self.directions, dtype=torch.long)


def directions_of(scenario: Scenario, rules: PlanRules | None) -> Tensor:
    """(d,) long directions a method obeys: the rules', else the scenario's own."""
    if rules is not None:
        return rules.tensor()
    return torch.tensor([f.direction for f in scenario.features], dtype=torch.long)


def against_direction(directions: Tensor, move: Tensor) -> Tensor:
    """Bool, shape of ``move`` (..., d): a move a_j - x_j against feature j's direction."""
    return ((directions == 1) & (move < -_TOL)) | ((directions == -1) & (move > _TOL))


def display_raw(scenario: Scenario, x: Tensor) -> Tensor:
    """(n, d) display values, unrounded (model units through each display map)."""
    x = x.detach().to(torch.float64)
    cols = [torch.as_tensor(np.asarray(f.display.to_display(x[:, j].numpy()), dtype=float))
            for j, f in enumerate(scenario.features)]
    return torch.stack(cols, dim=1) if cols else x.clone()


def resolutions(scenario: Scenario) -> Tensor:
    return torch.tensor([f.resolution for f in scenario.features], dtype=torch.float64)


def displayed(scenario: Scenario, x: Tensor) -> Tensor:
    """(n, d) values as shown to a person: display units rounded to each item's resolution."""
    res = resolutions(scenario)
    return torch.round(display_raw(scenario, x) / res) * res


def shown_profile(scenario: Scenario, x: Tensor) -> Tensor:
    """(n, d) profiles as a plan page shows them: each in-plan item's shown value
    (``displayed``), 0 for the items a plan never shows (``in_plan`` False)."""
    in_plan = torch.tensor([f.in_plan for f in scenario.features])
    return torch.where(in_plan, displayed(scenario, x), torch.zeros((), dtype=torch.float64))


def reads_same(scenario: Scenario, a: Tensor, b: Tensor) -> Tensor:
    """(n,) bool: counterfactual profiles a, b (n, d) model units that read the same as
    shown (every in-plan item's shown value equal): two such plans are no choice."""
    return (shown_profile(scenario, a) == shown_profile(scenario, b)).all(dim=1)


def invisible(dx: Tensor, dv: Tensor, res: Tensor) -> tuple[Tensor, Tensor]:
    """(no_op, below_precision), bool like ``dx``: a change from unrounded display values dx
    to dv that shows the same value (round(dv / r) = round(dx / r)), and one smaller than the
    resolution r (|dv - dx| < r); ``res`` broadcasts against them. The one definition of a
    change a person sees, for plans and for the Oracle's grid."""
    same = torch.round(dv / res) == torch.round(dx / res)
    return same, (dv - dx).abs() < res - _TOL


def action_breaks(scenario: Scenario, rules: PlanRules | None, x: Tensor, values: Tensor,
                  mask: Tensor) -> dict[str, Tensor]:
    """(n, d) bool per action rule (direction, no_op, below_precision, bounds): the actions
    that break it (module docstring); no bounds without rules."""
    mask = mask.bool()
    move = values.to(torch.float64) - x.to(torch.float64)
    dirs = directions_of(scenario, rules)
    no_op, below = invisible(display_raw(scenario, x), display_raw(scenario, values),
                             resolutions(scenario))
    return {
        "direction": mask & against_direction(dirs, move),
        "no_op": mask & no_op,
        "below_precision": mask & below,
        "bounds": plan_bounds.outside(scenario, () if rules is None else rules.bounds,
                                      x, values, mask),
    }


def action_obeys(scenario: Scenario, rules: PlanRules | None, x: Tensor, values: Tensor,
                 mask: Tensor) -> Tensor:
    """(n,) bool: the actions of each plan break no action rule (all True without rules:
    a search judges its points as published)."""
    if rules is None:
        return torch.ones(x.shape[0], dtype=torch.bool)
    bad = action_breaks(scenario, rules, x, values, mask)
    return ~torch.stack(list(bad.values()), dim=0).any(dim=(0, 2))


def search_box(scenario: Scenario, rules: PlanRules, x: Tensor) -> tuple[Tensor, Tensor]:
    """(lo, hi) (n, d) model units an action of each person may take under the rules: the
    bounds with the direction folded in (plan_bounds.search_box)."""
    return plan_bounds.search_box(scenario, rules.bounds, rules.tensor(), x)


def consequences_on_fixed(scenario: Scenario, x: Tensor, x_cf: Tensor, mask: Tensor,
                          hard_mask: Tensor | None) -> Tensor:
    """(n, d) bool: items outside the person's actionable set (``hard_mask``) that change as
    shown without being acted on; all False without a stated profile."""
    if hard_mask is None:
        return torch.zeros_like(mask, dtype=torch.bool)
    in_plan = torch.tensor([f.in_plan for f in scenario.features])
    moved = displayed(scenario, x) != displayed(scenario, x_cf)
    return moved & ~mask.bool() & ~hard_mask.bool() & in_plan


def broken(scenario: Scenario, rules: PlanRules | None, x: Tensor, x_cf: Tensor,
           mask: Tensor, values: Tensor, hard_mask: Tensor | None = None) -> dict[str, Tensor]:
    """(n,) bool per rule of ``RULES``: the plans that break it (``consequence`` only when
    the rules forbid consequences on unchangeable items)."""
    out = {k: v.any(dim=1) for k, v in action_breaks(scenario, rules, x, values, mask).items()}
    forbid = rules is not None and rules.consequences == "forbid"
    fixed = consequences_on_fixed(scenario, x, x_cf, mask, hard_mask)
    out["consequence"] = fixed.any(dim=1) & forbid
    return out


def obeys(scenario: Scenario, rules: PlanRules | None, x: Tensor, x_cf: Tensor, mask: Tensor,
          values: Tensor, hard_mask: Tensor | None = None) -> Tensor:
    """(n,) bool: the plans that break no rule."""
    bad = broken(scenario, rules, x, x_cf, mask, values, hard_mask)
    return ~torch.stack(list(bad.values()), dim=1).any(dim=1)


def count_broken(scenario: Scenario, rules: PlanRules | None,
                 records: list[dict[str, dict[str, float]]],
                 stated: list[dict[str, bool]] | None = None) -> dict[str, int]:
    """Plans breaking each rule among stored plan records ({x, x_cf, actions}: feature ->
    model value), ``stated`` per record the person's actionable items (feature -> bool)."""
    if not records:
        return dict.fromkeys(RULES, 0)
    names = scenario.feature_names

    def table(key: str) -> Tensor:
        return torch.tensor([[float(r[key][n]) for n in names] for r in records],
                            dtype=torch.float64)

    x, x_cf = table("x"), table("x_cf")
    mask = torch.tensor([[n in r["actions"] for n in names] for r in records])
    hard = None if stated is None else torch.tensor(
        [[bool(s.get(n, True)) for n in names] for s in stated])
    bad = broken(scenario, rules, x, x_cf, mask, torch.where(mask, x_cf, x), hard)
    return {k: int(v.sum()) for k, v in bad.items()}


def within_rules(scenario: Scenario, rules: PlanRules | None, x: Tensor, mask: Tensor,
                 values: Tensor) -> tuple[Tensor, Tensor]:
    """A proposed action (mask, values) (n, d) as the rules allow it: each value clamped into
    its interval (``search_box``), and an action that then shows no change, or one below the
    display precision, left out of the mask; (mask, values) unchanged without rules."""
    if rules is None:
        return mask, values
    x64 = x.to(torch.float64)
    lo, hi = search_box(scenario, rules, x64)
    values = torch.where(mask.bool(), values.to(torch.float64).clamp(lo, hi), x64)
    bad = action_breaks(scenario, rules, x64, values, mask)
    mask = mask.bool() & ~(bad["no_op"] | bad["below_precision"])
    return mask, torch.where(mask, values, x64)


def toward_edge(scenario: Scenario, rules: PlanRules, x: Tensor, values: Tensor,
                fractions: tuple[float, ...]) -> list[Tensor]:
    """Points along each move x -> values (n, d) model units, spread over its ray up to the
    edge of the rules' interval: with v' the move clamped into ``search_box`` [lo, hi] and

        s* = max{s >= 1 : x + s (v' - x) in [lo, hi]}   (per row; 1 when v' = x),

    the points x + f s* (v' - x), one (n, d) tensor per f in ``fractions`` (f = 1: on the
    edge). Moves longer than the bounds, clamped coordinate by coordinate, all land on the
    same edge; these stay distinct plans inside the bounds, in the move's own direction."""
    x64 = x.to(torch.float64)
    lo, hi = search_box(scenario, rules, x64)
    d = torch.minimum(torch.maximum(values.to(torch.float64), lo), hi) - x64
    inf = torch.full_like(d, torch.inf)
    up = torch.where(d > _TOL, (hi - x64) / d.clamp(min=_TOL), inf)
    down = torch.where(d < -_TOL, (lo - x64) / d.clamp(max=-_TOL), inf)
    s = torch.minimum(up, down).amin(dim=1, keepdim=True)
    s = torch.where(torch.isfinite(s), s, torch.ones_like(s)).clamp(min=1.0)
    return [x64 + (f * s) * d for f in fractions]


def inside_bounds(scenario: Scenario, rules: PlanRules | None, x: Tensor,
                  values: Tensor) -> Tensor:
    """Bool, shape of ``values`` (n, ..., d): candidate action values of person i (a pool's
    donors) inside the rules' bounds B_j(x_i); all True without rules."""
    if rules is None or not rules.bounds:
        return torch.ones_like(values, dtype=torch.bool)
    lo, hi = plan_bounds.box(scenario, rules.bounds, x)
    shape = (x.shape[0],) + (1,) * (values.dim() - 2) + (x.shape[1],)
    lo, hi = lo.reshape(shape), hi.reshape(shape)
    v = values.to(torch.float64)
    tol = _TOL * (1.0 + v.abs())
    return (v >= lo - tol) & (v <= hi + tol)


class GridLimit:
    """For a search grid over ``features``: called with (x (p, d), values (p, K, B)), the
    (p, K, B) bool do-values an action may take under the rules (direction, visible change,
    bounds); ``spread`` lays the grid's values over each person's interval (``search_box``),
    so every bin is a value the rules allow and the bounds' edges are among them."""

    def __init__(self, scenario: Scenario, rules: PlanRules, features: tuple[int, ...]):
        self.scenario, self.rules, self.cols = scenario, rules, list(features)
        self.dirs = rules.tensor()[self.cols]
        self.res = resolutions(scenario)[self.cols]
        self.maps = [scenario.features[j].display for j in features]

    def __call__(self, x: Tensor, values: Tensor) -> Tensor:
        xf = x[:, self.cols].to(torch.float64)[..., None]  # (p, K, 1)
        ok = ~against_direction(self.dirs[None, :, None], values - xf)
        for k, m in enumerate(self.maps):
            dv = torch.as_tensor(np.asarray(m.to_display(values[:, k].numpy()), dtype=float))
            dx = torch.as_tensor(np.asarray(m.to_display(xf[:, k].numpy()), dtype=float))
            no_op, below = invisible(dx, dv, self.res[k])
            ok[:, k] &= ~no_op & ~below
        if self.rules.bounds:
            lo, hi = plan_bounds.box(self.scenario, self.rules.bounds, x)
            lo, hi = lo[:, self.cols, None], hi[:, self.cols, None]
            tol = _TOL * (1.0 + values.abs())
            ok &= (values >= lo - tol) & (values <= hi + tol)
        return ok

    def spread(self, x: Tensor, t: Tensor) -> Tensor:
        """(p, K, B) the grid's values under the rules: B values evenly over each person's
        interval (``search_box``: its edges included; t (B,) in [0, 1]), level codes
        rounded."""
        lo, hi = search_box(self.scenario, self.rules, x)
        lo, hi = lo[:, self.cols, None], hi[:, self.cols, None]
        values = lo + (hi - lo) * t
        level = torch.tensor([m.kind == "categorical" for m in self.maps])[None, :, None]
        return torch.where(level, values.round(), values)


def grid_allowed(scenario: Scenario, rules: PlanRules, features: tuple[int, ...]) -> GridLimit:
    """The rules' limit of a search grid over ``features`` (``GridLimit``)."""
    return GridLimit(scenario, rules, features)


def project_shifts(rules: PlanRules | None, z: Tensor) -> Tensor:
    """The Euclidean projection of shifts z (..., d) onto the direction cone
    {z_j >= 0 where s_j = +1, z_j <= 0 where s_j = -1}: a coordinate clamp (HARE's projection
    onto the actionability set, extended to directions); z itself without rules."""
    if rules is None:
        return z
    dirs = rules.tensor().to(z.device)
    z = torch.where(dirs == 1, z.clamp(min=0.0), z)
    return torch.where(dirs == -1, z.clamp(max=0.0), z)


def snap_shifts(scenario: Scenario, rules: PlanRules | None, x: Tensor, z: Tensor,
                values: Tensor, acted: Tensor) -> Tensor:
    """Shifts z (m, d) with the coordinates whose realized action (``values``, ``acted``)
    would be a no-op or below the display precision set to 0 (no action there); z itself
    without rules."""
    if rules is None:
        return z
    bad = action_breaks(scenario, rules, x, values, acted)
    invisible = bad["no_op"] | bad["below_precision"]
    return torch.where(invisible, torch.zeros_like(z), z)
