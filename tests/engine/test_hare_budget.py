"""HARE's query budget B in the engine (the HARE paper, section 3.4 and Algorithm 4):
k = B // T candidates per iteration, so k - 1 comparisons per tournament and one acceptance
question after each: at most T k <= B questions per person, exactly that many for a person
who sees only favourable pairs and never accepts. Under our ``final_accept="skip"`` the
question after the last tournament is not asked: T (k - 1) + (T - 1) <= B - 1 (the exact Bayes
decision rule: no trained artifact needed)."""

from __future__ import annotations

import pytest
import torch

from engine.recourse.base import RecourseContext
from engine.recourse.hare.method import Hare
from tests.engine.hare_people import ApproveAll, N, drive, people_and_base_plans

MUTATION_WARM_UP = (people_and_base_plans,)


def _accepts(iterations: int, final_accept: str) -> int:
    """Accept questions per person who never accepts: after every tournament (the paper's
    Algorithm 4) or between tournaments only (our ``skip``)."""
    return iterations if final_accept == "ask" else iterations - 1


@pytest.mark.parametrize(("budget", "iterations"), [(7, 2), (9, 3), (15, 1)])
@pytest.mark.parametrize(("choose_right", "final_accept"),
                         [(False, "ask"), (True, "ask"), (True, "skip")])
def test_comparisons_never_exceed_the_budget(setup, base, budget, iterations, choose_right,
                                             final_accept):
    ctx, x, profiles = setup
    hare = Hare(ctx, "gs", budget=budget, iterations=iterations, steps=5,
                final_accept=final_accept)
    state = hare.start(x, profiles, base["bayes"], 0)
    per_iteration, accept_at, _ = drive(state, choose_right)
    k = budget // iterations
    accepts = per_iteration.pop(-1, torch.zeros(N, dtype=torch.long))
    assert sorted(per_iteration) == list(range(iterations))
    for t, asked in per_iteration.items():
        assert int(asked.max()) <= k - 1, (t, asked.tolist())  # k candidates: k - 1 pairs
    acc = _accepts(iterations, final_accept)
    assert int(accepts.max()) <= acc
    total = sum(per_iteration.values()) + accepts
    assert torch.equal(total, state.asked)  # the state counts comparisons and acceptances
    assert int(state.asked.max()) <= iterations * (k - 1) + acc <= budget
    assert accept_at == list(range(acc))  # after every tournament (skip: never the last)


@pytest.mark.parametrize(("budget", "iterations", "keep"),
                         [(7, 1, True), (7, 2, True), (9, 3, False), (9, 3, True), (4, 4, False),
                          (15, 1, False)])
@pytest.mark.parametrize(("calibrate", "final_accept"),
                         [("all", "ask"), ("winner", "ask"), ("all", "skip")])
def test_with_only_favourable_pairs_exactly_the_budget_is_asked(setup, base, budget, iterations,
                                                                 keep, calibrate, final_accept):
    """The same question count with the incumbent kept (k - 1 new candidates) or dropped."""
    ctx, x, profiles = setup
    lenient = RecourseContext(ctx.scenario, ApproveAll())
    hare = Hare(lenient, "gs", budget=budget, iterations=iterations, steps=2,
                calibrate=calibrate, final_accept=final_accept, keep_incumbent=keep)
    state = hare.start(x, profiles, base["lenient"], 0)
    per_iteration, accept_at, _ = drive(state, choose_right=True)
    k = budget // iterations
    accepts = per_iteration.pop(-1, torch.zeros(N, dtype=torch.long))
    assert {t: a.tolist() for t, a in per_iteration.items()} == {
        t: [k - 1] * N for t in range(iterations)}
    acc = _accepts(iterations, final_accept)
    assert accepts.tolist() == [acc] * N
    assert state.asked.tolist() == [iterations * (k - 1) + acc] * N
    assert accept_at == list(range(acc))
    if final_accept == "ask" and budget % iterations == 0:
        assert state.asked.tolist() == [budget] * N  # Algorithm 4 spends the whole budget


