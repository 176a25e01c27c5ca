"""Fixtures of the engine tests: the Loan scenario's trained decision model (``clf``), and for
HARE's state-machine tests (test_hare_budget.py, test_hare_contenders.py, test_hare_rounds.py)
the people and base plans of tests/engine/hare_people.py, built once per process."""

from __future__ import annotations

import pytest

from engine import artifacts
from tests.engine.hare_people import people_and_base_plans


@pytest.fixture(scope="module")
def setup():
    """(the Bayes rule's context, the people x, their profiles)."""
    return people_and_base_plans()[0]


@pytest.fixture(scope="module")
def base():
    """The base method's plans for them: {"bayes": ..., "lenient": ...}."""
    return people_and_base_plans()[1]


@pytest.fixture(scope="module")
def clf(trained_home):
    """The Loan scenario's trained (quick) decision model."""
    return artifacts.load_decision_model("loan")
