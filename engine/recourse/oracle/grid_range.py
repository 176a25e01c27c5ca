"""The range the causal Oracle's grid spans (engine.recourse.oracle.grid).

``rejected``, the min / max over the training split's people the decision model rejects, is
the papers' "minimum and maximum from the training dataset": CARMA's reference Oracle (``run_brute_force_oracle.py``) filters its training data
to the rejected (``filter_datasets_by_label``) before it takes their range. ``training``, over
the whole training split (the scenario's ``bounds``), is ours. On Loan the rejected range
ends lower where approval comes from (income max 3.7 instead of 10.5, savings 12.3 instead of
23.4). On ``loan-carma-reference`` with ``factual`` bins, the mean over ten profile draws
of Table 1's rows (all / 3 / 2 / 1 / random features; ``reproduce icarma-table1``) is 0.954
/ 0.813 / 0.542 / 0.231 / 0.627 with the rejected range (paper 0.959 / 0.796 / 0.539 / 0.22
/ 0.637) against 0.938 / 0.790 / 0.519 / 0.221 / 0.610 with the training range; without the
plausibility constraint, one feature (three draws): 0.873 against the paper's 0.876 (its
Table 6), 0.967 with the training range (one draw). ``CausalOracle``'s default follows the
layout (``DEFAULT_GRID_RANGE``): the papers' layouts take the rejected range, ``shared`` the
training one.

Cost. The range also normalizes the Oracle's objective: CARMA's reference Oracle
(``measure_cost``) divides each action by the feature's range over the same filtered
training data, so ``cost_ranges`` gives M_j = hi_j - lo_j over the rejected people for the
``rejected`` range and the scenario's ``ranges`` (those of every other method and of the
reported cost) for ``training``. Only which plan is cheapest changes, never validity. On
Table 2 (rankings; the Oracle's hap as engine.papers.recourse_benchmark.hap_paper counts it, mean
over three profile draws) the soft rows move from 0.752 / 0.542 / 0.491 / 0.467 to 0.642 /
0.496 / 0.460 / 0.436 (constant / concave / linear / convex; paper 0.614 / 0.492 / 0.443 /
0.387), the hard + soft rows from 0.785 / 0.609 / 0.585 / 0.568 to 0.709 / 0.591 / 0.568 /
0.552 (paper 0.694 / 0.607 / 0.596 / 0.583). The reported cost of every method, the
Oracle's included, stays over the scenario's ranges.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from engine.decision import rejected_rows
from engine.scenarios.base import Scenario

GRID_RANGES: tuple[str, ...] = ("rejected", "training")
# the range a layout takes when none is given: the papers' layouts, the papers' range
DEFAULT_GRID_RANGE: dict[str, str] = {"factual": "rejected", "carma": "rejected",
                                      "shared": "training"}


def grid_bounds(scenario: Scenario, classifier: Any, grid_range: str) -> tuple[Tensor, Tensor]:
    """(lo, hi) float64 over all d features: the min / max over the training split's people
    ``classifier`` rejects (``rejected``) or over the whole split (``training``)."""
    if grid_range not in GRID_RANGES:
        raise ValueError(f"unknown Oracle grid range {grid_range!r}; expected one of "
                         f"{', '.join(GRID_RANGES)}")
    if grid_range == "training":
        lo, hi = scenario.bounds
        return lo.to(torch.float64).clone(), hi.to(torch.float64).clone()
    rows = torch.from_numpy(rejected_rows(scenario, classifier, "train"))
    if len(rows) == 0:
        raise ValueError("the decision model rejects nobody in the training split: no "
                         "rejected range for the Oracle's grid (use the training range)")
    x = scenario.dataset["train"][0][rows].to(torch.float64)
    return x.min(dim=0).values, x.max(dim=0).values


def cost_ranges(scenario: Scenario, bounds: tuple[Tensor, Tensor], grid_range: str) -> Tensor:
    """(d,) float64 M_j of the Oracle's objective (module docstring): for ``rejected`` the
    grid's ``bounds`` (``grid_bounds``), hi - lo, on the globally actionable features, the
    scenario's range where that is 0 (a feature constant among the rejected); else the
    scenario's ``ranges``."""
    ranges = scenario.ranges.to(torch.float64).clone()
    if grid_range == "rejected":
        idx = list(scenario.actionable)
        spread = (bounds[1] - bounds[0]).to(torch.float64)[idx]
        ranges[idx] = torch.where(spread > 0, spread, ranges[idx])
    return ranges