def test_state_round_trips_through_plain_data_mid_run(setup):
    """to_dict / from_dict (exact floats through JSON) gives the same machine: the same next
    question and, answered alike, the same end."""
    import json

    from engine.recourse.hare.state import HareState

    ctx, x, profiles = setup
    hare = Hare(ctx, "gs", budget=6, iterations=2, steps=5)
    state = hare.start(x[:4], profiles[torch.arange(4)], hare.base_plans(x[:4],
                       profiles[torch.arange(4)]), 3)
    f64, b, i64 = torch.float64, torch.bool, torch.long  # the machine computes in float64
    assert {n: getattr(state, n).dtype for n in (
        "x", "incumbent", "gamma", "contenders", "allowed", "incumbent_valid", "valid",
        "done", "accepted", "winner", "asked")} == {
        "x": f64, "incumbent": f64, "gamma": f64, "contenders": f64, "allowed": b,
        "incumbent_valid": b, "valid": b, "done": b, "accepted": b, "winner": i64, "asked": i64}
    for step in range(20):
        text = json.dumps(state.to_dict())
        twin = HareState.from_dict(ctx, json.loads(text))
        assert twin.to_dict() == state.to_dict()
        for name in ("x", "allowed", "incumbent", "incumbent_valid", "gamma", "contenders",
                     "valid", "winner", "done", "accepted", "asked"):
            assert getattr(twin, name).dtype == getattr(state, name).dtype, name
        assert (twin.phase, twin.t, twin.pos) == (state.phase, state.t, state.pos)
        if state.phase == "done":
            break
        q, q2 = state.query(), twin.query()
        assert q.kind == q2.kind and torch.equal(q.ask, q2.ask)
        for a, b in zip(q.options, q2.options, strict=True):
            assert torch.equal(a, b)
        if q.kind == "compare":
            choice = torch.tensor([step % 2, 1, 0, 1])
            state.answer(choice)
            twin.answer(choice)
        else:
            state.accept(torch.tensor([False, True, False, False]))
            twin.accept(torch.tensor([False, True, False, False]))
        assert twin.to_dict() == state.to_dict()
    assert state.phase == "done"
    assert state.accepted.tolist()[1] in (True, False)
    z, valid = state.result
    assert z.shape == (4, 7) and valid.dtype == torch.bool


