"""Fixtures of the Oracle tests: the exact Bayes rule of the Loan SCM and its rejected people."""

from __future__ import annotations

import pytest

from engine.decision import BayesDecision
from engine.papers.recourse_benchmark import rejected_population


@pytest.fixture(scope="module")
def clf(loan):
    """The exact Bayes rule here, not the trained model: the Oracle's answers are exact."""
    return BayesDecision(loan)


@pytest.fixture(scope="module")
def people(loan, clf):
    return rejected_population(loan, clf, 40)
