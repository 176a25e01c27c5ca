"""Fairness case study (iCARMA paper, section 5.5): do individual constraints reveal disparities?

Population. Recourse seekers are the deployment-test applicants the decision model rejects.
Two demographic axes: the scenario's ``gender`` (0 = female, 1 = male in Loan) and a
stylized ``race`` (0 = non-white, 1 = white) drawn at random, independently of every feature:
within each gender of the test split exactly half (up to one person) get each race, so every
gender x race cell holds the same share of its gender. Race enters nothing but (possibly) the
actionability profile a person is given.

Preference assignments (which profile a person has):

- ``none``: every globally actionable feature is individually actionable (the baseline);
- ``random``: privileged with probability 1/2, independently of everything;
- ``income``: privileged iff income is in the top 25% of the recourse seekers
  (income > q_0.75 over the evaluated population);
- ``race``: privileged with probability 0.9 for race 1 and 0.05 for race 0.

Outside the baseline, everyone has exactly two actionable features, the top two of a
Plackett-Luce draw from the ``privileged`` (income and savings favoured) or
``non_privileged`` (loan amount and duration favoured) distribution of engine.preferences;
the baseline draws a uniform ranking over all four. Rankings only matter through a cost
profile; the study evaluates the unweighted cost, so only the hard masks differ.

Group means, gaps and their bootstrap intervals live in engine.papers.icarma.disparities.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from engine.decision import Classifier, rejected_rows
from engine.preferences import ActionabilityProfiles, sample_profiles
from engine.recourse.base import RecourseMethod
from engine.recourse.batch import RecourseBatch
from engine.scenarios.base import Scenario

ASSIGNMENTS: tuple[str, ...] = ("none", "random", "income", "race")
ASSIGNMENT_LABELS: dict[str, str] = {
    "none": "no preferences (all 4 actionable)",
    "random": "random profiles",
    "income": "income-dependent (top 25% privileged)",
    "race": "race-correlated (90% / 5% privileged)",
}
RACE_CATEGORIES: tuple[str, ...] = ("non-white", "white")
N_ACTIONABLE = 2
RANDOM_PRIVILEGED_RATE = 0.5
INCOME_QUANTILE = 0.75
# P(privileged | race): index 0 = non-white, 1 = white.
RACE_PRIVILEGED_RATES: tuple[float, float] = (0.05, 0.90)


@dataclass(frozen=True)
class FairnessPopulation:
    """The recourse seekers: factuals (n, d), gender and race codes (n,), test-split rows."""

    x: Tensor
    gender: np.ndarray
    race: np.ndarray
    test_index: np.ndarray
    gender_categories: tuple[str, str]
    n_test: int
    n_rejected: int

    def __len__(self) -> int:
        return int(self.x.shape[0])

    @property
    def cell(self) -> np.ndarray:
        """Gender x race cell code 2 * gender + race, in 0..3."""
        return 2 * self.gender + self.race

    def cell_names(self) -> tuple[str, ...]:
        return tuple(f"{r} {g}" for g in self.gender_categories for r in RACE_CATEGORIES)


@dataclass
class FairnessOutcome:
    """One assignment's result: who was privileged, their profiles and their recourses."""

    assignment: str
    privileged: np.ndarray  # bool (n,); all False for the baseline
    profiles: ActionabilityProfiles
    recourse: RecourseBatch
    extras: dict[str, float] = field(default_factory=dict)


