"""The Python API's plans: the switches reach the methods that take them, the iCARMA models
are those `recourse-study train` builds unless asked otherwise, and a switch no method
takes is an error rather than silently ignored."""

from __future__ import annotations

import pytest
import torch

import engine
from engine.artifacts import ArtifactMissingError


@pytest.fixture(scope="module")
def loan(trained_home):
    return engine.load("loan")


def test_plans_pass_each_switch_to_the_methods_taking_it(loan):
    person = loan.rejected(3)
    every = {"loan_duration": 1, "loan_amount": 2, "income": 3, "savings": 4}
    can = loan.constraints([every] * 3)
    switches = {"grid": "shared", "bins": 6, "plausibility": False}
    table = loan.plans(person, can, ["oracle", "icarma"], **switches)
    assert list(table["method"]) == ["oracle"] * 3 + ["icarma"] * 3
    assert bool(table["valid"][:3].all())  # no plausibility constraint: always a valid plan
    # the shared grid: every value the Oracle sets is one of 6 evenly spaced range points
    oracle = loan.recourse("oracle", person, can, **switches)
    lo, hi = loan.scenario.bounds.double()
    k = (oracle.action_values - lo) / ((hi - lo) / 5)
    acted = oracle.action_mask
    assert bool(acted.any())
    assert torch.allclose(k[acted], k[acted].round(), atol=1e-6)


def test_the_papers_icarma_is_one_switch_away(loan):
    person = loan.rejected(1)
    can = loan.constraints({"income": 1})
    assert loan.method("icarma").training == "paper"  # the method's own default
    with pytest.raises(ArtifactMissingError, match="--icarma-training paper"):
        loan.plans(person, can, ["icarma"], training="paper")


def test_a_switch_no_method_takes_is_refused(loan):
    person = loan.rejected(1)
    can = loan.constraints({"income": 1})
    with pytest.raises(TypeError, match="repair"):
        loan.plans(person, can, ["oracle"], repair=True)
