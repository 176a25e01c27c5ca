"""The recourse benchmark: every method on the same people and profiles, measured the same way.

Population: the deployment-test applicants the decision model rejects (optionally the first
n). For each hard-constraint setting c (``all``: every globally actionable feature
individually actionable; ``k``: exactly k, sampled per person; ``random``: how many and which
uniform) one set of actionability profiles is drawn from the named preference distribution
and elicitation scheme, seeded by (seed, c) so every method and cost profile sees the same
people with the same profiles. Each (c, cost profile, method) gives one row of the method's
``RecourseBatch.summary`` (validity, plausibility, unweighted cost mean/sd over valid
recourses, hap, violations, seconds) plus the setting and ``hap_profile`` (hap counted on
the whole profile change, consequences included, which is how the paper's Oracle hap
figures behave; see ``hap_profile``). Every row names the switches it ran with: the Oracle's
``oracle_grid`` (factual = the paper's, shared = ours), iCARMA/CARMA's ``repair`` (off = the
paper's) and ``icarma_training`` (paper | fast), the Likert ``score_sampling`` (iid = the
paper's, sorted = ours); the defaults are the paper's.

Speed is measured in the same run, so that machine noise cancels:

- ``oracle_speedup`` = (seconds per person of the straightforward per-person grid search,
  ``reference_grid_search``, on the first ``speedup_sample`` people) / (the Oracle's seconds
  per person on the whole population); ``oracle_agreement`` = share of that subsample where
  both found the same optimum (same weighted cost, or both none);
- ``icarma_speedup`` (iCARMA and CARMA rows) = the Oracle's seconds per person in the same
  setting / the method's seconds per person (each amortized method is warmed up once, so
  loading its artifacts is not counted);
- ``seconds_5000`` (iCARMA and CARMA rows) = wall time of one recourse call for 5,000 people
  (the population repeated to 5,000 rows), evaluation included.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from engine import metrics
from engine.preferences import (
    COST_PROFILE_EXPONENTS,
    ELICITATIONS,
    PREFERENCE_DISTRIBUTIONS,
    SCORE_SAMPLINGS,
    ActionabilityProfiles,
    CostProfile,
    sample_profiles,
)
from engine.recourse import METHODS, get_method
from engine.recourse.base import Classifier, RecourseBatch, RecourseContext, RecourseMethod
from engine.recourse.icarma_config import TRAININGS
from engine.recourse.oracle import CausalOracle
from engine.recourse.oracle_grid import GRIDS, reference_grid_search
from engine.scenarios.base import Scenario

AMORTIZED = ("icarma", "carma")
SPEED_PEOPLE = 5_000
# Relative tolerance when comparing the Oracle's and the reference's optimal weighted costs.
AGREEMENT_RTOL = 1e-9


class MethodUnavailableError(RuntimeError):
    """A requested method cannot be built (not implemented yet, or its artifact is missing)."""


@dataclass(frozen=True)
class BenchmarkConfig:
    """What to run; see the module docstring for the meaning of each setting."""

    methods: tuple[str, ...] = ("oracle",)
    constraints: tuple[str, ...] = ("all", "3", "2", "1", "random")
    elicitation: str = "ranking"
    cost_profiles: tuple[str, ...] = ("constant",)
    preferences: str = "uniform"
    n: int | None = None
    seed: int = 0
    plausibility: bool = True
    bins: int = 25
    speedup_sample: int = 8
    oracle_grid: str = "factual"
    repair: bool = False
    icarma_training: str = "paper"
    score_sampling: str = "iid"

    def validate(self, scenario: Scenario) -> None:
        """Raise ValueError naming the first bad setting."""
        _check_known("method", self.methods, tuple(METHODS))
        _check_known("cost profile", self.cost_profiles, tuple(COST_PROFILE_EXPONENTS))
        _check_known("elicitation", (self.elicitation,), ELICITATIONS)
        _check_known(
            "preference distribution", (self.preferences,), tuple(PREFERENCE_DISTRIBUTIONS)
        )
        _check_known("Oracle grid", (self.oracle_grid,), GRIDS)
        _check_known("iCARMA training", (self.icarma_training,), TRAININGS)
        _check_known("score sampling", (self.score_sampling,), SCORE_SAMPLINGS)
        for c in self.constraints:
            n_actionable(c, len(scenario.actionable))
        if not self.methods or not self.constraints or not self.cost_profiles:
            raise ValueError("methods, constraints and cost profiles must not be empty")
        if self.n is not None and self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if self.speedup_sample < 0:
            raise ValueError(f"speedup_sample must be >= 0, got {self.speedup_sample}")


def _check_known(what: str, given: tuple[str, ...], known: tuple[str, ...]) -> None:
    for g in given:
        if g not in known:
            raise ValueError(f"unknown {what} {g!r}; expected one of {', '.join(known)}")


def n_actionable(constraint: str, n_global: int) -> int | None:
    """Number of individually actionable features of a constraint (None: uniform random)."""
    if constraint == "all":
        return n_global
    if constraint == "random":
        return None
    if constraint.isdigit() and 1 <= int(constraint) <= n_global:
        return int(constraint)
    raise ValueError(
        f"unknown constraint {constraint!r}; expected all, random or a number in 1..{n_global}"
    )


def rejected_population(scenario: Scenario, classifier: Classifier, n: int | None) -> Tensor:
    """The deployment-test profiles the decision model rejects (the first n of them)."""
    x_test = scenario.dataset["test"][0]
    with torch.no_grad():
        rejected = ~classifier.decision(x_test.float()).bool()
    x = x_test[rejected]
    if len(x) == 0:
        raise ValueError(f"the decision model rejects nobody in the {scenario.name!r} test split")
    if n is not None and n > len(x):
        raise ValueError(f"n = {n} exceeds the {len(x)} rejected applicants of the test split")
    return x if n is None else x[:n]


class BayesDecision:
    """The Bayes-optimal decision rule under the exact SCM: h(x) = 1[l(x) >= 0], i.e.
    P(Y=1 | x) >= 1/2 (with the deterministic label rule it makes no error at all).

    A reference decision model for checking how much of a result is due to the trained MLP.
    """

    def __init__(self, scenario: Scenario) -> None:
        self.scm = scenario.scm

    def predict_proba(self, x: Tensor) -> Tensor:
        return self.scm.label_proba(x.double()).to(x.dtype)

    def decision(self, x: Tensor) -> Tensor:
        return self.scm.label_logit(x.double()) >= 0


def constraint_profiles(
    scenario: Scenario, constraint: str, config: BenchmarkConfig, n: int
) -> ActionabilityProfiles:
    """The profiles every method sees under ``constraint`` (seeded by seed and constraint)."""
    k = n_actionable(constraint, len(scenario.actionable))
    rng = np.random.default_rng([config.seed, 0 if k is None else k])
    return sample_profiles(
        scenario.feature_names,
        scenario.actionable,
        n,
        distribution=config.preferences,
        n_actionable=k,
        elicitation=config.elicitation,  # type: ignore[arg-type]
        score_sampling=config.score_sampling,
        seed=rng,
    )


def build_methods(
    scenario: Scenario, classifier: Classifier, config: BenchmarkConfig
) -> dict[tuple[str, str], RecourseMethod]:
    """Every (method, cost profile) up front, so a missing method fails before any work."""
    out: dict[tuple[str, str], RecourseMethod] = {}
    for cp in config.cost_profiles:
        context = RecourseContext(scenario, classifier, cost_profile=CostProfile(cp))
        for name in config.methods:
            options = method_options(name, config)
            try:
                out[(name, cp)] = get_method(name, context, **options)
            except ModuleNotFoundError as e:
                raise MethodUnavailableError(
                    f"method {name!r} is not available: its module {METHODS[name].split(':')[0]}"
                    f" cannot be imported ({e})"
                ) from e
            except (FileNotFoundError, AttributeError) as e:
                raise MethodUnavailableError(f"method {name!r} cannot be built: {e}") from e
    return out


def method_options(name: str, config: BenchmarkConfig) -> dict[str, Any]:
    """The benchmark's switches as options of method ``name``."""
    if name == "oracle":
        return {"bins": config.bins, "plausibility": config.plausibility, "grid": config.oracle_grid}
    if name == "icarma":
        return {"repair": config.repair, "training": config.icarma_training}
    if name == "carma":
        return {"repair": config.repair}
    return {}


