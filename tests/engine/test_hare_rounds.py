"""What T means in HARE's state machine (engine.recourse.hare.config, ``iterations_reading``):
the paper's text (the default: T rounds of B // T questions, the incumbent and B // T - 1 new
candidates, the accept question after each round) or its released code (rounds of T new
candidates beside the incumbent, B // T of them, no accept question: B comparisons). Every
pair is favourable under ``ApproveAll``, so every person is asked every comparison a round
holds (no trained artifact needed)."""

from __future__ import annotations

import json

import pytest
import torch

from engine.recourse.base import RecourseContext
from engine.recourse.hare.config import LEGACY, HareConfig
from engine.recourse.hare.method import Hare
from engine.recourse.hare.state import HareState
from tests.engine.hare_people import ApproveAll, N, drive, people_and_base_plans

MUTATION_WARM_UP = (people_and_base_plans,)


@pytest.fixture(scope="module")
def lenient(setup, base):
    ctx, x, profiles = setup
    return RecourseContext(ctx.scenario, ApproveAll()), x, profiles, base["lenient"]


@pytest.mark.parametrize(("reading", "iterations", "keep", "rounds", "contenders", "accepts"), [
    # the code's T = 10 at B = 30: three rounds of ten new candidates and the incumbent
    ("code", 10, True, 3, 11, 0),
    ("code", 3, True, 10, 4, 0),
    ("code", 1, True, 1, 31, 0),  # HARE: one round of B new candidates
    ("code", 7, True, 4, 8, 0),  # B // T rounds: 28 of the 30 questions
    ("code", 10, False, 3, 10, 0),  # new candidates only: 9 comparisons a round
    # the text's T = 10: ten rounds of the incumbent and two new candidates, an accept each
    ("text", 10, True, 10, 3, 10),
    ("text", 3, True, 3, 10, 3),
])
def test_the_rounds_follow_the_reading_of_t(lenient, reading, iterations, keep, rounds,
                                            contenders, accepts):
    ctx, x, profiles, plans = lenient
    hare = Hare(ctx, "gs", budget=30, iterations=iterations, steps=1, bisections=2,
                keep_incumbent=keep, iterations_reading=reading)
    state = hare.start(x, profiles, plans, 0)
    per_round, accept_at, seen = drive(state, choose_right=True)  # the challenger every time
    assert seen == [contenders] * rounds
    # every pair is favourable: everybody is asked every comparison a round holds
    assert {t: a.tolist() for t, a in per_round.items() if t >= 0} == {
        t: [contenders - 1] * N for t in range(rounds)}
    assert len(accept_at) == accepts
    assert state.asked.tolist() == [rounds * (contenders - 1) + accepts] * N
    assert state.t == rounds and not state.accepted.any()


def test_the_codes_t_10_asks_exactly_the_budget_in_comparisons(lenient):
    """B = 30, T = 10 under the code's reading: 30 comparisons in 3 rounds, nobody is asked
    whether they accept a plan; the text's T = 10 spends the same 30 questions on 20
    comparisons and 10 accept questions."""
    ctx, x, profiles, plans = lenient
    for reading, comparisons in (("code", 30), ("text", 20)):
        hare = Hare(ctx, "gs", budget=30, iterations=10, steps=1, bisections=2,
                    iterations_reading=reading)
        state = hare.start(x, profiles, plans, 0)
        per_round, _, _ = drive(state, choose_right=True)
        assert sum(a for t, a in per_round.items() if t >= 0).tolist() == [comparisons] * N
        assert state.asked.tolist() == [30] * N


