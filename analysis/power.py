"""Simulation-based power: how likely is a study of N participants to detect an effect?

As simr does for lme4 models, but for a whole protocol: for each sample size N and each
simulation s = 0..S-1, simulate the protocol with N synthetic participants (whose behaviour,
the truth, the protocol's simulation block sets), fit the analysis model the real study will
use (the ordinal model of analysis.models on the effect's outcome and the study's distance;
analysis.refit compiles it once) and decide whether the effect was detected. Power at N is
the share of studies that detect it; its Monte Carlo 95% interval is Clopper-Pearson's
(exact binomial). With the effect set to zero in the synthetic behaviour (``null``), the
share is the false-positive rate. Study (N, s) has the same seed in both runs, so the two
differ only in the effect (common random numbers).

**Effects** are named ``<outcome>.<term>`` after what the model estimates (``effect_names``):
"""

from __future__ import annotations

import functools
import os
import socket
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from analysis.models import OUTCOMES, ModelData, prepare, smooth_draws
from analysis.results import GRID
from engine.metric_names import DISTANCES

RULES: tuple[str, ...] = ("band", "contrast")
LEVEL = 0.95  # credible level of every detection rule and of the Monte Carlo intervals
RHAT_FLAG = 1.05  # fits above it are counted (and reported), not dropped
# Which parameter of a synthetic outcome model the null sets to 0 (engine.synthetic).
NULL_PARAMETER = {"distance": "drop", "satisfaction": "satisfaction", "violation": "violation"}


class PowerInputError(ValueError):
    """The power analysis cannot run as asked (unknown effect, too few participants, ...).

    >>> from analysis import PowerInputError
    >>> from analysis.power import effects, parse_effect
    >>> try:
    ...     parse_effect("acceptance.colour", effects(["a", "b"], []))
    ... except PowerInputError as e:
    ...     print(str(e).split(";")[0])
    unknown effect 'acceptance.colour'
    """


@dataclass(frozen=True)
class Effect:
    """One effect of the analysis model (module docstring).

    - ``<outcome>.distance``, a *smooth* effect: the smooth f of the distance. ``band`` (default)
      detects it when the simultaneous 95% credible band of f excludes 0 somewhere in the stated
      distance range [lo, hi] (default: every distance the study observed). f is centred (mean
      0 over the data), so a band away from 0 means ratings change with distance. The band is
      m(d) +- q sd(d) over a grid of 60 distances, m and sd the posterior mean and sd of f(d)
      and q the 95% quantile over draws of max_d |f(d) - m(d)| / sd(d): it holds f everywhere at
      once with 95% probability, so a flat truth is declared non-flat in about 5% of studies
      (a pointwise band, which leaves 0 at some of 60 distances far more often, would not).
      ``contrast`` detects it when the 95% interval of f(hi) - f(lo) excludes 0. Both report
      f(hi) - f(lo) as the estimate. Null: the outcome's distance curve is flat (``drop`` 0).
    - ``<outcome>.satisfaction``, ``<outcome>.violation``: *coefficient* effects (beta of the
      term; present when the protocol elicits constraints), detected when the central 95%
      posterior interval excludes 0. Null: the synthetic coefficient is 0.
    - ``<outcome>.arm.<arm>-<reference>``: the arm contrast gamma_arm - gamma_reference (the
      model's reference is the first arm in sorted order), same rule. Synthetic participants
      have no arm term (arms differ only through their plans, which the model adjusts for), so
      its detections are false positives and it has no separate null run.
    """

    name: str
    outcome: str
    term: str  # distance | satisfaction | violation | arm
    arm: str | None = None
    reference: str | None = None

    @property
    def smooth(self) -> bool:
        return self.term == "distance"

    @property
    def null_parameter(self) -> str | None:
        """The synthetic outcome model's parameter a null run sets to 0 (None: arm)."""
        return NULL_PARAMETER.get(self.term)


def effects(arms: Sequence[str], terms: Sequence[str]) -> dict[str, Effect]:
    """Every effect of a model with these arms and satisfaction / violation ``terms``.

    >>> from analysis import effects
    >>> sorted(effects(["oracle", "icarma"], ["violation"]))
    ['acceptance.arm.oracle-icarma', 'acceptance.distance', 'acceptance.violation', 'action.arm.oracle-icarma', 'action.distance', 'action.violation']
    """
    out: dict[str, Effect] = {}
    ref, *others = sorted(arms)
    for outcome in OUTCOMES:
        for term in ("distance", *(t for t in ("satisfaction", "violation") if t in terms)):
            out[f"{outcome}.{term}"] = Effect(f"{outcome}.{term}", outcome, term)
        for arm in others:
            name = f"{outcome}.arm.{arm}-{ref}"
            out[name] = Effect(name, outcome, "arm", arm, ref)
    return out


