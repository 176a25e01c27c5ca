"""Group means, gaps, paired gap changes and worst-off cells, on data with known answers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.papers.icarma import disparities, fairness
from engine.preferences import ActionabilityProfiles
from engine.recourse.base import RecourseBatch
from engine.scenarios import get_scenario


def _batch(cost: np.ndarray, log_prob_cf: np.ndarray, valid: np.ndarray) -> RecourseBatch:
    """A batch holding only what the group statistics read (other fields zero)."""
    n = cost.shape[0]
    zeros, zx = torch.zeros(n, dtype=torch.float64), torch.zeros(n, 7, dtype=torch.float64)
    return RecourseBatch(
        method="synthetic",
        person=torch.arange(n),
        x=zx,
        action_mask=zx.bool(),
        action_values=zx,
        x_cf=zx,
        found=torch.ones(n, dtype=torch.bool),
        valid=torch.from_numpy(valid),
        cost=torch.from_numpy(cost),
        weighted_cost=torch.from_numpy(cost),
        log_prob_factual=zeros,
        log_prob_cf=torch.from_numpy(log_prob_cf),
        plausible=torch.ones(n, dtype=torch.bool),
        hap=zeros,
        violations=torch.zeros(n, dtype=torch.long),
        l0_actions=zeros,
        l1_actions=zeros,
        l0_profile=zeros,
        l1_profile=zeros,
        satisfaction=zeros,
        violation=zeros,
        changed=zx.bool(),
        runtime=0.0,
        density_source="none",
    )


def _synthetic_population(n: int) -> fairness.FairnessPopulation:
    gender = np.repeat([0, 1], n // 2)
    race = np.tile([0, 1], n // 2)
    return fairness.FairnessPopulation(
        x=torch.zeros(n, 7),
        gender=gender,
        race=race,
        test_index=np.arange(n),
        gender_categories=("female", "male"),
        n_test=n,
        n_rejected=n,
    )


def _outcome(
    name: str, batch: RecourseBatch, prof: ActionabilityProfiles
) -> fairness.FairnessOutcome:
    return fairness.FairnessOutcome(name, np.zeros(len(batch), dtype=bool), prof, batch)


def _find(rows: list[dict], **keys: str) -> dict:
    hits = [r for r in rows if all(r[k] == v for k, v in keys.items())]
    assert len(hits) == 1, keys
    return hits[0]


def test_group_statistics_recover_known_gaps_with_intervals() -> None:
    n = 800
    pop = _synthetic_population(n)
    rng = np.random.default_rng(0)
    female = pop.gender == 0
    cost = np.where(female, 1.0, 0.5) + rng.normal(0, 0.1, n)
    lp = np.where(female, -12.0, -10.0) + rng.normal(0, 0.5, n)
    valid = rng.random(n) > 0.1
    cost_invalid = np.where(valid, cost, 100.0)  # invalid recourses must not count
    prof = fairness.baseline_profiles(get_scenario("loan"), n, 0)
    base = _outcome("none", _batch(cost_invalid, lp, valid), prof)
    # the same people: female cost raised by 0.3 (income), non-white cost by 0.2 (race)
    female_up = _outcome("income", _batch(cost_invalid + 0.3 * female, lp, valid), prof)
    nonwhite = (pop.race == 0).astype(float)
    race_up = _outcome("race", _batch(cost_invalid + 0.2 * nonwhite, lp, valid), prof)
    same = _outcome("random", _batch(cost_invalid, lp, valid), prof)
    stats = disparities.group_statistics(pop, [base, same, female_up, race_up], n_boot=400, seed=1)

    g = _find(stats["groups"], assignment="none", metric="cost", axis="gender", group="female")
    assert g["estimate"] == pytest.approx(cost[female & valid].mean())
    assert g["n"] == female.sum() and g["n_used"] == (female & valid).sum()
    assert g["lo"] < g["estimate"] < g["hi"]
    gap = _find(stats["gaps"], assignment="none", metric="cost", axis="gender")
    assert gap["contrast"] == "female - male"
    assert gap["lo"] < 0.5 < gap["hi"] and gap["lo"] > 0.45
    race_gap = _find(stats["gaps"], assignment="none", metric="cost", axis="race")
    assert race_gap["contrast"] == "non-white - white"
    assert race_gap["lo"] < 0 < race_gap["hi"]
    lp_gap = _find(stats["gaps"], assignment="none", metric="log_prob_cf", axis="gender")
    assert lp_gap["hi"] < 0
    assert lp_gap["change_vs_none"] is None

    # paired bootstrap: a constant shift of one group moves every draw of the gap by it
    change = _find(stats["gaps"], assignment="income", metric="cost", axis="gender")
    assert change["change_vs_none"]["estimate"] == pytest.approx(0.3)
    assert change["change_vs_none"]["lo"] == pytest.approx(0.3)
    assert change["change_vs_none"]["hi"] == pytest.approx(0.3)
    race_change = _find(stats["gaps"], assignment="race", metric="cost", axis="race")
    assert race_change["change_vs_none"]["estimate"] == pytest.approx(0.2)
    assert race_change["lo"] > 0.15
    unchanged = _find(stats["gaps"], assignment="random", metric="cost", axis="gender")
    assert unchanged["change_vs_none"] == {"estimate": 0.0, "lo": 0.0, "hi": 0.0}

    worst = _find(stats["worst_cell"], assignment="race", metric="cost")
    assert worst["cell"] == "non-white female" and worst["runner_up"] == "white female"
    assert worst["margin"]["lo"] > 0.15
    worst_lp = _find(stats["worst_cell"], assignment="none", metric="log_prob_cf")
    assert worst_lp["cell"].endswith("female")
    validity = _find(
        stats["groups"], assignment="none", metric="validity", axis="race", group="white"
    )
    assert validity["estimate"] == pytest.approx(valid[pop.race == 1].mean())


def test_group_statistics_reject_bad_arguments() -> None:
    pop = _synthetic_population(8)
    prof = fairness.baseline_profiles(get_scenario("loan"), 8, 0)
    o = _outcome("none", _batch(np.ones(8), np.ones(8), np.ones(8, dtype=bool)), prof)
    with pytest.raises(ValueError, match="n_boot"):
        disparities.group_statistics(pop, [o], n_boot=0)
    with pytest.raises(ValueError, match="level"):
        disparities.group_statistics(pop, [o], level=1.5)
    lonely = _synthetic_population(8)
    object.__setattr__(lonely, "race", np.ones(8, dtype=int))
    with pytest.raises(ValueError, match="cell"):
        disparities.group_statistics(lonely, [o])
