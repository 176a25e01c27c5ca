"""Plausible-change bounds: how far one plan may move each feature, and the range it stays in.

With d_j the unrounded display map of feature j (engine.scenarios.base.DisplayMap: dollars,
months, level codes) and x_j the person's value, a plan's action a_j obeys the bounds when

    d_j(a_j) in B_j(x) = [L_j, U_j]  intersected with  [d_j(x_j) - t_j, d_j(x_j) + t_j],
    t_j(x) = max(rho_j |d_j(x_j)|, alpha_j)

- [L_j, U_j]: the range people in the scenario's population have (the rule's own ``low`` /
  ``high`` in display units, else ``Scenario.display_bounds``: the scenario's stated display
  min/max, or the training split's 0.1% / 99.9% quantiles; a level feature: its levels);
- t_j: the largest step, relative (rho_j of the current value) or absolute (alpha_j display
  units; levels of an ordinal feature), whichever allows more; a limit left out counts 0,
  both left out: no step limit.

Defaults (a feature whose scenario states no ``change``, ``DEFAULT_RELATIVE`` and
``DEFAULT_SPREAD``): an amount may move by half of itself or a tenth of the population's
range (so an amount near 0, savings of $0, may still grow), and at least by one display
resolution (a count shown in whole numbers, 1 to 4, may move by 1), an ordinal item by one
level; a
binary or categorical item only within its levels. A scenario states its own per feature
(``change: {relative, absolute}`` or ``none: true``), a protocol overrides them
(``plans.bounds``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from engine.scenarios.base import FeatureSpec, Scenario

DEFAULT_RELATIVE = 0.5  # an amount may move by half of its current value ...
DEFAULT_SPREAD = 0.1  # ... or a tenth of the range people have, whichever is larger
DEFAULT_LEVELS = 1.0  # an ordinal item: one level
_TOL = 1e-9


@dataclass(frozen=True)
class Bound:
    """One feature's bounds in display units: the largest step (``relative`` x |current|
    or ``absolute``, whichever is larger; both None: no step limit) and the range
    [``low``, ``high``] (None: the scenario's display bounds)."""

    relative: float | None = None
    absolute: float | None = None
    low: float | None = None
    high: float | None = None

    def describe(self, feature: FeatureSpec, population: tuple[float, float]) -> str:
        """The bound in words, for ``validate`` (``population``: the scenario's range in
        display units, ``population_range``)."""
        unit = "level(s)" if feature.kind == "ordinal" else feature.display.unit
        parts = []
        if self.relative is not None:
            parts.append(f"{self.relative:g} x current")
        if self.absolute is not None:
            parts.append(f"{self.absolute:g} {unit}".strip())
        step = ("at most " + " or ".join(parts) + " per plan") if parts else "no step limit"
        lo = population[0] if self.low is None else self.low
        hi = population[1] if self.high is None else self.high
        where = "the population's" if self.low is None and self.high is None else "stated"
        if feature.display.kind == "categorical":
            levels = feature.levels
            return f"{step}; range {levels[int(lo)]!r} .. {levels[int(hi)]!r} ({where})"
        dec, unit = feature.display.decimals, feature.display.unit
        span = f"{lo:,.{dec}f} .. {hi:,.{dec}f}" + (f" {unit}" if unit else "")
        return f"{step}; range {span} ({where})"


def default_bound(scenario: Scenario, j: int) -> Bound:
    """Feature j's bound as its scenario states it (``max_change``), else the default
    (module docstring)."""
    f = scenario.features[j]
    if f.max_change is not None:
        return Bound(*f.max_change)
    if f.kind == "ordinal":
        return Bound(absolute=DEFAULT_LEVELS)
    if f.kind == "continuous":  # never below one resolution: the item can always move
        lo, hi = population_range(scenario, j)
        spread = DEFAULT_SPREAD * float(hi - lo)
        return Bound(relative=DEFAULT_RELATIVE, absolute=max(spread, f.resolution))
    return Bound()


def population_range(scenario: Scenario, j: int) -> tuple[float, float]:
    """Feature j's range [L_j, U_j] in display units: ``Scenario.display_bounds``."""
    m = scenario.features[j].display
    lo, hi = scenario.display_bounds[:, j].to(torch.float64).tolist()
    return float(m.to_display(lo)), float(m.to_display(hi))


def box(scenario: Scenario, bounds: tuple[Bound, ...], x: Tensor) -> tuple[Tensor, Tensor]:
    """(lo, hi), each shaped like x (n, d): the model-unit interval B_j(x) of every feature
    (module docstring); lo > hi where it is empty."""
    x64 = x.detach().to(torch.float64)
    lo, hi = torch.empty_like(x64), torch.empty_like(x64)
    for j, (f, b) in enumerate(zip(scenario.features, bounds, strict=True)):
        m = f.display
        pop_lo, pop_hi = population_range(scenario, j)
        low = pop_lo if b.low is None else b.low
        high = pop_hi if b.high is None else b.high
        dx = np.asarray(m.to_display(x64[:, j].numpy()), dtype=float)
        if b.relative is None and b.absolute is None:
            step = np.full_like(dx, np.inf)
        else:
            step = np.maximum((b.relative or 0.0) * np.abs(dx), b.absolute or 0.0)
        d_lo, d_hi = np.maximum(low, dx - step), np.minimum(high, dx + step)
        if m.kind == "categorical":  # level codes: whole levels inside the interval
            d_lo, d_hi = np.ceil(d_lo - _TOL), np.floor(d_hi + _TOL)
        empty = d_lo > d_hi
        d_lo, d_hi = np.where(empty, high, d_lo), np.where(empty, low, d_hi)
        lo[:, j] = torch.as_tensor(_model(m, d_lo))
        hi[:, j] = torch.as_tensor(_model(m, d_hi))
    return lo, hi


def _model(m, v: np.ndarray) -> np.ndarray:
    """Display values back to model units (level codes are their own display values)."""
    if m.kind == "categorical":
        return v.astype(float)
    if m.kind == "exp":  # a bound at or below 0 display units: no lower limit in model units
        safe = np.where(v > 0, v, 1.0)
        return np.where(v > 0, np.log(safe / m.scale) / m.rate, -np.inf)
    return np.asarray(m.from_display(v), dtype=float)


def outside(scenario: Scenario, bounds: tuple[Bound, ...], x: Tensor, values: Tensor,
            mask: Tensor) -> Tensor:
    """(n, d) bool: actions (``mask``) whose value leaves the bounds B_j(x); all False
    without bounds."""
    if not bounds:
        return torch.zeros_like(mask, dtype=torch.bool)
    lo, hi = box(scenario, bounds, x)
    v = values.detach().to(torch.float64)
    tol = _TOL * (1.0 + v.abs())
    return mask.bool() & ((v < lo - tol) | (v > hi + tol))


def search_box(scenario: Scenario, bounds: tuple[Bound, ...], directions: Tensor,
               x: Tensor) -> tuple[Tensor, Tensor]:
    """(lo, hi) (n, d) model units: the interval an action on each feature may take in a
    search, B_j(x) with the allowed direction folded in and an empty interval collapsed onto
    x_j (no action possible there).

    Because d_j is monotone increasing, B_j maps back to a model-unit interval
    [d_j^{-1}(lo), d_j^{-1}(hi)] (``box``); folded with the allowed direction s_j (s_j = +1: a_j
    >= x_j, -1: a_j <= x_j) it is the interval a search clamps its actions into
    (``search_box``): the shift methods' realization (engine.recourse.shift_actions.realize:
    Wachter, Growing Spheres, HARE's candidates), the targets of FACE, CCHVAE, CLUE and CRUDS
    (engine.recourse.targets.realize_targets), the Oracle's grid (values clipped into it) and the
    pool's donors. An empty interval (a person whose own value lies outside the range, further
    than one step) leaves the feature as it is.
    """
    x64 = x.detach().to(torch.float64)
    if bounds:
        lo, hi = box(scenario, bounds, x64)
    else:
        lo = torch.full_like(x64, -torch.inf)
        hi = torch.full_like(x64, torch.inf)
    dirs = directions.to(x64.device)
    lo = torch.where(dirs == 1, torch.maximum(lo, x64), lo)
    hi = torch.where(dirs == -1, torch.minimum(hi, x64), hi)
    empty = lo > hi
    return torch.where(empty, x64, lo), torch.where(empty, x64, hi)
