"""Pool samples: counterfactual samples from the approved population, evaluated causally."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from engine.decision import BayesDecision
from engine.preferences import all_actionable, sample_profiles
from engine.recourse import RecourseContext, get_method
from engine.scenarios import get_scenario


@pytest.fixture(scope="module")
def setup():
    sc = get_scenario("loan")
    clf = BayesDecision(sc)
    x = sc.dataset["test"][0]
    rejected = x[~clf.decision(x)][:40]
    return sc, clf, rejected


def test_candidates_respect_every_constraint(setup) -> None:
    sc, clf, x = setup
    profiles = sample_profiles(sc.feature_names, sc.actionable, len(x), seed=3)
    pool = get_method("pool", RecourseContext(sc, clf), donors=15)
    c = pool.candidates(x, profiles)
    assert len(c) > 0 and c.valid.all()
    assert (c.x_cf[:, list(sc.immutable)] == x[c.person][:, list(sc.immutable)]).all()
    assert not (c.action_mask & ~profiles.hard_mask[c.person]).any()
    assert c.violations.sum() == 0
    # consequences come from the exact SCM
    again = sc.scm.counterfactual(c.x, c.action_mask, c.action_values)
    assert torch.allclose(again, c.x_cf)
    # donors share the person's gender; acted values are a donor's values
    approved = pool.pool
    for row in range(0, len(c), max(1, len(c) // 50)):
        j = c.action_mask[row].nonzero().flatten()
        hits = (approved[:, j] == c.action_values[row, j]).all(dim=1)
        assert hits.any() and (approved[hits, 0] == x[c.person[row], 0]).all()
    # subsets spread sparsity over 1..|F_i|
    assert set(c.l0_actions.long().tolist()) == {1, 2, 3, 4} or profiles.n_actionable.max() < 4


def test_direction_of_change_is_respected(setup) -> None:
    sc, clf, x = setup
    features = tuple(dataclasses.replace(f, direction=-1) if f.name == "loan_amount" else f
                     for f in sc.features)
    down = dataclasses.replace(sc, features=features)
    pool = get_method("pool", RecourseContext(down, clf), donors=15)
    c = pool.candidates(x, all_actionable(sc.feature_names, sc.actionable, len(x)))
    j = sc.index("loan_amount")
    acted = c.action_mask[:, j]
    assert acted.any()
    assert (c.action_values[acted, j] < c.x[acted, j]).all()


def test_recourse_is_the_cheapest_candidate_and_full_adoption(setup) -> None:
    sc, clf, x = setup
    profiles = sample_profiles(sc.feature_names, sc.actionable, len(x), seed=4)
    pool = get_method("pool", RecourseContext(sc, clf), donors=10)
    r = pool.recourse(x, profiles)
    c = pool.candidates(x, profiles)
    for i in range(len(x)):
        mine = c.weighted_cost[c.person == i]
        assert bool(r.found[i]) == (len(mine) > 0)
        if len(mine):
            assert torch.isclose(r.weighted_cost[i], mine.min())
    full = get_method("pool", RecourseContext(sc, clf), donors=10, partial=False)
    f = full.candidates(x, all_actionable(sc.feature_names, sc.actionable, len(x)))
    assert len(f) <= 10 * len(x) and (f.l0_actions == 4).all()


def test_bad_options() -> None:
    sc = get_scenario("loan")
    with pytest.raises(ValueError, match="donors must be >= 1"):
        get_method("pool", RecourseContext(sc, BayesDecision(sc)), donors=0)
