"""The causal Oracle: exact recourse by search over a grid of interventions on the SCM.

``method`` (the catalogue method), ``grid`` (the action grid and its per-person tables) and
``grid_range`` (the range the grid spans and the cost normalization).
"""

from __future__ import annotations

from engine.exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "engine.recourse.oracle.method": ("CausalOracle",),
    "engine.recourse.oracle.grid": ("GRIDS", "ActionGrid"),
    "engine.recourse.oracle.grid_range": ("cost_ranges", "grid_bounds"),
})