def parse_effect(name: str, available: dict[str, Effect]) -> Effect:
    if name not in available:
        raise PowerInputError(f"unknown effect {name!r}; this protocol's model estimates: "
                              f"{', '.join(available)}")
    return available[name]


@dataclass(frozen=True)
class PowerSpec:
    """What each simulated study is asked: the effect, how it counts as detected, the
    model's distance and the sampler.

    >>> from analysis import PowerSpec, effects
    >>> spec = PowerSpec(effects(["a", "b"], [])["action.arm.b-a"])
    >>> spec.effect.term, spec.effect.arm, spec.rule, spec.distance
    ('arm', 'b', 'band', 'l1_profile')
    """

    effect: Effect
    distance: str = "l1_profile"
    rule: str = "band"
    distance_range: tuple[float, float] | None = None
    sampler: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise PowerInputError(f"unknown rule {self.rule!r}; expected one of "
                                  f"{', '.join(RULES)}")
        if self.distance not in DISTANCES:
            raise PowerInputError(f"unknown distance {self.distance!r}; expected one of "
                                  f"{', '.join(DISTANCES)}")
        r = self.distance_range
        if r is not None and not (len(r) == 2 and np.isfinite(r).all() and r[0] < r[1]):
            raise PowerInputError(f"a distance range is two increasing numbers lo,hi; got {r}")

    def describe(self) -> dict[str, Any]:
        return {"effect": self.effect.name, "distance": self.distance, "rule": self.rule,
                "distance_range": self.distance_range, "sampler": self.sampler}


@dataclass(frozen=True)
class PowerTask:
    """One simulated study: N participants, simulation number, null or effect, its seed."""

    participants: int
    sim: int
    null: bool
    seed: int

    @property
    def key(self) -> str:
        return f"{'null' if self.null else 'effect'}-{self.participants}-{self.sim}"


def plan_tasks(participants: Sequence[int], sims: int, *, null: bool, seed: int,
               min_participants: int = 2) -> list[PowerTask]:
    """The tasks of a run, simulation-major (every N of simulation 0 first, so an
    interrupted run has every N at about the same count). The seed of study (N, s) is
    drawn from (seed, N, s): the same in the effect and the null run."""
    if sims < 1:
        raise PowerInputError(f"--sims must be at least 1, got {sims}")
    if not participants:
        raise PowerInputError("give at least one sample size")
    small = [n for n in participants if n < min_participants]
    if small:
        raise PowerInputError(f"sample size {small[0]} is smaller than the {min_participants} "
                              "participants a study needs here (at least 2, and one per arm)")
    sizes = sorted(set(participants))
    return [PowerTask(n, s, null, study_seed(seed, n, s)) for s in range(sims) for n in sizes]


def study_seed(seed: int, participants: int, sim: int) -> int:
    return int(np.random.SeedSequence([seed, participants, sim]).generate_state(1)[0])


@dataclass(frozen=True)
class Decision:
    detected: bool
    estimate: float
    lo: float
    hi: float


def detect(spec: PowerSpec, data: ModelData, posterior: Any) -> Decision:
    """Was ``spec.effect`` detected in this fit (module docstring)? ``posterior``: the
    InferenceData's posterior group."""
    q = [(1 - LEVEL) / 2, 1 - (1 - LEVEL) / 2]
    effect = spec.effect
    if effect.smooth:
        return _smooth_decision(spec, data, _draws(posterior["delta_f"]))
    if effect.term == "arm":
        if "gamma" not in posterior:
            raise PowerInputError(f"{effect.name}: the simulated study has only one arm")
        draws = _draws(posterior["gamma"].sel(arm=effect.arm)) - _draws(
            posterior["gamma"].sel(arm=effect.reference))
    else:
        if "beta" not in posterior or effect.term not in data.terms:
            raise PowerInputError(f"{effect.name}: the simulated study's {effect.term} is "
                                  "constant or not recorded, so the model has no such term")
        draws = _draws(posterior["beta"].sel(term=effect.term))
    lo, hi = np.quantile(draws, q)
    return Decision(bool(lo > 0 or hi < 0), float(draws.mean()), float(lo), float(hi))


