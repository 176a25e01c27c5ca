"""What each iteration's tournament is made of in HARE's state machine
(engine.recourse.hare.state): the incumbent as contender 0, the calibration of the contenders
or of the winner to the decision boundary (and its margin), the search settings, and machines
whose searches wait (``defer``) to run together (``propose_all``), stored and restored in
between (the exact Bayes decision rule: no trained artifact needed)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import torch

from engine.recourse.base import RecourseContext
from engine.recourse.hare.method import Hare
from engine.recourse.hare.search import boundary_point_search
from engine.recourse.hare.state import HareState
from engine.recourse.shift_actions import allowed_mask, favourable_logit, realize
from tests.engine.hare_people import ApproveAll, N, people_and_base_plans

MUTATION_WARM_UP = (people_and_base_plans,)
PARTS = [torch.arange(0, 5), torch.arange(5, 9), torch.arange(9, 12)]  # machines of 5, 4, 3
TWO = [torch.arange(0, 7), torch.arange(7, 12)]  # machines of 7 and 5


@pytest.mark.parametrize("calibrate", ["all", "winner"])
def test_keeping_the_incumbent_makes_it_contender_zero(setup, base, calibrate):
    """keep_incumbent (the default): contender 0 of each iteration is the plan it starts from,
    beside B // T - 1 new candidates; the base plan r_0 enters iteration 1 calibrated by
    BoundaryPointSearch when every contender is (calibrate="all"), as it is otherwise."""
    ctx, x, profiles = setup
    hare = Hare(ctx, "gs", budget=8, iterations=2, steps=2, calibrate=calibrate)
    assert hare.config.keep_incumbent
    state = hare.start(x, profiles, base["bayes"], 0)
    assert state.contenders.shape == (N, 4, x.shape[1]) and state.valid.shape == (N, 4)
    first, valid = state.incumbent, state.incumbent_valid
    if calibrate == "all":
        first, calibrated = boundary_point_search(ctx, state.x, first, state.allowed)
        valid = valid & calibrated
        assert not torch.equal(first[valid], state.incumbent[valid])  # it did move
    assert torch.equal(state.contenders[:, 0], first)
    assert torch.equal(state.valid[:, 0], valid)
    while state.phase == "compare":
        state.answer(torch.ones(N, dtype=torch.long))
    state.accept(torch.zeros(N, dtype=torch.bool))
    assert state.t == 1 and state.phase in ("compare", "done")
    assert torch.equal(state.contenders[:, 0], state.incumbent)
    assert torch.equal(state.valid[:, 0], state.incumbent_valid)


def test_calibration_moves_contenders_or_only_the_winner_to_the_boundary(setup, base):
    """Under a model that approves everything, the boundary search (``bisections`` halvings)
    scales a plan by 2**-bisections: calibrate="all" does it to every contender and leaves
    the winner as it is, calibrate="winner" to the winner only."""
    ctx, x, profiles = setup
    lenient = RecourseContext(ctx.scenario, ApproveAll())
    states = {}
    for cal in ("all", "winner"):
        hare = Hare(lenient, "gs", budget=4, iterations=1, steps=2, bisections=3,
                    calibrate=cal)
        states[cal] = hare.start(x, profiles, base["lenient"], 0)
    raw = states["winner"].contenders.clone()
    torch.testing.assert_close(states["all"].contenders, raw * 0.125)
    calibrated = states["all"].contenders.clone()
    for state in states.values():
        while state.phase == "compare":
            state.answer(torch.ones(N, dtype=torch.long))  # the last contender wins
    assert torch.equal(states["all"].result[0], calibrated[:, -1])
    torch.testing.assert_close(states["winner"].result[0], raw[:, -1] * 0.125)


@pytest.mark.parametrize("setting", [{"lr": 0.5}, {"lam": 0.0}, {"steps": 2}, {"gamma": 0.3}])
def test_the_search_settings_reach_the_search(setup, base, setting):
    """Each search setting changes the contenders; the paper's search radius is the configured
    gamma, exactly (0.3 is not a float32 number)."""
    ctx, x, profiles = setup
    default = Hare(ctx, "gs", budget=4, iterations=1, steps=5).start(x, profiles,
                                                                     base["bayes"], 0)
    other = Hare(ctx, "gs", budget=4, iterations=1, **{"steps": 5, **setting}).start(
        x, profiles, base["bayes"], 0)
    assert not torch.allclose(default.contenders, other.contenders)
    assert other.gamma.tolist() == [other.config.gamma] * N


def _logits(context, x, allowed, z):
    """logit P(favourable | x'(z)) (n, m) of plans z (n, m, d) of people x (n, d)."""
    n, m, d = z.shape
    r = realize(context, x.repeat_interleave(m, dim=0), z.reshape(n * m, d),
                allowed.repeat_interleave(m, dim=0))
    return favourable_logit(context, r.x_cf).reshape(n, m)


@pytest.mark.parametrize("calibrate", ["all", "winner"])
def test_a_boundary_margin_holds_for_favourable_contenders_and_winners(setup, base, calibrate):
    """``boundary_margin`` m: favourable means logit P(favourable | x') >= m, for the new
    contenders (calibrated to that boundary, or as drawn under calibrate="winner"), the
    calibrated first incumbent and a calibrated winner. The base plans, favourable at logit
    0, mostly fall short of m = 2: that is where a forgotten margin shows."""
    ctx, x, profiles = setup
    m, eps = 2.0, 1e-6
    hare = Hare(ctx, "gs", budget=6, iterations=1, steps=2, calibrate=calibrate,
                boundary_margin=m, final_accept="skip")
    state = hare.start(x, profiles, base["bayes"], 0, defer=True)
    r0, r0_valid = state.incumbent.clone(), state.incumbent_valid.clone()
    HareState.propose_all([state])
    logit, valid = _logits(ctx, state.x, state.allowed, state.contenders), state.valid
    assert (logit[:, 1:][valid[:, 1:]] >= m - eps).all()
    assert (logit[:, 1:][~valid[:, 1:]] < m + eps).all()
    if calibrate == "all":  # r_0 calibrated: favourable with the margin, and as a base plan
        assert (logit[:, 0][valid[:, 0]] >= m - eps).all() and not (valid[:, 0] & ~r0_valid).any()
        assert (r0_valid & ~valid[:, 0]).any()  # some base plan fell short of the margin
    else:  # new contenders as drawn: some favourable ones fall short of the margin
        assert ((logit[:, 1:] >= 0) & ~valid[:, 1:]).any()
    while state.phase == "compare":
        state.answer(torch.ones(N, dtype=torch.long))
    assert state.phase == "done"
    z, z_valid = state.result
    moved = (z != r0).any(dim=1) & z_valid  # a favourable winner replaced the base plan
    assert moved.any()
    assert (_logits(ctx, state.x, state.allowed, z[:, None])[moved, 0] >= m - eps).all()


class _Calls:
    """The Bayes rule, recording the rows of every call (a float32 network rounds a row's logit
    differently with the rows beside it in the call)."""

    def __init__(self, rule):
        self.rule, self.rows = rule, []

    def predict_proba(self, x):
        self.rows.append(len(x))
        return self.rule.predict_proba(x)

    def decision(self, x):
        self.rows.append(len(x))
        return self.rule.decision(x)


@pytest.mark.parametrize(("keep", "calibrate", "parts"),
                         [(True, "all", PARTS), (False, "all", PARTS), (True, "winner", TWO)])
def test_machines_proposing_together_get_what_each_finds_alone(setup, base, keep, calibrate,
                                                               parts):
    """Deferred machines (people in groups of 5, 4 and 3, or 7 and 5, each with its own seed)
    searched together by propose_all get exactly the contenders, the calibrated first incumbent
    included, and the questions each finds alone; so do their next iterations. The decision
    model gets the calls it gets for the machines alone, each on one machine's rows
    (engine.recourse.hare.search, groups): with a float32 network, rows judged beside another
    machine's would come out other than alone."""
    ctx, x, profiles = setup
    model = _Calls(ctx.classifier)
    hare = Hare(RecourseContext(ctx.scenario, model), "gs", budget=6, iterations=2, steps=3,
                keep_incumbent=keep, calibrate=calibrate)
    groups, calls = {}, {}
    for name in ("alone", "together"):
        model.rows.clear()
        groups[name] = [hare.start(x[p], profiles[p], base["bayes"].select(p), 20 + i,
                                   defer=name == "together") for i, p in enumerate(parts)]
        if name == "together":
            assert all(m.pending for m in groups[name]) and model.rows == []
            HareState.propose_all(groups[name])
        calls[name] = Counter(model.rows)
    assert calls["together"] == calls["alone"]
    for step in range(2):
        for a, b in zip(groups["alone"], groups["together"], strict=True):
            assert b.pending is False and a.to_dict() == b.to_dict(), step
        if step == 1:
            break
        for name, group in groups.items():  # each picks the challenger, declines, goes on
            model.rows.clear()
            for m in group:
                while m.phase == "compare":
                    m.answer(torch.ones(m.n, dtype=torch.long))
                if m.phase == "accept":
                    m.defer = name == "together"
                    m.accept(torch.zeros(m.n, dtype=torch.bool))
            HareState.propose_all([m for m in group if m.pending])
            calls[name] = Counter(model.rows)
        assert calls["together"] == calls["alone"]
        assert all(m.t == 1 for g in groups.values() for m in g)


def test_machines_of_another_config_or_context_are_not_searched_together(setup, base):
    ctx, x, profiles = setup
    p = torch.arange(3)

    def machine(context, steps):
        hare = Hare(context, "gs", budget=4, iterations=2, steps=steps)
        return hare.start(x[p], profiles[p], base["bayes"].select(p), 0, defer=True)

    one = machine(ctx, 2)
    same_rule = RecourseContext(ctx.scenario, ctx.classifier)  # another context object
    for other in (machine(ctx, 3), machine(same_rule, 2)):
        with pytest.raises(ValueError, match=r"^machines proposing together need the same "
                           r"context and config$"):
            HareState.propose_all([one, other])
    assert one.pending


def test_a_pending_machine_is_stored_only_when_asked_and_searched_on_restore(setup, base):
    """A deferred machine waiting for its search has no question to ask and is not stored by
    mistake (its contenders are not searched yet); stored with ``pending=True`` (to be
    searched elsewhere), it restores pending when restored deferred, and is searched on
    restore otherwise: either way it ends as the machine searched in place."""
    ctx, x, profiles = setup
    p = torch.arange(4)
    hare = Hare(ctx, "gs", budget=6, iterations=2, steps=2)
    here = hare.start(x[p], profiles[p], base["bayes"].select(p), 5, defer=True)
    message = r"^the machine's next contenders are not searched yet \(propose_all\)$"
    for ask in (here.query, here.to_dict):
        with pytest.raises(ValueError, match=message):
            ask()
    stored = json.loads(json.dumps(here.to_dict(pending=True)))
    assert stored["pending"] is True
    later = HareState.from_dict(ctx, stored, defer=True)
    assert later.pending is True and later.defer
    now = HareState.from_dict(ctx, stored)
    assert not now.pending
    HareState.propose_all([here])
    HareState.propose_all([later])
    assert "pending" not in here.to_dict(pending=True)
    assert here.to_dict() == later.to_dict() == now.to_dict()
    rebuilt = HareState(ctx, hare.config, here.to_dict())  # from its data, not deferred
    while rebuilt.t == 0:
        if rebuilt.phase == "compare":
            rebuilt.answer(torch.ones(len(p), dtype=torch.long))
        else:
            rebuilt.accept(torch.zeros(len(p), dtype=torch.bool))
    assert not rebuilt.pending and rebuilt.phase == "compare"  # searched iteration 2 itself


class _RejectAll:
    def predict_proba(self, x):
        return torch.zeros(x.shape[0], dtype=x.dtype)

    def decision(self, x):
        return torch.zeros(x.shape[0], dtype=torch.bool)


def test_a_deferred_machine_nobody_has_to_answer_runs_to_its_end_in_one_propose_all(setup):
    """Under a model that rejects everything, with no favourable base plan, nobody is asked
    anything: every tournament resolves itself, so one propose_all searches the deferred
    machine's iterations one after another, to its end, as a machine started without
    ``defer`` does at once."""
    ctx, x, profiles = setup
    p = torch.arange(3)
    reject = RecourseContext(ctx.scenario, _RejectAll())
    config = Hare(reject, "gs", budget=6, iterations=3, steps=2).config
    args = (reject, config, x[p], allowed_mask(reject, profiles[p].hard_mask),
            torch.zeros(len(p), x.shape[1], dtype=torch.float64),
            torch.zeros(len(p), dtype=torch.bool), 7)
    alone, deferred = HareState.start(*args), HareState.start(*args, defer=True)
    assert deferred.pending
    HareState.propose_all([deferred])
    assert not deferred.pending and (deferred.phase, deferred.t) == ("done", 3)
    assert deferred.to_dict() == alone.to_dict() and alone.asked.tolist() == [0, 0, 0]
