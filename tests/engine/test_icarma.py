"""iCARMA and CARMA at deployment (quick trained artifacts of the fast configuration, the one
shared by every cost profile): hard constraints are never violated, the profile matters,
save/load round trips, candidate sets, training config. The paper's models:
test_icarma_paper.py."""

from __future__ import annotations

import pytest
import torch

from engine import artifact_cache, artifacts
from engine.papers.recourse_benchmark import rejected_population
from engine.preferences import ActionabilityProfiles
from engine.recourse import get_method
from engine.recourse.icarma.training import ICarmaConfig
from tests.engine.scenario_profiles import context_of, profiles_of

L, D, INC, S = 3, 4, 5, 6


@pytest.fixture(scope="module")
def people(loan, clf):
    return rejected_population(loan, clf, 300)


def _fast(loan, clf, cost_profile="constant", **options):
    """iCARMA with the fast configuration's (quick-trained) model."""
    return get_method("icarma", context_of(loan, clf, cost_profile), training="fast", **options)


@pytest.mark.parametrize("name", ["icarma", "carma"])
@pytest.mark.parametrize("repair", [True, False])
@pytest.mark.parametrize("k", [1, 2, None])
def test_never_acts_outside_the_actionable_set(loan, clf, people, name, repair, k):
    fast = {"training": "fast"} if name == "icarma" else {}  # CARMA is trained one way
    method = get_method(name, context_of(loan, clf, "convex"), repair=repair, **fast)
    profiles = profiles_of(loan, len(people), k, seed=11)
    batch = method.recourse(people, profiles)
    assert int(batch.violations.sum()) == 0
    assert not bool((batch.action_mask & ~profiles.hard_mask).any())
    assert bool(batch.action_mask.any(dim=1).all())  # everyone gets an action


def test_adversarial_single_feature_profiles(loan, clf, people):
    """Each person may act only on the feature the unconstrained model likes least."""
    method = _fast(loan, clf)
    everyone = profiles_of(loan, len(people), 4, seed=1)
    free = method.recourse(people, everyone)
    unused = (~free.action_mask[:, list(loan.actionable)]).float().argmax(dim=1)
    hard = torch.zeros(len(people), loan.d, dtype=torch.bool)
    hard[torch.arange(len(people)), torch.tensor(loan.actionable)[unused]] = True
    scores = torch.where(hard, 1.0, 2.0).double()
    one = ActionabilityProfiles(hard, scores, torch.ones(len(people)).double(), "ranking")
    batch = method.recourse(people, one)
    assert int(batch.violations.sum()) == 0
    assert torch.equal(batch.action_mask, hard)


def test_soft_preferences_move_actions_away_from_the_hardest_feature(loan, clf, people):
    profiles = profiles_of(loan, len(people), 4, seed=5)
    const = _fast(loan, clf, "constant").recourse(people, profiles)
    convex = _fast(loan, clf, "convex").recourse(people, profiles)
    assert convex.summary()["hap"] < const.summary()["hap"]


def test_carma_ignores_scores(loan, clf, people):
    a = profiles_of(loan, 100, 4, seed=2)
    b = profiles_of(loan, 100, 4, seed=3)  # same hard masks (all four), other rankings
    carma = get_method("carma", context_of(loan, clf, "convex"))
    ra, rb = carma.recourse(people[:100], a), carma.recourse(people[:100], b)
    assert torch.equal(ra.action_values, rb.action_values)


def test_save_load_round_trip_gives_identical_recourses(loan, clf, people, tmp_path):
    profiles = profiles_of(loan, 200, None, seed=4)
    first = _fast(loan, clf).recourse(people[:200], profiles)
    artifact_cache.forget("loan", "icarma")  # force a fresh load from disk
    model = artifacts.load_amortized("loan", "icarma")
    second = _fast(loan, clf, model=model).recourse(people[:200], profiles)
    assert torch.equal(first.action_mask, second.action_mask)
    assert torch.equal(first.action_values, second.action_values)
    assert torch.equal(first.x_cf, second.x_cf)


def test_likert_profiles_use_the_likert_model(loan, clf):
    method = _fast(loan, clf)
    likert = profiles_of(loan, 3, None, elicitation="likert")
    assert method.model_for(likert) is artifacts.load_amortized("loan", "icarma-likert")
    assert method.model_for(profiles_of(loan, 3)) is artifacts.load_amortized("loan", "icarma")


def test_candidates_are_valid_distinct_and_within_the_set(loan, clf, people):
    profiles = profiles_of(loan, 20, None, seed=8)
    method = _fast(loan, clf, "linear")
    cands = method.candidates(people[:20], profiles)
    assert bool(cands.valid.all()) and int(cands.violations.sum()) == 0
    assert not bool((cands.action_mask & ~profiles.hard_mask[cands.person]).any())
    counts = torch.bincount(cands.person, minlength=20)
    assert int(counts.max()) > 1  # a choice of plans, at several sparsity levels
    levels = []
    for i in cands.person.unique().tolist():
        rows = cands.person == i
        assert bool((cands.l0_actions[rows] >= 1).all())  # every candidate acts
        levels.append(cands.l0_actions[rows].unique().numel())
        w = cands.weighted_cost[rows]
        assert bool((w[1:] >= w[:-1]).all())
        key = cands.action_values[rows]
        assert torch.unique(key, dim=0).shape[0] == key.shape[0]
    assert max(levels) >= 2  # someone is offered plans of different sparsity


def test_reduced_config_is_small_and_validated():
    cfg = ICarmaConfig.fast().reduced()
    assert cfg.epochs <= 20 and cfg.max_people is not None
    with pytest.raises(ValueError, match="cost_profiles"):
        ICarmaConfig(cost_profiles=("steep",))
    assert ICarmaConfig.from_dict(cfg.to_dict()) == cfg