def test_the_text_is_the_default_and_the_readings_shape_rounds():
    assert HareConfig().iterations_reading == "text"
    assert LEGACY["iterations_reading"] == "text"
    shapes = {
        (30, 10, True, "code"): (3, 10), (30, 3, True, "code"): (10, 3),
        (30, 2, True, "code"): (15, 2), (30, 1, True, "code"): (1, 30),
        (30, 7, False, "code"): (4, 7), (30, 30, True, "code"): (1, 30),
        (30, 10, True, "text"): (10, 2), (30, 10, False, "text"): (10, 3),
        (30, 1, True, "text"): (1, 29), (7, 2, True, "text"): (2, 2),
    }
    for (budget, t, keep, reading), (rounds, new) in shapes.items():
        cfg = HareConfig(budget=budget, iterations=t, keep_incumbent=keep,
                         iterations_reading=reading)
        assert (cfg.rounds, cfg.new_candidates) == (rounds, new), (budget, t, keep, reading)
    for final in ("ask", "skip"):
        code = HareConfig(iterations=5, final_accept=final, iterations_reading="code")
        assert not code.asks_accept(last=False) and not code.asks_accept(last=True)
        text = HareConfig(iterations=5, final_accept=final)
        assert text.asks_accept(last=False)
        assert text.asks_accept(last=True) is (final == "ask")


def test_bad_readings_and_budgets_are_refused_with_a_message():
    cases = [
        (dict(iterations_reading="paper"),
         "iterations_reading must be 'text' or 'code' (got 'paper')"),
        (dict(budget=30, iterations=31, iterations_reading="code"),
         "budget must be at least iterations under iterations_reading 'code' (T = 31 new "
         "candidates a round; got budget 30)"),
        (dict(budget=0, iterations=1, iterations_reading="code"),
         "budget must be at least iterations under iterations_reading 'code' (T = 1 new "
         "candidates a round; got budget 0)"),
        (dict(iterations=0, iterations_reading="code"), "iterations must be >= 1 (got 0)"),
        (dict(budget=2, iterations=3, iterations_reading="text"),
         "budget must be at least 6 for 3 iteration(s) keeping the incumbent (got budget 2)"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError) as err:
            HareConfig(**kwargs)
        assert str(err.value) == message
    # the limits: T = B new candidates in one round; T = 20 at B = 30 (one round of twenty,
    # which the text's reading refuses: one question a round leaves no room for the
    # incumbent and a new candidate)
    assert HareConfig(budget=30, iterations=30, iterations_reading="code").rounds == 1
    assert HareConfig(budget=30, iterations=20, iterations_reading="code").rounds == 1
    assert HareConfig(budget=1, iterations=1, iterations_reading="code").rounds == 1
    with pytest.raises(ValueError, match="keeping the incumbent"):
        HareConfig(budget=30, iterations=20)


def test_a_state_stored_without_the_reading_restores_as_the_text(setup, base):
    ctx, x, profiles = setup
    hare = Hare(ctx, "gs", budget=6, iterations=2, steps=2)
    state = hare.start(x, profiles, base["bayes"], 0)
    stored = json.loads(json.dumps(state.to_dict()))
    assert stored["config"]["iterations_reading"] == "text"
    del stored["config"]["iterations_reading"]
    old = HareState.from_dict(ctx, stored)
    assert old.config == state.config and old.to_dict() == state.to_dict()


def test_the_codes_reading_survives_a_round_trip_mid_run(lenient):
    """Stored after its first round and restored, a machine under the code's reading asks
    the same questions and ends on the same plans as the one that ran on."""
    ctx, x, profiles, plans = lenient
    hare = Hare(ctx, "gs", budget=6, iterations=2, steps=1, bisections=2,
                iterations_reading="code")
    state = hare.start(x, profiles, plans, 3)
    while state.t == 0:
        state.answer(torch.ones(N, dtype=torch.long))
    stored = json.loads(json.dumps(state.to_dict()))
    assert stored["config"]["iterations_reading"] == "code"
    twin = HareState.from_dict(ctx, stored)
    assert twin.config.iterations_reading == "code"
    for machine in (state, twin):
        while machine.phase != "done":
            machine.answer(torch.ones(N, dtype=torch.long))
    assert twin.to_dict() == state.to_dict()
    assert state.t == 3 and state.asked.tolist() == [6] * N