def test_wrong_answers_and_configurations_are_named(setup):
    from engine.recourse.hare.config import HareConfig

    ctx, x, profiles = setup
    lenient = RecourseContext(ctx.scenario, ApproveAll())  # every pair is asked
    hare = Hare(lenient, "gs", budget=4, iterations=2, steps=2)
    state = hare.start(x[:3], profiles[torch.arange(3)],
                       hare.base_plans(x[:3], profiles[torch.arange(3)]), 0)
    assert state.phase == "compare" and state.n == 3
    with pytest.raises(ValueError, match=r"^choice must hold 3 entries of 0 or 1$"):
        state.answer(torch.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"^choice must hold 3 entries of 0 or 1$"):
        state.answer(torch.full((3,), 2))
    with pytest.raises(ValueError, match=r"^no acceptance question is pending \(the machine "
                       r"is at 'compare'\)$"):
        state.accept(torch.zeros(3, dtype=torch.bool))
    while state.phase == "compare":
        state.answer(torch.zeros(3, dtype=torch.long))
    assert state.phase == "accept"
    with pytest.raises(ValueError, match=r"^no comparison is pending \(the machine is at "
                       r"'accept'\)$"):
        state.answer(torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match=r"^yes must hold 3 entries$"):
        state.accept(torch.zeros(2, dtype=torch.bool))
    state.accept(torch.ones(3, dtype=torch.bool))  # everyone accepts: done before t = T
    assert state.phase == "done" and state.accepted.all() and state.t == 1
    done = state.query()
    assert done.kind == "done" and done.ask.dtype == torch.bool and not done.ask.any()
    assert len(done.options) == 1 and torch.equal(done.options[0], state.incumbent)
    cases = [
        (dict(iterations=0), "iterations must be >= 1 (got 0)"),
        (dict(budget=2, iterations=3, keep_incumbent=False),
         "budget must be at least 3 for 3 iteration(s) (got budget 2)"),
        (dict(budget=3, iterations=2),
         "budget must be at least 4 for 2 iteration(s) keeping the incumbent (got budget 3)"),
        (dict(budget=1, iterations=1),
         "budget must be at least 2 for 1 iteration(s) keeping the incumbent (got budget 1)"),
        (dict(boundary_margin=-0.5), "boundary_margin must be >= 0 (got -0.5)"),
        (dict(steps=-1), "steps and bisections must be >= 0"),
        (dict(bisections=-1), "steps and bisections must be >= 0"),
        (dict(lr=0.0), "lr, gamma and gamma_floor must be > 0 and lam >= 0"),
        (dict(gamma=0.0), "lr, gamma and gamma_floor must be > 0 and lam >= 0"),
        (dict(gamma_floor=0.0), "lr, gamma and gamma_floor must be > 0 and lam >= 0"),
        (dict(lam=-0.1), "lr, gamma and gamma_floor must be > 0 and lam >= 0"),
        (dict(shrink=0.0), "shrink must lie in (0, 1] (got 0.0)"),
        (dict(shrink=1.5), "shrink must lie in (0, 1] (got 1.5)"),
        (dict(calibrate="some"), "calibrate must be 'all' or 'winner' (got 'some')"),
        (dict(gamma_schedule="grow"), "gamma_schedule must be 'paper' or 'halve' (got 'grow')"),
        (dict(final_accept="never"), "final_accept must be 'ask' or 'skip' (got 'never')"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError) as err:
            HareConfig(**kwargs)
        assert str(err.value) == message
    assert HareConfig(budget=3, iterations=3, shrink=1.0, lam=0.0,
                      keep_incumbent=False).per_iteration == 1
    # the limits themselves are allowed: no search steps or bisections, two contenders
    # (the incumbent and one new one) per iteration
    assert HareConfig(steps=0, bisections=0).steps == 0
    assert HareConfig(budget=4, iterations=2, keep_incumbent=True).per_iteration == 2
    assert HareConfig(budget=7, iterations=2).per_iteration == 3
    with pytest.raises(ValueError) as err:
        HareConfig(iterations=0, shrink=2.0)
    assert str(err.value) == ("iterations must be >= 1 (got 0); shrink must lie in (0, 1] "
                              "(got 2.0)")


def _step_lengths(state) -> torch.Tensor:
    """(n, k) L2 lengths of the candidates' steps from r_{t-1} before calibration: gamma_t
    (ActionableSampling's directions are unit vectors)."""
    from engine.recourse.hare.search import actionable_sampling

    gen = torch.Generator().manual_seed(0)
    cand = actionable_sampling(state.context, state.x, state.incumbent, state.allowed,
                               state.gamma, 3, gen, steps=2)
    return (cand - state.incumbent[:, None]).norm(dim=2)


def test_the_papers_step_is_gamma_one_in_every_iteration(setup, base):
    """the HARE paper, section 4.2: gamma = 1 for every person and every iteration,
    whatever the base plan's size; the candidates lie at distance 1 from r_{t-1}."""
    ctx, x, profiles = setup
    hare = Hare(ctx, "gs", budget=6, iterations=3, steps=2)
    assert (hare.config.gamma_schedule, hare.config.final_accept) == ("paper", "ask")
    state = hare.start(x, profiles, base["bayes"], 0)
    assert state.gamma.tolist() == [1.0] * N
    has_allowed = state.allowed.any(dim=1)
    torch.testing.assert_close(_step_lengths(state)[has_allowed],
                               torch.ones(int(has_allowed.sum()), 3, dtype=torch.float64))
    for t in (1, 2):
        while state.phase == "compare":
            state.answer(torch.zeros(N, dtype=torch.long))
        state.accept(torch.zeros(N, dtype=torch.bool))
        assert state.t == t and state.gamma.tolist() == [1.0] * N


def test_a_state_stored_without_the_schedule_fields_continues_as_it_ran(setup, base):
    """A machine saved before gamma_schedule / final_accept existed restores with the
    behaviour it ran with (halving gamma, no accept question after the last tournament)."""
    import json

    from engine.recourse.hare.state import HareState

    ctx, x, profiles = setup
    hare = Hare(ctx, "gs", budget=4, iterations=2, steps=2, gamma_schedule="halve",
                final_accept="skip")
    state = hare.start(x, profiles, base["bayes"], 0)
    stored = json.loads(json.dumps(state.to_dict()))
    assert stored["config"]["gamma_schedule"] == "halve"
    for key in ("gamma_schedule", "final_accept"):
        del stored["config"][key]
    old = HareState.from_dict(ctx, stored)
    assert (old.config.gamma_schedule, old.config.final_accept) == ("halve", "skip")
    assert old.to_dict() == state.to_dict()
    for machine in (state, old):
        while machine.phase != "done":
            if machine.phase == "compare":
                machine.answer(torch.ones(N, dtype=torch.long))
            else:
                machine.accept(torch.zeros(N, dtype=torch.bool))
    assert old.to_dict() == state.to_dict()
    assert int(old.asked.max()) <= 2 * (2 - 1) + 1  # no question after the last tournament


def test_the_search_radius_follows_the_base_plan_and_shrinks(setup, base):
    """Our ``gamma_schedule="halve"``: gamma_1 = gamma * max(|r_0|, gamma_floor);
    gamma_{t+1} = shrink * gamma_t."""
    ctx, x, profiles = setup
    hare = Hare(ctx, "gs", budget=4, iterations=2, steps=2, gamma=2.0, gamma_floor=0.5,
                shrink=0.25, gamma_schedule="halve")
    state = hare.start(x, profiles, base["bayes"], 0)
    r0 = state.incumbent  # r_0: the base plan's shift (nobody has answered yet)
    torch.testing.assert_close(state.gamma, 2.0 * r0.norm(dim=1).clamp(min=0.5))
    first = state.gamma.clone()
    while state.phase == "compare":
        state.answer(torch.zeros(N, dtype=torch.long))
    state.accept(torch.zeros(N, dtype=torch.bool))
    assert state.t == 1
    torch.testing.assert_close(state.gamma, 0.25 * first)


@pytest.mark.parametrize("keep", [True, False])
def test_answers_per_person_acceptance_sticks_and_invalid_plans_are_never_asked(setup, base,
                                                                                 keep):
    """Mixed answers (plain lists of 0/1, as a web form gives them): a person who accepts is
    done for good (accepted stays set, no further question, the plan kept even when the
    incumbent is not among the next contenders); nobody is asked to compare a pair with an
    unfavourable plan or to accept an unfavourable plan."""
    ctx, x, profiles = setup
    hare = Hare(ctx, "gs", budget=9, iterations=3, steps=5, keep_incumbent=keep)
    state = hare.start(x, profiles, base["bayes"], 0)
    alternate = [i % 2 for i in range(N)]
    accepted_at: dict[int, int] = {}
    kept: dict[int, torch.Tensor] = {}  # the plan a person accepted
    asked_invalid = 0
    while state.phase != "done":
        q = state.query()
        if q.kind == "compare":
            both = state.valid[torch.arange(N), state.winner] & state.valid[:, state.pos]
            assert torch.equal(q.ask, both & ~state.done)
            asked_invalid += int((~both).sum())
            state.answer(alternate)
        else:
            ask = q.ask.clone()
            assert torch.equal(ask, state.incumbent_valid & ~state.done)
            asked_invalid += int((~state.incumbent_valid).sum())
            before = state.asked.clone()
            yes = [1 - a for a in alternate] if state.t == 0 else alternate  # odd, then even
            state.accept(yes)
            for i in torch.nonzero(ask & torch.tensor(yes, dtype=torch.bool)).flatten().tolist():
                accepted_at[i] = int(before[i]) + 1
                kept[i] = state.incumbent[i].clone()
            assert torch.equal(state.asked - before, ask.long())
        for i, n_asked in accepted_at.items():  # accepted: done, asked nothing more
            assert bool(state.accepted[i]) and bool(state.done[i])
            assert int(state.asked[i]) == n_asked
    assert accepted_at, "somebody accepted"
    assert sorted(accepted_at) == torch.nonzero(state.accepted).flatten().tolist()
    for i, plan in kept.items():  # later tournaments do not replace an accepted plan
        assert torch.equal(state.result[0][i], plan) and bool(state.result[1][i]), i
    assert asked_invalid > 0  # the rule was exercised: some pair or plan was unfavourable


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("batch", ["everyone", "one at a time"])
def test_the_tournament_follows_the_answers_and_resolves_unfavourable_pairs(setup, base,
                                                                            batch, keep):
    """One tournament against a reference loop over the contenders: the winner meets
    contenders 1..k-1 in turn; a pair of two favourable plans is asked and the answer decides
    (1: the challenger), a favourable challenger beats an unfavourable winner unasked,
    otherwise the winner stays; the result is the winner, unless the base plan was favourable
    and the winner is not (then the base plan). Batches of one (a web participant) meet pairs
    nobody has to judge more often: those resolve without a question. Without
    ``keep_incumbent`` contender 0 is a new candidate, unfavourable for some people: a
    favourable challenger takes its place unasked."""
    ctx, x, profiles = setup
    # the tournament alone: no accept question after it (``final_accept="skip"``)
    hare = Hare(ctx, "gs", budget=6, iterations=1, steps=5, final_accept="skip",
                keep_incumbent=keep)
    if batch == "everyone":
        unasked = _one_tournament(hare, x, profiles, base["bayes"], list(range(N)))
        assert keep or unasked > 0
    else:
        for i in range(4):
            _one_tournament(hare, x[i:i + 1], profiles[i], base["bayes"].select([i]), [i])


def _one_tournament(hare, x, profiles, base_plans, people):
    n = len(people)
    state = hare.start(x, profiles, base_plans, 0)
    contenders, valid = state.contenders.clone(), state.valid.clone()
    r0, r0_valid = state.incumbent.clone(), state.incumbent_valid.clone()
    k = contenders.shape[1]
    asked_pairs = []
    while state.phase == "compare":
        q = state.query()
        rows = torch.arange(n)
        assert torch.equal(q.options[0], contenders[rows, state.winner])
        assert torch.equal(q.options[1], contenders[:, state.pos])
        asked_pairs.append(state.pos)
        state.answer(torch.tensor([(p + state.pos) % 2 for p in people]))
    assert state.phase == "done"
    z, z_valid = state.result
    unasked = 0  # favourable challengers winning unasked
    for r, p in enumerate(people):
        w, asked = 0, 0
        for pos in range(1, k):
            if valid[r, w] and valid[r, pos]:
                asked += 1
                if (p + pos) % 2 == 1:
                    w = pos
            elif valid[r, pos]:
                w, unasked = pos, unasked + 1
        assert int(state.asked[r]) == asked, p
        if r0_valid[r] and not valid[r, w]:
            assert torch.equal(z[r], r0[r]) and bool(z_valid[r]), p
        else:
            assert torch.equal(z[r], contenders[r, w]) and bool(z_valid[r]) == bool(valid[r, w])
    return unasked
