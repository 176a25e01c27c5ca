"""The people HARE's state-machine tests share (tests/engine/test_hare_budget.py,
test_hare_contenders.py, test_hare_rounds.py): N rejected loan applicants, their profiles and
the base method's plans under the exact Bayes rule and under a model that approves everybody
(no trained artifact needed), and ``drive``, which answers a machine to its end."""

from __future__ import annotations

import functools

import torch

from engine.decision import BayesDecision
from engine.papers.recourse_benchmark import rejected_population
from engine.preferences import sample_profiles
from engine.recourse import get_method
from engine.recourse.base import RecourseContext
from engine.scenarios import get_scenario

N = 12


class ApproveAll:
    """A decision model that approves every profile: every pair is favourable, so every
    person is asked every comparison the budget allows."""

    def predict_proba(self, x):
        return torch.ones(x.shape[0], dtype=x.dtype)

    def decision(self, x):
        return torch.ones(x.shape[0], dtype=torch.bool)


@functools.cache
def people_and_base_plans():
    """((Bayes context, x, profiles), {"bayes": plans, "lenient": plans}): the base method's
    plans (gs, what Hare.base_plans returns) under the Bayes rule and under ``ApproveAll``.
    They do not depend on HARE's configuration, so every test shares them. Computed once per
    process; in a mutation run once in mutmut's fork server (a test module's
    MUTATION_WARM_UP, scripts/mutation_plugin.py), which keeps them only if no mutated
    function was reached (so no Hare, whose config is HARE state's HareConfig, is built
    here)."""
    loan = get_scenario("loan")
    ctx = RecourseContext(loan, BayesDecision(loan))
    x = rejected_population(loan, ctx.classifier, N).double()
    profiles = sample_profiles(loan.feature_names, loan.actionable, N, distribution="uniform",
                               n_actionable=None, elicitation="ranking", seed=4)
    lenient = RecourseContext(loan, ApproveAll())
    base = {"bayes": get_method("gs", ctx).recourse(x, profiles),
            "lenient": get_method("gs", lenient).recourse(x, profiles)}
    return (ctx, x, profiles), base


def drive(state, choose_right: bool) -> tuple[dict[int, torch.Tensor], list[int], list[int]]:
    """Answer every query like Hare.run does, never accepting (so the machine runs through
    all its rounds): (each person's comparisons per round, their accept questions under key
    -1; the rounds after which acceptance was asked; the contenders of each round)."""
    per_round: dict[int, torch.Tensor] = {t: torch.zeros(state.n, dtype=torch.long)
                                          for t in range(state.config.rounds)}
    accept_at: list[int] = []
    contenders: list[int] = []
    while state.phase != "done":
        if state.t == len(contenders):
            contenders.append(int(state.contenders.shape[1]))
        q = state.query()
        if q.kind == "compare":
            per_round[state.t] += q.ask.long()
            state.answer(torch.full((state.n,), int(choose_right)))
        else:
            assert q.kind == "accept" and q.options[0] is state.incumbent
            accept_at.append(state.t)
            per_round[-1] = per_round.get(-1, torch.zeros(state.n, dtype=torch.long))
            per_round[-1] += q.ask.long()
            state.accept(torch.zeros(state.n, dtype=torch.bool))
    return per_round, accept_at, contenders
