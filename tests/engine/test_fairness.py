"""Fairness case study: race attribute, preference assignments, runs and group statistics.

The recourse method here is the causal Oracle (exact SCM grid search) and the decision model
the Bayes rule under the exact SCM (engine.decision.BayesDecision), so the tests
need no trained artifact.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.decision import BayesDecision
from engine.papers.icarma import disparities, fairness
from engine.recourse import get_method
from engine.recourse.base import RecourseContext, RecourseMethod
from engine.scenarios import get_scenario


@pytest.fixture(scope="module")
def method() -> RecourseMethod:
    scenario = get_scenario("loan")
    return get_method("oracle", RecourseContext(scenario, BayesDecision(scenario)), bins=12)


@pytest.fixture(scope="module")
def population(method: RecourseMethod) -> fairness.FairnessPopulation:
    return fairness.fairness_population(method.context.scenario, method.context.classifier, 160, 3)


@pytest.fixture(scope="module")
def outcomes(
    method: RecourseMethod, population: fairness.FairnessPopulation
) -> list[fairness.FairnessOutcome]:
    return fairness.run_fairness(method, population, seed=5)


def test_race_is_balanced_within_every_gender_and_seeded() -> None:
    gender = np.array([0] * 101 + [1] * 60)
    race = fairness.assign_race(gender, 0)
    assert set(np.unique(race)) == {0, 1}
    for g in (0, 1):
        share = race[gender == g]
        assert abs(int(share.sum()) - share.size / 2) <= 0.5
    np.testing.assert_array_equal(race, fairness.assign_race(gender, 0))
    assert not np.array_equal(race, fairness.assign_race(gender, 1))
    with pytest.raises(ValueError, match="0/1"):
        fairness.assign_race(np.array([0, 2]), 0)


def test_race_is_independent_of_features_on_the_test_split() -> None:
    scenario = get_scenario("loan")
    x = scenario.dataset["test"][0].numpy()
    race = fairness.assign_race(x[:, 0].astype(int), 11)
    for g in (0, 1):
        rows = x[:, 0] == g
        diff = x[rows & (race == 1), 5].mean() - x[rows & (race == 0), 5].mean()
        se = x[rows, 5].std() * np.sqrt(4 / rows.sum())
        assert abs(diff) < 4 * se  # income does not differ by race beyond chance


def test_population_is_rejected_applicants(
    method: RecourseMethod, population: fairness.FairnessPopulation
) -> None:
    assert len(population) == 160
    assert not method.context.classifier.decision(population.x.float()).any()
    np.testing.assert_array_equal(population.gender, population.x[:, 0].numpy().astype(int))
    assert population.cell_names() == (
        "non-white female",
        "white female",
        "non-white male",
        "white male",
    )
    with pytest.raises(ValueError, match="rejected applicants"):
        fairness.fairness_population(method.context.scenario, method.context.classifier, 10**6, 0)


def test_privileged_assignments_follow_their_rules(
    population: fairness.FairnessPopulation,
) -> None:
    rng = np.random.default_rng(0)
    big_race = np.tile([0, 1], 5000)
    big = fairness.FairnessPopulation(
        x=torch.zeros(10_000, 7),
        gender=np.zeros(10_000, dtype=int),
        race=big_race,
        test_index=np.arange(10_000),
        gender_categories=("female", "male"),
        n_test=10_000,
        n_rejected=10_000,
    )
    income = rng.normal(size=10_000)
    race_priv = fairness.privileged_mask("race", big, income, rng)
    assert race_priv[big_race == 1].mean() == pytest.approx(0.90, abs=0.02)
    assert race_priv[big_race == 0].mean() == pytest.approx(0.05, abs=0.01)
    rand_priv = fairness.privileged_mask("random", big, income, rng)
    assert rand_priv.mean() == pytest.approx(0.5, abs=0.02)
    inc_priv = fairness.privileged_mask("income", big, income, rng)
    assert inc_priv.mean() == pytest.approx(0.25, abs=0.001)
    assert income[inc_priv].min() > income[~inc_priv].max()
    assert not fairness.privileged_mask("none", big, income, rng).any()
    with pytest.raises(ValueError, match="unknown assignment"):
        fairness.privileged_mask("gender", big, income, rng)


def test_profiles_have_two_actionable_features_biased_by_group() -> None:
    scenario = get_scenario("loan")
    privileged = np.arange(4000) < 2000
    prof = fairness.assignment_profiles(scenario, privileged, 0)
    assert (prof.n_actionable == 2).all()
    hard = prof.hard_mask.numpy()
    inc, sav, amt, dur = (
        scenario.index(n) for n in ("income", "savings", "loan_amount", "loan_duration")
    )
    priv_fin = hard[privileged][:, [inc, sav]].sum(1).mean()
    non_fin = hard[~privileged][:, [inc, sav]].sum(1).mean()
    assert priv_fin > 1.2 and non_fin < 0.8
    assert hard[~privileged][:, [amt, dur]].sum(1).mean() > 1.2
    base = fairness.baseline_profiles(scenario, 50, 0)
    assert (base.n_actionable == 4).all()
    with pytest.raises(ValueError, match="bool"):
        fairness.assignment_profiles(scenario, np.ones(3), 0)


def test_run_evaluates_the_same_people_under_every_assignment(
    method: RecourseMethod,
    population: fairness.FairnessPopulation,
    outcomes: list[fairness.FairnessOutcome],
) -> None:
    assert [o.assignment for o in outcomes] == list(fairness.ASSIGNMENTS)
    for o in outcomes:
        torch.testing.assert_close(o.recourse.x, population.x.double())
        assert int(o.recourse.violations.sum()) == 0
        expected = 4 if o.assignment == "none" else 2
        assert (o.profiles.n_actionable == expected).all()
    # more freedom, never more cost: the baseline's cheapest plan is no dearer for anyone
    # (on the cost the Oracle minimizes: its own ranges, not the reported cost's)
    base, rand = outcomes[0].recourse, outcomes[1].recourse
    both = base.valid & rand.valid
    base_cost = method.objective(base, outcomes[0].profiles)  # type: ignore[attr-defined]
    rand_cost = method.objective(rand, outcomes[1].profiles)  # type: ignore[attr-defined]
    assert (base_cost[both] <= rand_cost[both] + 1e-9).all()
    with pytest.raises(ValueError, match="subset"):
        fairness.run_fairness(method, population, ["gender"])


def test_statistics_on_a_real_run_are_complete(
    population: fairness.FairnessPopulation, outcomes: list[fairness.FairnessOutcome]
) -> None:
    stats = disparities.fairness_summary(population, outcomes, n_boot=50, seed=0)
    assert stats["population"]["n"] == 160 and sum(stats["population"]["cells"].values()) == 160
    assert [a["n_actionable"] for a in stats["assignments"]] == [[4], [2], [2], [2]]
    # 4 assignments x 3 metrics x (2 + 2 + 4) groups; 5 contrasts; 1 worst cell
    assert len(stats["groups"]) == 4 * 3 * 8
    assert len(stats["gaps"]) == 4 * 3 * 5
    assert len(stats["worst_cell"]) == 4 * 3
    white = [
        r
        for r in stats["groups"]
        if r["assignment"] == "race" and r["metric"] == "cost" and r["group"] == "white"
    ]
    assert len(white) == 1 and white[0]["privileged_share"] > 0.6