def hap_profile(batch: RecourseBatch, profiles: ActionabilityProfiles, scenario: Scenario) -> float:
    """hap counted on the profile change: the least-preferred actionable feature changes in x'.

    ``hap`` counts actions only; here a consequence counts too (acting on loan amount moves
    loan duration, acting on income moves savings). Mean over people with |F_i| >= 2,
    people without recourse counting 0, as for ``hap``.
    """
    categorical = torch.tensor([f.discrete for f in scenario.features])
    delta = metrics.feature_deltas(batch.x, batch.x_cf, scenario.ranges, categorical)
    changed = delta > metrics.CHANGE_TOLERANCE
    per_person = metrics.hap(changed, profiles.least_preferred(), profiles.n_actionable)
    return metrics.nanmean(per_person)


def oracle_reference_timing(
    oracle: CausalOracle, x: Tensor, profiles: ActionabilityProfiles, found: Tensor, cost: Tensor
) -> tuple[float, float]:
    """(seconds per person, agreement) of the per-person reference search on x."""
    ctx = oracle.context
    weights = profiles.weights(ctx.cost_profile)
    agree = 0
    start = time.perf_counter()
    for i in range(len(x)):
        ref = reference_grid_search(
            ctx.scenario,
            ctx.classifier,
            oracle.grid,
            x[i],
            profiles.hard_mask[i],
            weights[i],
            plausibility=oracle.plausibility,
        )
        same_none = not ref.found and not bool(found[i])
        same_cost = (
            ref.found
            and bool(found[i])
            and math.isclose(ref.weighted_cost, float(cost[i]), rel_tol=AGREEMENT_RTOL)
        )
        agree += int(same_none or same_cost)
    seconds = time.perf_counter() - start
    return seconds / len(x), agree / len(x)


