"""What a paper reproduction produces: ``Cell``s (ours beside the paper's) and ``Check``s.

A ``TargetResult`` holds:

- ``cells``: per published value, its table and row, the paper's value, ours (the value the
  paper's procedure reports, e.g. iCARMA's best-on-validation seed), the mean and sd over
  seeds, the difference ours - paper and whether it lies within the stated tolerance of
  that value (engine.papers.cell_judging);
- ``checks``: the claims the paper makes about its table (a trend, an ordering), each with
  the figures it was decided on.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from engine.icarma_choices import (
    ACTION_SPACES,
    CALIBRATED_VALIDITY_WEIGHT,
    DEFAULT_MASK_HEAD,
    INTERVENTION,
    MASK_HEADS,
    PAPER_ACTION_SPACE,
    PAPER_VALIDITY_MULTIPLIER,
    VALIDITY_MULTIPLIERS,
)
from engine.papers.cell_judging import summarize, within
from engine.papers.hare.metrics import FAILED_PLANS
from engine.papers.icarma.datasets import paper_dataset, table_rows
from engine.papers.paper_values import target_values
from engine.papers.reproduce_choices import CARMAS_CLAMP, FLOW_CLAMP, REPRODUCE_SCENARIO
from engine.recourse.hare.config import (
    FINAL_ACCEPT,
    GAMMA_SCHEDULES,
    ITERATIONS_READINGS,
    HareConfig,
)
from engine.recourse.icarma.config import KEEP, ICarmaConfig
from engine.recourse.icarma.networks import check_shift_bounds
from engine.synthetic.hare_truth import GROUND_TRUTHS, PAPER_GROUND_TRUTH, check_ground_truth

Progress = Callable[[str], None]
TARGET_NAMES: tuple[str, ...] = (
    "icarma-table1",
    "icarma-table2",
    "icarma-table3",
    "icarma-fairness",
    "hare-budget",
    "hare-iterations",
    "hare-calibration",
    "hare-scale",
    "hare-table1",
    "hare-table2",
    "hare-table3",
    "hare-table4",
)



@dataclass(frozen=True)
class ReproduceConfig:
    """How to run a target: ``scenario`` (default ``REPRODUCE_SCENARIO``), ``seeds`` (iCARMA
    models / HARE seeds; None = the paper's), ``fast`` (module docstring), ``n`` (first n
    rejected applicants; None = all). iCARMA's hinge: ``validity_multiplier`` lagrangian
    (CARMA's multiplier, the paper's pipeline; the default; no weight), lagrangian-acting (the
    multiplier updated on the draws whose sampled mask acts) or fixed (``validity_weight``,
    None = CALIBRATED_VALIDITY_WEIGHT; engine.recourse.icarma.config). Variants of the paper's
    configuration are cached under their own model names: lagrangian-acting, the fixed
    weight, ``keep`` best (each run keeps its lowest validation-loss epoch instead of its
    last), ``mask_head`` carma (CARMA's two-logit mask head, deployed as its code does),
    ``action_space`` intervention (do-values instead of the paper configuration's clamped
    shifts of the flow's noise, CARMA's code's action) and, under latent-shift, ``shift_bounds``
    the clamp: carma (the default: CARMA's rule under CARMA's own flow,
    ``CARMA_SHIFT_BOUNDS``), flow (the rule under our flow) or "LO,HI". HARE's state machine:
    ``gamma_schedule`` paper (gamma = 1 every iteration, the default) or halve, and
    ``final_accept`` ask (the default) or skip, ``keep_incumbent`` on (the default, the
    paper's released code) or off (Algorithm 4 as written) (engine.recourse.hare.state),
    ``iterations_reading`` text (the default) or code (T as the paper's released code runs
    it: rounds of T new candidates, no accept question; engine.recourse.hare.config); its
    simulated people's ideals ``ground_truth`` perturbation (the paper's, the default) or rays
    (engine.synthetic.hare_truth); ``failed_plans`` no-plan (the default) or dropped
    (engine.papers.hare.metrics). ``HARE_PRESETS`` name the released code's and the
    text's combinations of these (``preset``).
    Bad values raise ValueError with a message that names the option (the CLI shows it).

    >>> from engine.papers import ReproduceConfig
    >>> config = ReproduceConfig("icarma-table1", fast=True)
    >>> config.scenario, config.validity_multiplier, config.action_space
    ('loan-carma-reference', 'lagrangian', 'latent-shift')
    >>> ReproduceConfig("icarma-table1", keep="best-ever")
    Traceback (most recent call last):
    ...
    ValueError: ...
    """

    target: str
    scenario: str = REPRODUCE_SCENARIO
    seeds: int | None = None
    fast: bool = False
    n: int | None = None
    quick: bool = False  # reduced artifacts (tests only)
    validity_multiplier: str = PAPER_VALIDITY_MULTIPLIER  # iCARMA's hinge weight (docstring)
    validity_weight: float | None = None  # under "fixed"; None = CALIBRATED_VALIDITY_WEIGHT
    keep: str = "last"  # iCARMA: each run's final state (the paper, as CARMA's code) or "best"
    # iCARMA's mask network output and what its action network proposes
    # (engine.recourse.icarma.networks)
    mask_head: str = DEFAULT_MASK_HEAD
    action_space: str = PAPER_ACTION_SPACE
    shift_bounds: str = CARMAS_CLAMP  # latent-shift's clamp: carma | flow | "LO,HI" (bounds())
    gamma_schedule: str = "paper"  # HARE's step size: paper | halve (engine.recourse.hare.state)
    final_accept: str = "ask"  # HARE's accept question after the last tournament: ask | skip
    # HARE's incumbent as a contender of every tournament (the released code's;
    # engine.recourse.hare.state)
    keep_incumbent: bool = HareConfig.keep_incumbent
    # what HARE's T means: the paper's text | its released code (engine.recourse.hare.config)
    iterations_reading: str = HareConfig.iterations_reading
    # HARE's simulated people's ideals: perturbation (the paper's) | rays (engine.synthetic.hare_truth)
    ground_truth: str = PAPER_GROUND_TRUTH
    # a person whose plan failed: no-plan (x' = x) | dropped (engine.papers.hare.metrics)
    failed_plans: str = FAILED_PLANS[0]

    @property
    def weight(self) -> float | None:
        """The hinge's fixed weight (None under a multiplier)."""
        if self.validity_multiplier != "fixed":
            return None
        return (CALIBRATED_VALIDITY_WEIGHT if self.validity_weight is None
                else self.validity_weight)

    def paper_bounds(self) -> tuple[float, float] | None:
        """The paper configuration's clamp of latent shifts on the scenario's data set
        (engine.papers.icarma.datasets): CARMA's on Loan; on GMSC, for which CARMA published
        no flow, CARMA's rule under our flow (None)."""
        return ICarmaConfig.paper(dataset=paper_dataset(self.scenario)).shift_bounds

    def bounds(self) -> tuple[float, float] | None:
        """``shift_bounds`` as ICarmaConfig takes them (None: the rule under our flow;
        ``carma``: the paper configuration's, ``paper_bounds``)."""
        if self.shift_bounds == CARMAS_CLAMP:
            return self.paper_bounds()
        if self.shift_bounds == FLOW_CLAMP:
            return None
        try:
            lo, hi = (float(v) for v in self.shift_bounds.split(","))
        except ValueError:
            raise ValueError(f"shift bounds must be carma, flow or LO,HI (two numbers), got "
                             f"{self.shift_bounds!r}") from None
        return check_shift_bounds((lo, hi))

    def __post_init__(self) -> None:
        if self.target not in TARGET_NAMES:
            raise ValueError(
                f"unknown target {self.target!r}; expected one of {', '.join(TARGET_NAMES)}"
            )
        if self.validity_multiplier not in VALIDITY_MULTIPLIERS:
            raise ValueError(f"validity multiplier must be one of "
                             f"{', '.join(VALIDITY_MULTIPLIERS)}, got "
                             f"{self.validity_multiplier!r}")
        if self.validity_weight is not None:
            if not self.validity_weight > 0:
                raise ValueError(f"validity weight must be positive, got {self.validity_weight}")
            if self.validity_multiplier != "fixed":
                raise ValueError("a validity weight applies to validity multiplier fixed only")
        if self.keep not in KEEP:
            raise ValueError(f"keep must be one of {', '.join(KEEP)}, got {self.keep!r}")
        if self.mask_head not in MASK_HEADS:
            raise ValueError(f"mask head must be one of {', '.join(MASK_HEADS)}, got "
                             f"{self.mask_head!r}")
        if self.action_space not in ACTION_SPACES:
            raise ValueError(f"action space must be one of {', '.join(ACTION_SPACES)}, got "
                             f"{self.action_space!r}")
        self.bounds()  # raises on a malformed value
        if self.gamma_schedule not in GAMMA_SCHEDULES:
            raise ValueError(f"gamma schedule must be one of {', '.join(GAMMA_SCHEDULES)}, got "
                             f"{self.gamma_schedule!r}")
        check_ground_truth(self.ground_truth)
        if self.final_accept not in FINAL_ACCEPT:
            raise ValueError(f"final accept must be one of {', '.join(FINAL_ACCEPT)}, got "
                             f"{self.final_accept!r}")
        if self.iterations_reading not in ITERATIONS_READINGS:
            raise ValueError(f"iterations reading must be one of "
                             f"{', '.join(ITERATIONS_READINGS)}, got {self.iterations_reading!r}")
        if self.failed_plans not in FAILED_PLANS:
            raise ValueError(f"failed plans must be one of {', '.join(FAILED_PLANS)}, got "
                             f"{self.failed_plans!r}")
        if self.shift_bounds != CARMAS_CLAMP and self.action_space == INTERVENTION:
            raise ValueError("shift bounds apply to action space latent-shift only")
        if self.seeds is not None and self.seeds < 1:
            raise ValueError(f"seeds must be >= 1, got {self.seeds}")
        if self.n is not None and self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if self.target.startswith("icarma-table"):
            table_rows(target_values(self.target), self.scenario)  # raises: no such rows


# The HARE options every HARE target's result records in its config (a stored run without one
# of them, or with a value other than today's default that its command does not name, is
# stale: engine.papers.stored_runs)
HARE_OPTIONS: tuple[str, ...] = (
    "keep_incumbent", "gamma_schedule", "final_accept", "iterations_reading", "ground_truth",
    "failed_plans")

# The two named HARE configurations (``reproduce --as-released`` / ``--as-written``): the
# options each sets. as-released: the paper's released code (rahulvigneswaran/HARE at commit
# 6719b0ef6dc50300166e812ca84068794eeaadf5, src/main.py _generate_binsearch_cf_recursive:
# K // T rounds of T new candidates, no accept question; src/user.py
# generate_candidate_counterfactuals: the current plan added as a candidate; src/utils.py
# gt_cost: people whose plan failed dropped from GTP / GTD). as-written: Algorithm 4 of the
# paper's text (new candidates only, T rounds of B // T questions with the accept question,
# a failed plan shown as no change).
HARE_PRESETS: dict[str, dict[str, Any]] = {
    "as-released": {"keep_incumbent": True, "iterations_reading": "code",
                    "final_accept": "ask", "failed_plans": "dropped"},
    "as-written": {"keep_incumbent": False, "iterations_reading": "text",
                   "final_accept": "ask", "failed_plans": "no-plan"},
}


# The method options of ``reproduce`` as the reproductions' index page lists them, generated
# with their defaults from ``ReproduceConfig``: option -> (what it sets, its choices).
OPTION_CHOICES: dict[str, tuple[str, tuple[str, ...]]] = {
    "validity_multiplier": ("iCARMA's hinge weight", VALIDITY_MULTIPLIERS),
    "keep": ("iCARMA: the state each training run keeps", KEEP),
    "mask_head": ("iCARMA's mask network output", MASK_HEADS),
    "action_space": ("what iCARMA's action network proposes", ACTION_SPACES),
    "shift_bounds": ("the clamp of iCARMA's latent shifts", (CARMAS_CLAMP, FLOW_CLAMP, "LO,HI")),
    "keep_incumbent": ("HARE: the current plan competes in every tournament (true: the "
                       "released code; false: Algorithm 4's text)", ("true", "false")),
    "gamma_schedule": ("HARE's candidate step", GAMMA_SCHEDULES),
    "final_accept": ("HARE's accept question after the last tournament", FINAL_ACCEPT),
    "iterations_reading": ("what HARE's T means (text: Algorithm 4; code: the released "
                           "code's rounds of T new candidates, no accept question)",
                           ITERATIONS_READINGS),
    "ground_truth": ("HARE's simulated people's ideal plans", GROUND_TRUTHS),
    "failed_plans": ("HARE tables: a person whose plan failed, scored as no change (no-plan) "
                     "or dropped from GTP / GTD as the released code does", FAILED_PLANS),
}


def preset(name: str, **options: Any) -> dict[str, Any]:
    """The HARE options of the named configuration (``HARE_PRESETS``) for a
    ``ReproduceConfig``; ValueError naming the presets for another name, or when
    ``options`` (those given besides it) set one of them otherwise."""
    if name not in HARE_PRESETS:
        raise ValueError(f"HARE configuration must be one of {', '.join(HARE_PRESETS)}, got "
                         f"{name!r}")
    clash = [k for k, v in options.items() if k in HARE_PRESETS[name]
             and v != HARE_PRESETS[name][k]]
    if clash:
        raise ValueError(f"--{name} sets {', '.join(clash)}; do not give "
                         f"{'it' if len(clash) == 1 else 'them'} as well")
    return dict(HARE_PRESETS[name])


def recorded_options(config: ReproduceConfig) -> dict[str, Any]:
    """The HARE options of a run, as its result's config records them."""
    return {name: getattr(config, name) for name in HARE_OPTIONS}


@dataclass
class Cell:
    """One published value and ours."""

    table: str
    row: str
    method: str
    metric: str
    paper: float | None
    ours: float | None
    ours_mean: float | None = None
    ours_sd: float | None = None
    seeds: int = 1
    tolerance: float | None = None
    within: bool | None = None
    paper_range: tuple[float, float] | None = None
    note: str = ""
    setting: dict[str, Any] = field(default_factory=dict)

    @property
    def diff(self) -> float | None:
        if self.paper is None or self.ours is None:
            return None
        return self.ours - self.paper

    def judge(self) -> Cell:
        """Set ``within``: |ours - paper| <= tolerance (engine.papers.cell_judging; a
        ``paper_range`` is reported beside the cell, not used to judge it)."""
        self.within = within(self.ours, self.paper, self.tolerance)
        return self

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["diff"] = self.diff
        out["paper_range"] = list(self.paper_range) if self.paper_range else None
        return {k: _plain(v) for k, v in out.items()}


@dataclass
class Check:
    """A claim of the paper about its table, decided on our figures."""

    claim: str
    passed: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"claim": self.claim, "passed": bool(self.passed), "detail": self.detail}


@dataclass
class TargetResult:
    target: str
    title: str
    table: str
    paper: dict[str, str]
    config: dict[str, Any]
    cells: list[Cell]
    checks: list[Check]
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cells = [c.to_dict() for c in self.cells]
        counts = summarize(cells)
        return {
            "target": self.target,
            "title": self.title,
            "table": self.table,
            "paper": self.paper,
            "config": self.config,
            "seconds": self.seconds,
            "cells": cells,
            "checks": [c.to_dict() for c in self.checks],
            "summary": {
                "cells": len(self.cells),
                "within": counts["within"],
                "judged": counts["judged"],
                "per_metric": counts["per_metric"],
                "checks_passed": sum(c.passed for c in self.checks),
                "checks": len(self.checks),
            },
            "notes": self.notes,
            **({"extras": self.extras} if self.extras else {}),
        }


def seed_stats(values: list[float]) -> tuple[float | None, float | None]:
    """(mean, sd with ddof 1; 0 for one value) of finite values, None when there are none."""
    arr = np.array([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if arr.size == 0:
        return None, None
    return float(arr.mean()), float(arr.std(ddof=1)) if arr.size > 1 else 0.0


def _plain(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def describe(target: str) -> tuple[str, str]:
    """(title, table) of a target, from the paper values."""
    v = target_values(target)
    return v["title"], v["table"]
