"""HARE sessions whose searches run together (``defer`` + ``Hare.complete_sessions``) get bit
for bit the candidates, questions and plans they get alone, with the trained (float32 network)
decision model and plan rules, at the start and after "keep looking"."""

from __future__ import annotations

import json

import torch

from engine.artifacts import load_classifier
from engine.recourse import get_method
from engine.recourse.base import RecourseContext
from engine.recourse.plan_rules import PlanRules
from engine.scenarios import get_scenario


def _state(session) -> dict:
    data = json.loads(session.to_json())
    data["base"].pop("runtime", None)  # the base method's wall time
    return data


def test_sessions_searched_together_equal_sessions_alone(trained_home):
    loan = get_scenario("loan")
    rules = PlanRules.of(loan, {"income": "increase", "savings": "increase"})
    ctx = RecourseContext(loan, load_classifier(loan, "trained"), rules=rules)
    hare = get_method("hare", ctx, base="oracle", base_options={"bins": 5},
                      budget=6, iterations=2, steps=6, bisections=6)
    x = loan.dataset["test"][0].to(torch.float64)
    x = x[~ctx.classifier.decision(x.float()).bool()][:5]
    everybody = ctx.everybody(1)

    alone = [hare.start_session(x[i:i + 1], everybody, seed=10 + i) for i in range(5)]
    together = [hare.start_session(x[i:i + 1], everybody, seed=10 + i, defer=True)
                for i in range(5)]
    assert all(s.pending for s in together)
    hare.complete_sessions(together)
    assert not any(s.pending for s in together)
    assert [_state(s) for s in together] == [_state(s) for s in alone]

    for a, b in zip(alone, together, strict=True):  # to the accept question, then go on
        while a.state.phase == "compare":
            a.answer(1)
            b.answer(1)
        assert a.next_query().options == b.next_query().options
    states = [s.to_json() for s in alone]
    resumed = [hare.resume_session(s, defer=True) for s in states]
    for s in resumed:
        s.accept(False)
    hare.complete_sessions(resumed)
    for s in alone:
        s.accept(False)
    assert [_state(s) for s in resumed] == [_state(s) for s in alone]
    assert any(s.state.t == 1 and not s.done for s in alone)  # a second search happened


def test_a_pending_session_searched_from_its_json_equals_the_one_searched_in_place(
        trained_home):
    """What the web server's search worker does: a pending session as JSON
    (``to_json(pending=True)``), resumed deferred, searched, and taken back
    (``take_state``) is the session searched in place, with the same next question."""
    loan = get_scenario("loan")
    ctx = RecourseContext(loan, load_classifier(loan, "trained"))
    hare = get_method("hare", ctx, base="oracle", base_options={"bins": 5},
                      budget=6, iterations=2, steps=6, bisections=6)
    x = loan.dataset["test"][0].to(torch.float64)
    x = x[~ctx.classifier.decision(x.float()).bool()][:2]
    for i in range(2):
        here = hare.start_session(x[i:i + 1], ctx.everybody(1), seed=3 + i, defer=True)
        text = here.to_json(pending=True)
        assert json.loads(text)["state"]["pending"] is True
        elsewhere = hare.resume_session(text, defer=True)
        assert elsewhere.pending
        hare.complete_sessions([here])
        hare.complete_sessions([elsewhere])
        back = hare.start_session(x[i:i + 1], ctx.everybody(1), seed=3 + i, defer=True)
        back.take_state(elsewhere.to_json(), elsewhere.next_query())
        assert not back.pending and _state(back)["state"] == _state(here)["state"]
        assert back.next_query().options == here.next_query().options