def run_benchmark(
    scenario: Scenario,
    classifier: Classifier,
    config: BenchmarkConfig,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """All rows of the benchmark (module docstring); ``on_row`` is called after each row."""
    config.validate(scenario)
    methods = build_methods(scenario, classifier, config)
    x = rejected_population(scenario, classifier, config.n)
    n = len(x)
    order = sorted(config.methods, key=lambda m: m != "oracle")  # the Oracle first
    rows: list[dict[str, Any]] = []
    for constraint in config.constraints:
        profiles = constraint_profiles(scenario, constraint, config, n)
        for cp in config.cost_profiles:
            oracle_per_person: float | None = None
            for name in order:
                method = methods[(name, cp)]
                if name in AMORTIZED:
                    try:  # warm-up: load the artifacts
                        method.recourse(x[:1], profiles[:1])
                    except FileNotFoundError as e:
                        raise MethodUnavailableError(f"method {name!r}: {e}") from e
                start = time.perf_counter()
                batch = method.recourse(x, profiles)
                seconds = time.perf_counter() - start
                row: dict[str, Any] = {
                    "scenario": scenario.name,
                    "method": name,
                    "constraint": constraint,
                    "n_actionable": n_actionable(constraint, len(scenario.actionable)),
                    "preferences": config.preferences,
                    "elicitation": config.elicitation,
                    "cost_profile": cp,
                    **batch.summary(),
                    "hap_profile": hap_profile(batch, profiles, scenario),
                    "found": float(batch.found.double().mean()),
                    "seconds": seconds,
                    "density_source": batch.density_source,
                    "seed": config.seed,
                    "oracle_plausibility": config.plausibility if name == "oracle" else None,
                    "bins": config.bins if name == "oracle" else None,
                    "oracle_grid": config.oracle_grid if name == "oracle" else None,
                    "repair": config.repair if name in AMORTIZED else None,
                    "icarma_training": (
                        getattr(method, "training", None) if name in AMORTIZED else None
                    ),
                    "score_sampling": (
                        config.score_sampling if config.elicitation == "likert" else None
                    ),
                    "oracle_speedup": None,
                    "oracle_agreement": None,
                    "icarma_speedup": None,
                    "seconds_5000": None,
                }
                if name == "oracle":
                    oracle_per_person = seconds / n
                    m = min(config.speedup_sample, n)
                    if m:
                        assert isinstance(method, CausalOracle)
                        ref_pp, agreement = oracle_reference_timing(
                            method, x[:m], profiles[:m], batch.found[:m], batch.weighted_cost[:m]
                        )
                        row["oracle_speedup"] = ref_pp / oracle_per_person
                        row["oracle_agreement"] = agreement
                elif name in AMORTIZED:
                    if oracle_per_person is not None:
                        row["icarma_speedup"] = oracle_per_person / (seconds / n)
                    idx = torch.arange(SPEED_PEOPLE) % n
                    start = time.perf_counter()
                    method.recourse(x[idx], profiles[idx])
                    row["seconds_5000"] = time.perf_counter() - start
                row = {k: _plain(v) for k, v in row.items()}
                rows.append(row)
                if on_row is not None:
                    on_row(row)
    return rows


def _plain(v: Any) -> Any:
    """JSON-safe scalar: NaN becomes None."""
    if isinstance(v, float) and math.isnan(v):
        return None
    return v
