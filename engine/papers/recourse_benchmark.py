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
``oracle_grid`` (factual = the paper's, carma / shared = ours) and ``oracle_range`` (the grid's
range: rejected = the papers', the default of their layouts; training = ours, the default of
``shared``; engine.recourse.oracle.grid_range), iCARMA/CARMA's ``repair``
(off = the paper's) and ``icarma_training`` (paper | fast), the Likert ``score_sampling``
(iid = the paper's, sorted = ours); the defaults are the paper's.

Methods are asked for their capabilities (engine.recourse.base.Capabilities), never their
names: exact methods run first (they are the speed reference), interactive methods (HARE)
have their own benchmark (engine.papers.hare.benchmark).

On a data scenario (a learned world) every row says ``world: learned`` and, when the
scenario names the SCM that made its data, ``validity_exact`` / ``plausibility_exact`` (the
plans judged by that SCM), and each exact-world method (the Oracle) gets a second row with
``world: exact``: the same search on the true SCM (engine.papers.learned_world). The
switches (``bins``, ``plausibility``, ``grid``, ``repair``, ``training``) go to the methods
whose constructor takes them, and their rows report them (None for a method without the
option).
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
from engine.decision import Classifier, rejected_rows
from engine.papers.learned_world import (
    exact_evaluation,
    exact_world_twin,
    truth_of,
    world_label,
)
from engine.preferences import (
    COST_PROFILE_EXPONENTS,
    ELICITATIONS,
    PREFERENCE_DISTRIBUTIONS,
    SCORE_SAMPLINGS,
    ActionabilityProfiles,
    CostProfile,
    sample_profiles,
)
from engine.recourse import (
    METHODS,
    MethodUnavailableError,
    build_method,
    capabilities,
    option_names,
)
from engine.recourse.base import RecourseContext, RecourseMethod
from engine.recourse.batch import RecourseBatch
from engine.recourse.icarma.config import TRAININGS
from engine.recourse.oracle.grid import GRIDS
from engine.scenarios.base import Scenario

SPEED_PEOPLE = 5_000
# Relative tolerance when comparing the Oracle's and the reference's optimal weighted costs.
AGREEMENT_RTOL = 1e-9


@dataclass(frozen=True)
class BenchmarkConfig:
    """What to run; see the module docstring for the meaning of each setting.

    >>> from engine.papers import BenchmarkConfig
    >>> BenchmarkConfig().constraints, BenchmarkConfig().oracle_grid   # the paper's
    (('all', '3', '2', '1', 'random'), 'factual')
    """

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
    """The deployment-test profiles the decision model rejects (the first n of them).

    >>> from engine import BayesDecision, get_scenario
    >>> from engine.papers import rejected_population
    >>> loan = get_scenario("loan")
    >>> x = rejected_population(loan, BayesDecision(loan), n=4)
    >>> tuple(x.shape), BayesDecision(loan).decision(x).any().item()
    ((4, 7), False)
    """
    x = scenario.dataset["test"][0][torch.from_numpy(rejected_rows(scenario, classifier))]
    if len(x) == 0:
        raise ValueError(f"the decision model rejects nobody in the {scenario.name!r} test split")
    if n is not None and n > len(x):
        raise ValueError(f"n = {n} exceeds the {len(x)} rejected applicants of the test split")
    return x if n is None else x[:n]


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
            if capabilities(name).interactive:
                raise MethodUnavailableError(
                    f"method {name!r} asks people: benchmark it with `benchmark hare`")
            try:
                out[(name, cp)] = build_method(
                    name, context, **method_options(option_names(name), config))
            except ValueError as e:  # e.g. the Oracle on a world without causal equations
                raise MethodUnavailableError(
                    f"method {name!r} cannot run on scenario {scenario.name!r}: {e}") from e
    return out


def method_options(accepted: tuple[str, ...], config: BenchmarkConfig) -> dict[str, Any]:
    """The benchmark's switches a method taking the options ``accepted`` gets: the Oracle's
    ``bins``, ``plausibility`` and ``grid``, iCARMA's ``repair`` and ``training`` (CARMA's
    ``repair``; it is trained one way only)."""
    given = {"bins": config.bins, "plausibility": config.plausibility,
             "grid": config.oracle_grid, "repair": config.repair,
             "training": config.icarma_training}
    return {k: v for k, v in given.items() if k in accepted}


def hap_profile(batch: RecourseBatch, profiles: ActionabilityProfiles) -> float:
    """hap counted on the profile change: the least-preferred actionable feature changes in x'.

    ``hap`` counts actions only; here a consequence counts too (acting on loan amount moves
    loan duration, acting on income moves savings). Mean over people with |F_i| >= 2,
    people without recourse counting 0, as for ``hap``.
    """
    per_person = metrics.hap(batch.changed, profiles.least_preferred(), profiles.n_actionable)
    return metrics.nanmean(per_person)


def hap_paper(batch: RecourseBatch, profiles: ActionabilityProfiles) -> float:
    """hap as the iCARMA paper's tables count it: among the people who get a valid recourse,
    the share whose x' changes their least-preferred individually actionable feature, a
    person with one actionable feature included (it is their least preferred).

    Why this reading (README "Reproducing the papers"): with it the Oracle's hap on Table 2
    comes within 0.05 of the paper's on all eight rows (engine.recourse.oracle.grid_range), and it
    explains the floor of the paper's iCARMA hard + soft rows (0.44 with the non-constant
    profiles against 0.03-0.04 without hard constraints: a quarter of the people have one
    actionable feature); counting people with >= 2 features only, no recourse counting 0
    (``hap_profile``), the Oracle misses the hard + soft rows by 0.17-0.20. NaN when nobody
    has a valid recourse.
    """
    valid = batch.valid.bool()
    if not bool(valid.any()):
        return float("nan")
    touched = metrics.touches(batch.changed, profiles.least_preferred())
    return float(touched[valid].mean())


def reference_timing(
    method: RecourseMethod, x: Tensor, profiles: ActionabilityProfiles, found: Tensor,
    cost: Tensor,
) -> tuple[float, float]:
    """(seconds per person, agreement) of the method's per-person ``reference_search`` on x
    with the batched search (``found`` and its ``objective``, the cost it minimizes).

    Speed is measured in the same run, so that machine noise cancels:

    - ``oracle_speedup`` (rows of a method with a ``reference_search``: the Oracle) = (seconds per
      person of the straightforward per-person search, ``reference_search``, on the first
      ``speedup_sample`` people) / (the method's seconds per person on the whole population);
      ``oracle_agreement`` = share of that subsample where both found the same optimum (same
      weighted cost, or both none);
    - ``icarma_speedup`` (rows of ``amortized`` methods: iCARMA and CARMA) = the ``exact_world``
      method's (the Oracle's) seconds per person in the same setting / the method's seconds per
      person (each amortized method is warmed up once, so loading its artifacts is not counted);
    - ``seconds_5000`` (amortized rows) = wall time of one recourse call for 5,000 people (the
      population repeated to 5,000 rows), evaluation included.
    """
    start = time.perf_counter()
    ref_found, ref_cost = method.reference_search(x, profiles)  # type: ignore[attr-defined]
    seconds = time.perf_counter() - start
    agree = 0
    for i in range(len(x)):
        same_none = not bool(ref_found[i]) and not bool(found[i])
        same_cost = (
            bool(ref_found[i])
            and bool(found[i])
            and math.isclose(float(ref_cost[i]), float(cost[i]), rel_tol=AGREEMENT_RTOL)
        )
        agree += int(same_none or same_cost)
    return seconds / len(x), agree / len(x)


def run_benchmark(
    scenario: Scenario,
    classifier: Classifier,
    config: BenchmarkConfig,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """All rows of the benchmark (module docstring); ``on_row`` is called after each row.

    >>> from engine import BayesDecision, get_scenario
    >>> from engine.papers import BenchmarkConfig, run_benchmark
    >>> loan = get_scenario("loan")
    >>> config = BenchmarkConfig(methods=("oracle",), constraints=("all", "1"), n=4,
    ...                          speedup_sample=0, bins=5, plausibility=False)
    >>> rows = run_benchmark(loan, BayesDecision(loan), config)
    >>> tuple((r["method"], r["constraint"], r["n"]) for r in rows)
    (('oracle', 'all', 4), ('oracle', '1', 4))
    >>> everything, one = rows[0], rows[1]
    >>> everything["validity"] >= one["validity"]   # fewer actionable features: harder
    True
    """
    config.validate(scenario)
    methods = build_methods(scenario, classifier, config)
    truth = truth_of(scenario)
    twins = {key: exact_world_twin(m, truth, method_options(m.option_names(), config))
             for key, m in methods.items() if truth is not None and m.capabilities.exact_world}
    x = rejected_population(scenario, classifier, config.n)
    rows: list[dict[str, Any]] = []
    # Exact methods first: the amortized ones are timed against them.
    first = config.cost_profiles[0]
    order = sorted(config.methods, key=lambda m: not methods[(m, first)].capabilities.exact_world)
    for constraint in config.constraints:
        profiles = constraint_profiles(scenario, constraint, config, len(x))
        for cp in config.cost_profiles:
            exact_per_person: float | None = None
            for name in order:
                method = methods[(name, cp)]
                row, per_person, batch = _method_row(method, x, profiles, config, constraint,
                                                     cp, exact_per_person)
                if method.capabilities.exact_world:
                    exact_per_person = per_person
                new = [row]
                if truth is not None:  # a learned world judged by its truth (learned_world)
                    row.update(exact_evaluation(batch, classifier, truth))
                if (name, cp) in twins:
                    twin_row, _, twin_batch = _method_row(twins[(name, cp)], x, profiles,
                                                          config, constraint, cp, None)
                    twin_row.update(world="exact", **exact_evaluation(twin_batch, classifier,
                                                                      truth))
                    new.append(twin_row)
                rows += new
                if on_row is not None:
                    for r in new:
                        on_row(r)
    return rows


def _method_row(
    method: RecourseMethod, x: Tensor, profiles: ActionabilityProfiles,
    config: BenchmarkConfig, constraint: str, cp: str, exact_per_person: float | None,
) -> tuple[dict[str, Any], float, RecourseBatch]:
    """One row (module docstring), the method's seconds per person, and its plans."""
    scenario, caps, n = method.context.scenario, method.capabilities, len(x)
    if caps.amortized:
        try:  # warm-up: load the artifacts
            method.recourse(x[:1], profiles[:1])
        except FileNotFoundError as e:  # a trained model is missing (the message says how)
            raise MethodUnavailableError(f"method {method.name!r}: {e}") from e
    start = time.perf_counter()
    batch = method.recourse(x, profiles)
    seconds = time.perf_counter() - start
    options = method_options(method.option_names(), config)
    row: dict[str, Any] = {
        "scenario": scenario.name,
        "method": method.name,
        "constraint": constraint,
        "n_actionable": n_actionable(constraint, len(scenario.actionable)),
        "preferences": config.preferences,
        "elicitation": config.elicitation,
        "cost_profile": cp,
        **batch.summary(),
        "hap_profile": hap_profile(batch, profiles),
        "found": float(batch.found.double().mean()),
        "seconds": seconds,
        "density_source": batch.density_source,
        "seed": config.seed,
        "oracle_plausibility": options.get("plausibility"),
        "bins": options.get("bins"),
        "oracle_grid": options.get("grid"),
        "oracle_range": getattr(method, "grid_range", None),
        "repair": options.get("repair"),
        "icarma_training": getattr(method, "training", None),
        "score_sampling": config.score_sampling if config.elicitation == "likert" else None,
        "oracle_speedup": None,
        "oracle_agreement": None,
        "icarma_speedup": None,
        "seconds_5000": None,
        "world": world_label(scenario),
        "validity_exact": None,
        "plausibility_exact": None,
    }
    per_person = seconds / n
    m = min(config.speedup_sample, n)
    if caps.reference_search and m:
        objective = method.objective(batch, profiles)  # type: ignore[attr-defined]
        ref_pp, agreement = reference_timing(
            method, x[:m], profiles[:m], batch.found[:m], objective[:m]
        )
        row["oracle_speedup"] = ref_pp / per_person
        row["oracle_agreement"] = agreement
    if caps.amortized:
        if exact_per_person is not None:
            row["icarma_speedup"] = exact_per_person / per_person
        idx = torch.arange(SPEED_PEOPLE) % n
        start = time.perf_counter()
        method.recourse(x[idx], profiles[idx])
        row["seconds_5000"] = time.perf_counter() - start
    return {k: _plain(v) for k, v in row.items()}, per_person, batch


def _plain(v: Any) -> Any:
    """JSON-safe scalar: NaN becomes None."""
    if isinstance(v, float) and math.isnan(v):
        return None
    return v
