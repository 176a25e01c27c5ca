"""HARE's query budget B in the engine: at most B comparisons per person over the whole run,
B // T per iteration, exactly that many for a person who sees only favourable pairs and never
accepts, and acceptance questions only between iterations (the exact Bayes decision rule:
no trained artifact needed)."""

from __future__ import annotations

import pytest
import torch

from engine.benchmarks.recourse import rejected_population
from engine.decision import BayesDecision
from engine.preferences import sample_profiles
from engine.recourse.base import RecourseContext
from engine.recourse.hare import Hare
from engine.scenarios import get_scenario

N = 12


@pytest.fixture(scope="module")
def setup():
    loan = get_scenario("loan")
    ctx = RecourseContext(loan, BayesDecision(loan))
    x = rejected_population(loan, ctx.classifier, N).double()
    profiles = sample_profiles(loan.feature_names, loan.actionable, N, distribution="uniform",
                               n_actionable=None, elicitation="ranking", seed=4)
    return ctx, x, profiles


def _drive(state, choose_right: bool):
    """Answer every query like Hare.run does; record each person's comparisons per
    iteration and the iterations at which acceptance was asked."""
    per_iteration: dict[int, torch.Tensor] = {}
    accept_at: list[int] = []
    while state.phase != "done":
        q = state.query()
        if q.kind == "compare":
            t = state.t
            per_iteration[t] = per_iteration.get(t, torch.zeros(state.n, dtype=torch.long))
            per_iteration[t] += q.ask.long()
            state.answer(torch.full((state.n,), int(choose_right)))
        else:
            accept_at.append(state.t)
            state.accept(torch.zeros(state.n, dtype=torch.bool))  # never accept: run to T
    return per_iteration, accept_at


@pytest.mark.parametrize(("budget", "iterations"), [(7, 2), (9, 3), (15, 1)])
@pytest.mark.parametrize("choose_right", [False, True])
def test_comparisons_never_exceed_the_budget(setup, budget, iterations, choose_right):
    ctx, x, profiles = setup
    hare = Hare(ctx, "gs", budget=budget, iterations=iterations, steps=5)
    base = hare.base_plans(x, profiles)
    state = hare.start(x, profiles, base, 0)
    per_iteration, accept_at = _drive(state, choose_right)
    k = budget // iterations
    assert sorted(per_iteration) == list(range(iterations))
    for t, asked in per_iteration.items():
        assert int(asked.max()) <= k, (t, asked.tolist())
    total = sum(per_iteration.values())
    assert torch.equal(total, state.asked)  # the state's counter is the comparisons asked
    assert int(state.asked.max()) <= budget
    assert accept_at == list(range(iterations - 1))  # between iterations, never after the last


class _ApproveAll:
    """A decision model that approves every profile: every pair is favourable, so every
    person is asked every comparison the budget allows."""

    def predict_proba(self, x):
        return torch.ones(x.shape[0], dtype=x.dtype)

    def decision(self, x):
        return torch.ones(x.shape[0], dtype=torch.bool)


@pytest.mark.parametrize(("budget", "iterations"), [(7, 1), (7, 2), (9, 3), (4, 4), (15, 1)])
@pytest.mark.parametrize("calibrate", ["all", "winner"])
def test_with_only_favourable_pairs_exactly_the_budget_is_asked(setup, budget, iterations,
                                                                 calibrate):
    ctx, x, profiles = setup
    lenient = RecourseContext(ctx.scenario, _ApproveAll())
    hare = Hare(lenient, "gs", budget=budget, iterations=iterations, steps=2,
                calibrate=calibrate)
    state = hare.start(x, profiles, hare.base_plans(x, profiles), 0)
    per_iteration, accept_at = _drive(state, choose_right=True)
    k = budget // iterations
    assert {t: a.tolist() for t, a in per_iteration.items()} == {
        t: [k] * N for t in range(iterations)}
    assert state.asked.tolist() == [k * iterations] * N
    assert accept_at == list(range(iterations - 1))
