"""``elicitation.min_changeable``: the session refuses an answer that leaves fewer items
changeable (the participant's message, nothing stored), in every scheme; the protocol checks
the minimum against its scenario and its simulation; synthetic participants state at least
the minimum and their true constraints are drawn at or above it."""

from __future__ import annotations

import numpy as np
import pytest
from test_session import walk

from engine import BayesDecision, get_scenario, rejected_rows
from engine.synthetic import Behaviour, Population
from protocols.definition.interface_text import english
from protocols.definition.schema import ProtocolError
from protocols.running.pages import AnswerError
from protocols.running.session import Study
from tests.protocols.conftest import scripted_answer

LOAN_ITEMS = ["loan_amount", "loan_duration", "income", "savings"]
MESSAGE = english("elicitation.min_changeable", n=2)


def _at_elicitation(store, protocol_text, scheme: str):
    proto = protocol_text(("elicitation: {scheme: ranking}",
                           f"elicitation: {{scheme: {scheme}, min_changeable: 2}}"))
    s = Study(proto, store).start()
    walk(s, scripted_answer, stop_at="elicitation")
    return s


@pytest.mark.parametrize(("scheme", "one", "two"), [
    ("ranking", {"loan_amount": 1, "loan_duration": None, "income": None, "savings": None},
     {"loan_amount": 2, "loan_duration": None, "income": 1, "savings": None}),
    ("binary", {"loan_amount": False, "loan_duration": True, "income": False, "savings": False},
     {"loan_amount": False, "loan_duration": True, "income": False, "savings": True}),
    ("likert", {"loan_amount": None, "loan_duration": None, "income": None, "savings": 3},
     {"loan_amount": 4, "loan_duration": None, "income": None, "savings": 3}),
])
def test_fewer_changeable_items_are_refused_with_the_message_and_nothing_stored(
        store, protocol_text, scheme, one, two) -> None:
    s = _at_elicitation(store, protocol_text, scheme)
    page = s.current_page()
    assert page.payload.min_changeable == 2
    assert page.payload.model_dump()["min_changeable"] == 2  # stored with the page
    before = store.counts()
    for answers in (one, dict.fromkeys(LOAN_ITEMS, None if scheme != "binary" else False)):
        with pytest.raises(AnswerError) as info:
            s.submit("elicitation", {"answers": answers})
        assert info.value.problems == [MESSAGE]
    assert store.counts() == before
    assert s.current_page().id == "elicitation"
    assert s.study.participant(s.participant_id).stated is None
    nxt = s.submit("elicitation", {"answers": two})  # two items: accepted, plans follow
    assert nxt.id == "plan-1"
    assert int(s.study.participant(s.participant_id).stated.hard_mask.sum()) == 2


def test_a_page_without_a_minimum_takes_one_item_and_stores_no_minimum(
        store, protocol_text) -> None:
    proto = protocol_text()
    s = Study(proto, store).start()
    walk(s, scripted_answer, stop_at="elicitation")
    page = s.current_page()
    assert "min_changeable" not in page.payload.model_dump()  # old payloads stay as they were
    one = {"loan_amount": 1, "loan_duration": None, "income": None, "savings": None}
    assert s.submit("elicitation", {"answers": one}).id == "plan-1"


@pytest.mark.parametrize(("edit", "message"), [
    (("elicitation: {scheme: ranking}", "elicitation: {scheme: ranking, min_changeable: 5}"),
     "only 4 items a participant could change, got 5"),
    (("elicitation: {scheme: ranking}", "elicitation: {scheme: none, min_changeable: 2}"),
     "only an elicitation with a scheme has a minimum"),
    (("elicitation: {scheme: ranking}", "elicitation: {scheme: ranking, min_changeable: 3}\n"
      "simulation: {constraints: {n_actionable_probs: [0.5, 0.5, 0, 0]}}"),
     "no probability for 3 or more changeable items"),
])
def test_the_protocol_checks_the_minimum(protocol_text, edit, message) -> None:
    with pytest.raises(ProtocolError, match=message):
        protocol_text(edit)


def test_the_minimum_leaves_the_fingerprint_of_a_protocol_without_it(protocol_text) -> None:
    plain = protocol_text()
    zero = protocol_text(("elicitation: {scheme: ranking}",
                          "elicitation: {scheme: ranking, min_changeable: 0}"))
    two = protocol_text(("elicitation: {scheme: ranking}",
                         "elicitation: {scheme: ranking, min_changeable: 2}"))
    assert plain.fingerprint() == zero.fingerprint() != two.fingerprint()


def _population(least: int, **kw) -> Population:
    loan = get_scenario("loan")
    test_x = loan.dataset["test"][0]
    x = test_x[rejected_rows(loan, BayesDecision(loan))[:50]].numpy()
    return Population(loan, Behaviour(min_actionable=least, **kw), 3, x)


def test_synthetic_constraints_are_drawn_at_or_above_the_minimum() -> None:
    counts = {least: [int(_population(least).person(i).hard.sum()) for i in range(200)]
              for least in (0, 2)}
    assert min(counts[0]) == 1 and set(counts[0]) == {1, 2, 3, 4}  # the reference: 1..4
    assert set(counts[2]) == {2, 3, 4}  # uniform on 2..4
    assert all(abs(counts[2].count(k) - 200 / 3) < 30 for k in (2, 3, 4))
    probs = _population(3, n_actionable_probs=(0.7, 0.1, 0.1, 0.1))
    assert {int(probs.person(i).hard.sum()) for i in range(100)} == {3, 4}


@pytest.mark.parametrize("scheme", ["ranking", "binary", "likert"])
def test_synthetic_answers_state_at_least_the_minimum(scheme) -> None:
    """Even with every mark flipped at random and true constraints below the minimum (a
    behaviour drawn without it), each answer leaves the page's minimum changeable."""
    people = _population(0, mark_error_rate=0.5)
    stated = []
    for i in range(150):
        answer = people.elicitation(i, scheme, 4, least=2)
        n = sum(v is True or (isinstance(v, int) and not isinstance(v, bool))
                for v in answer.values())
        stated.append(n)
        assert people.elicitation(i, scheme, 4, least=2) == answer  # fixed by the seed
    assert min(stated) == 2
    unlimited = [sum(v is True or (isinstance(v, int) and not isinstance(v, bool))
                     for v in people.elicitation(i, scheme, 4).values()) for i in range(150)]
    assert min(unlimited) < 2  # the same people without a minimum: some state fewer
    assert np.mean(stated) >= np.mean(unlimited)