def _rng(seed: int | np.random.Generator) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def assign_race(gender: np.ndarray, seed: int | np.random.Generator) -> np.ndarray:
    """Stylized race, 0/1, balanced within each gender: a random half of every gender gets 1.

    Drawn from nothing but a random permutation, so it is independent of every feature.
    """
    gender = np.asarray(gender)
    if gender.ndim != 1 or not np.isin(gender, (0, 1)).all():
        raise ValueError("gender must be a 1-d array of 0/1 codes")
    rng = _rng(seed)
    race = np.zeros(gender.shape[0], dtype=np.int64)
    for g in (0, 1):
        idx = np.flatnonzero(gender == g)
        chosen = rng.permutation(idx)[: (idx.size + rng.integers(0, 2)) // 2]
        race[chosen] = 1
    return race


def fairness_population(
    scenario: Scenario,
    classifier: Classifier,
    n: int | None,
    seed: int | np.random.Generator,
) -> FairnessPopulation:
    """Race for the whole test split, then the first n rejected test applicants (all if None).

    The first n, as in engine.papers.recourse_benchmark, so both benchmarks see the same
    people; test rows are i.i.d. draws of the SCM, so the first n are a random sample of the
    rejected.

    >>> from engine import BayesDecision, get_scenario
    >>> from engine.papers import fairness_population
    >>> loan = get_scenario("loan")
    >>> people = fairness_population(loan, BayesDecision(loan), n=20, seed=0)
    >>> len(people), people.n_test, people.gender_categories
    (20, 5000, ('female', 'male'))
    """
    rng = _rng(seed)
    gi = scenario.index("gender")
    scenario.index("income")  # the income-dependent assignment needs it: fail early
    gender_categories = scenario.features[gi].display.categories
    if len(gender_categories) != 2:
        raise ValueError(f"scenario {scenario.name!r}: gender must have two categories")
    x_test = scenario.dataset["test"][0]
    gender_all = x_test[:, gi].round().long().numpy()
    race_all = assign_race(gender_all, rng)
    rejected = rejected_rows(scenario, classifier, "test")
    n = rejected.size if n is None else n
    if not 1 <= n <= rejected.size:
        raise ValueError(
            f"n must be in 1..{rejected.size} (the rejected applicants of the "
            f"{scenario.name!r} test split), got {n}"
        )
    chosen = rejected[:n]
    return FairnessPopulation(
        x=x_test[chosen],
        gender=gender_all[chosen],
        race=race_all[chosen],
        test_index=chosen,
        gender_categories=(gender_categories[0], gender_categories[1]),
        n_test=int(x_test.shape[0]),
        n_rejected=int(rejected.size),
    )


def privileged_mask(
    assignment: str,
    population: FairnessPopulation,
    income: np.ndarray,
    seed: int | np.random.Generator,
) -> np.ndarray:
    """Who gets the privileged profile under ``assignment`` (module docstring)."""
    rng = _rng(seed)
    n = len(population)
    if assignment == "none":
        return np.zeros(n, dtype=bool)
    if assignment == "random":
        return rng.random(n) < RANDOM_PRIVILEGED_RATE
    if assignment == "income":
        return income > np.quantile(income, INCOME_QUANTILE)
    if assignment == "race":
        return rng.random(n) < np.asarray(RACE_PRIVILEGED_RATES)[population.race]
    raise ValueError(f"unknown assignment {assignment!r}; expected one of {', '.join(ASSIGNMENTS)}")


def assignment_profiles(
    scenario: Scenario, privileged: np.ndarray, seed: int | np.random.Generator
) -> ActionabilityProfiles:
    """Two actionable features each: a privileged draw where ``privileged``, else non-privileged."""
    rng = _rng(seed)
    names, glob = scenario.feature_names, scenario.actionable
    privileged = np.asarray(privileged)
    if privileged.ndim != 1 or privileged.dtype != bool:
        raise ValueError("privileged must be a 1-d bool array (one entry per person)")
    n = int(privileged.shape[0])
    priv = sample_profiles(
        names, glob, n, distribution="privileged", n_actionable=N_ACTIONABLE, seed=rng
    )
    non = sample_profiles(
        names, glob, n, distribution="non_privileged", n_actionable=N_ACTIONABLE, seed=rng
    )
    p = torch.from_numpy(np.asarray(privileged, dtype=bool))
    return ActionabilityProfiles(
        hard_mask=torch.where(p[:, None], priv.hard_mask, non.hard_mask),
        scores=torch.where(p[:, None], priv.scores, non.scores),
        levels=torch.where(p, priv.levels, non.levels),
        elicitation=priv.elicitation,
    )


def baseline_profiles(
    scenario: Scenario, n: int, seed: int | np.random.Generator
) -> ActionabilityProfiles:
    """All globally actionable features individually actionable, uniform random ranking."""
    return sample_profiles(
        scenario.feature_names,
        scenario.actionable,
        n,
        distribution="uniform",
        n_actionable=len(scenario.actionable),
        seed=_rng(seed),
    )


def run_fairness(
    method: RecourseMethod,
    population: FairnessPopulation,
    assignments: Sequence[str] = ASSIGNMENTS,
    seed: int = 0,
    on_done: Callable[[str], None] | None = None,
) -> list[FairnessOutcome]:
    """Recourse for the same people under every assignment (one batched call each).

    Each assignment gets its own generator spawned from ``seed`` so that adding or dropping
    an assignment leaves the others' draws unchanged.

    >>> from engine import BayesDecision, RecourseContext, get_method, get_scenario
    >>> from engine.papers import fairness_population, run_fairness
    >>> loan = get_scenario("loan")
    >>> ctx = RecourseContext(loan, BayesDecision(loan))
    >>> people = fairness_population(loan, ctx.classifier, n=16, seed=0)
    >>> oracle = get_method("oracle", ctx, bins=5, plausibility=False)
    >>> outcomes = run_fairness(oracle, people, ("none", "random"))
    >>> [o.assignment for o in outcomes], [len(o.recourse) for o in outcomes]
    (['none', 'random'], [16, 16])
    >>> again = run_fairness(oracle, people, ("random",))    # another assignment dropped:
    >>> bool((again[0].recourse.x_cf == outcomes[1].recourse.x_cf).all())   # same draws
    True
    """
    unknown = [a for a in assignments if a not in ASSIGNMENTS]
    if unknown or not assignments:
        raise ValueError(
            f"assignments must be a non-empty subset of {', '.join(ASSIGNMENTS)}; got {unknown}"
        )
    scenario = method.context.scenario
    income = population.x[:, scenario.index("income")].numpy()
    outcomes = []
    for a in assignments:
        rng = np.random.default_rng([seed, ASSIGNMENTS.index(a)])
        privileged = privileged_mask(a, population, income, rng)
        if a == "none":
            profiles = baseline_profiles(scenario, len(population), rng)
        else:
            profiles = assignment_profiles(scenario, privileged, rng)
        batch = method.recourse(population.x, profiles)
        if len(batch) != len(population) or not bool(
            (batch.person == torch.arange(len(population))).all()
        ):
            raise ValueError(f"{method.name} must return one recourse per person, in order")
        outcomes.append(FairnessOutcome(a, privileged, profiles, batch))
        if on_done is not None:
            on_done(a)
    return outcomes