def _smooth_decision(spec: PowerSpec, data: ModelData, delta: np.ndarray) -> Decision:
    d_min, d_max = float(data.d.min()), float(data.d.max())
    lo_d, hi_d = spec.distance_range or (d_min, d_max)
    lo_d, hi_d = max(lo_d, d_min), min(hi_d, d_max)
    if not lo_d < hi_d:
        raise PowerInputError(f"no observed distance in the range {spec.distance_range} "
                              f"(this study's {spec.distance} spans {d_min:.3g}..{d_max:.3g})")
    grid = np.linspace(lo_d, hi_d, GRID)
    f = smooth_draws(data, delta, grid)  # (draws, grid)
    contrast = f[:, -1] - f[:, 0]
    c_lo, c_hi = np.quantile(contrast, [(1 - LEVEL) / 2, 1 - (1 - LEVEL) / 2])
    if spec.rule == "contrast":
        detected = c_lo > 0 or c_hi < 0
    else:
        m, sd = f.mean(axis=0), f.std(axis=0)
        sd = np.where(sd > 0, sd, np.inf)
        q = np.quantile(np.max(np.abs(f - m) / sd, axis=1), LEVEL)
        detected = bool(np.any(np.abs(m) > q * sd))
    return Decision(bool(detected), float(contrast.mean()), float(c_lo), float(c_hi))


def _draws(da: Any) -> np.ndarray:
    """Draws of a posterior variable with chain and draw stacked first: (draws, ...)."""
    values = np.asarray(da.values)
    return values.reshape(-1, *values.shape[2:])


def evaluate(ratings: pd.DataFrame, spec: PowerSpec, task: PowerTask,
             refitter: Any) -> dict[str, Any]:
    """Fit one simulated study's ratings and decide: the task's result record."""
    data = prepare(ratings, spec.effect.outcome, spec.distance)
    fit = refitter.fit(data, seed=task.seed, pad_participants=task.participants)
    decision = detect(spec, data, fit.idata.posterior)
    diag = fit.diagnostics
    return {**task_fields(task), **asdict(decision),
            "n_ratings": data.n, "n_participants": len(data.participants),
            "max_rhat": diag.max_rhat, "min_ess_bulk": diag.min_ess_bulk,
            "divergences": diag.divergences, "fit_seconds": round(fit.seconds, 3),
            "compile_seconds": round(fit.compile_seconds, 3)}


def task_fields(task: PowerTask) -> dict[str, Any]:
    return {"key": task.key, **asdict(task),
            "worker": f"{socket.gethostname()}:{os.getpid()}", "finished": time.time()}


@functools.cache
def worker_refitter(settings: tuple[tuple[str, Any], ...]) -> Any:
    """One Refitter per process and sampler setting: a worker compiles each shape once
    and reuses it for every task it runs."""
    from analysis.refit import Refitter

    return Refitter(**dict(settings))


def rhat_high(record: dict[str, Any]) -> bool:
    """The fit's max R-hat is above ``RHAT_FLAG`` (unknown, with one chain: not counted)."""
    rhat = record.get("max_rhat")
    return rhat is not None and np.isfinite(rhat) and rhat > RHAT_FLAG


def clopper_pearson(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The exact binomial interval for k successes in n trials.

    >>> from analysis import clopper_pearson
    >>> lo, hi = clopper_pearson(8, 10)
    >>> round(lo, 3), round(hi, 3)
    (0.444, 0.975)
    >>> clopper_pearson(0, 10)[0]
    0.0
    """
    if n == 0:
        return float("nan"), float("nan")
    a = (1 - level) / 2
    lo = stats.beta.ppf(a, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(1 - a, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def rate(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Share detected with its Monte Carlo interval over finished (not failed) records."""
    ok = [r for r in records if "error" not in r]
    k = sum(bool(r["detected"]) for r in ok)
    lo, hi = clopper_pearson(k, len(ok))
    return {"sims": len(ok), "detected": k, "rate": k / len(ok) if ok else None,
            "lo": lo, "hi": hi, "failed": len(records) - len(ok),
            "rhat_above_1_05": sum(1 for r in ok if rhat_high(r)),
            "mean_estimate": float(np.mean([r["estimate"] for r in ok])) if ok else None}


def curve(records: list[dict[str, Any]], participants: Sequence[int],
          target: float) -> dict[str, Any]:
    """Power and false-positive rate per N, and the smallest N reaching ``target``."""
    rows = []
    for n in sorted(set(participants)):
        effect = [r for r in records if r["participants"] == n and not r["null"]]
        null = [r for r in records if r["participants"] == n and r["null"]]
        rows.append({"participants": n, "power": rate(effect) if effect else None,
                     "false_positive": rate(null) if null else None})
    reached = [r["participants"] for r in rows
               if r["power"] and r["power"]["rate"] is not None and r["power"]["rate"] >= target]
    sure = [r["participants"] for r in rows if r["power"] and r["power"]["sims"]
            and r["power"]["lo"] >= target]
    nulls = [r for r in records if r["null"]]
    return {"rows": rows, "target": target,
            "smallest_n": min(reached) if reached else None,
            "smallest_n_lower_bound": min(sure) if sure else None,
            "false_positive_rate": rate(nulls) if nulls else None}
