"""CARMA's published Loan samples (engine/scenarios/data/carma-loan): our SCM reproduces
every published X from its U, the label rule reproduces every published label from X, and
the ``loan-carma`` scenario serves them by role."""

from __future__ import annotations

import pytest
import torch

from engine.scenarios import get_scenario
from engine.scenarios.loan import INC, D, L, S
from engine.scenarios.samples import CARMA_LOAN, ROLES, SPLITS, make_labels

SIZES = {
    "decision": (10_000, 5_000, 5_000),
    "flow": (20_000, 2_500, 2_500),
    "recourse": (10_000, 5_000, 5_000),
}


@pytest.fixture(scope="module")
def carma():
    return get_scenario("loan-carma")


def test_the_samples_ship_with_their_license():
    folder = CARMA_LOAN.folder
    assert "MIT License" in (folder / "LICENSE").read_text()
    assert "ayanmaj92/carma-recourse" in (folder / "README.md").read_text()
    assert len(list(folder.glob("*/*_X.pt"))) == 9


@pytest.mark.parametrize("role", ROLES)
def test_roles_and_splits_are_the_published_files(carma, role):
    data = carma.data(role)
    assert tuple(len(data[s][0]) for s in SPLITS) == SIZES[role]
    assert all(data[s][0].dtype == torch.float64 for s in SPLITS)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("split", SPLITS)
def test_our_scm_reproduces_the_published_x_from_u(carma, role, split):
    """x = f(u) through our structural equations: equal up to the files' float32 rounding."""
    x = carma.data(role)[split][0]
    u = CARMA_LOAN.noise(role, split)
    assert torch.allclose(carma.scm.predict(u), x, rtol=1e-6, atol=4e-6)
    # and abduction inverts it: u = f^-1(x) (the Gamma draw U_A = A + 35)
    assert torch.allclose(carma.scm.abduct(x)[:, 1], u[:, 1], rtol=1e-6, atol=4e-6)


@pytest.mark.parametrize("role", ("decision", "recourse"))
@pytest.mark.parametrize("split", SPLITS)
def test_the_label_rule_reproduces_every_published_label(carma, role, split):
    x, y = carma.data(role)[split]
    assert torch.equal(make_labels(carma.scm, x, "threshold", seed=0), y)
    # not a coin flip: the Bernoulli rule disagrees with the files on about a tenth of rows
    flips = (make_labels(carma.scm, x, "bernoulli", seed=1) != y).double().mean()
    assert 0.05 < float(flips) < 0.15


def test_the_flow_files_label_without_the_sign_term(carma):
    """The causal-estimator labels follow z = -L - D + I + S + I S (no sgn); the flow never
    uses labels, so the scenario serves them as published."""
    x, y = carma.data("flow")["train"]
    z = -x[:, L] - x[:, D] + x[:, INC] + x[:, S] + x[:, INC] * x[:, S]
    assert torch.equal((z >= 0).double(), y)
    assert not torch.equal(make_labels(carma.scm, x, "threshold", seed=0), y)


def test_label_rules_of_the_scm_scenarios():
    loan, bern = get_scenario("loan"), get_scenario("loan-bernoulli")
    x, y = loan.dataset["test"]
    assert torch.equal(y, (loan.scm.label_logit(x) >= 0).double())  # Bayes accuracy 1
    xb, yb = bern.dataset["test"]
    assert torch.equal(x, xb)  # the same people, other labels
    bayes = float(((bern.scm.label_logit(xb) >= 0).double() == yb).double().mean())
    assert 0.85 < bayes < 0.93
    with pytest.raises(ValueError, match="label rule"):
        make_labels(loan.scm, x[:3], "coin", seed=0)


def test_bounds_come_from_the_recourse_training_split(carma):
    x = carma.data("recourse")["train"][0]
    assert torch.equal(carma.bounds[0], x.min(dim=0).values)
    assert torch.equal(carma.bounds[1], x.max(dim=0).values)
    with pytest.raises(ValueError, match="data role"):
        carma.data("classifier")
