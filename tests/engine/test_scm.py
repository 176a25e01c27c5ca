"""The exact Loan SCM: counterfactual identities, interventions, exact density, bad input.

The density test recomputes log p(x) independently of engine.scm: the structural equations
are re-implemented here in numpy, the exogenous densities come from scipy.stats and the
Jacobian of the education equation from a finite difference.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats
from scipy.special import expit, logit

from engine.scenarios import UnknownScenarioError, get_scenario
from engine.scm import WorldModelInputError

G, A, E, L, D, INC, S = range(7)


@pytest.fixture(scope="module")
def loan():
    return get_scenario("loan")


@pytest.fixture(scope="module")
def x(loan):
    return loan.scm.sample(2000, seed=7)


def test_feature_order_and_roles(loan):
    assert loan.feature_names == (
        "gender", "age", "education", "loan_amount", "loan_duration", "income", "savings"
    )
    assert loan.immutable == (G, A)
    assert loan.actionable == (L, D, INC, S)
    assert [f.role.value for f in loan.features][:3] == ["immutable", "immutable", "mutable"]


def test_sample_matches_the_spec_sanity_figures(loan):
    x = loan.scm.sample(200_000, seed=0).numpy()
    means = {A: 0.0, E: -0.06, L: 0.03, D: 0.03, INC: 0.49, S: -2.1}
    sds = {A: 11.1, E: 0.14, L: 2.8, D: 4.6, INC: 2.5, S: 5.6}
    for j in means:
        assert abs(x[:, j].mean() - means[j]) < 0.05 + 0.02 * sds[j]
        assert abs(x[:, j].std() - sds[j]) < 0.02 * sds[j] + 0.01
    assert abs(loan.scm.label_proba(x).mean().item() - 0.52) < 0.01


def test_empty_action_returns_the_factual(loan, x):
    none = torch.zeros_like(x, dtype=torch.bool)
    x_cf = loan.scm.counterfactual(x, none, torch.zeros_like(x))
    assert torch.equal(x_cf, x) or (x_cf - x).abs().max() <= 1e-9


def test_abduct_then_predict_is_the_identity(loan, x):
    u = loan.scm.abduct(x)
    assert (loan.scm.predict(u) - x).abs().max() <= 1e-6


def test_income_intervention_changes_savings_by_the_equation(loan, x):
    mask = torch.zeros_like(x, dtype=torch.bool)
    mask[:, INC] = True
    values = x.clone()
    values[:, INC] = x[:, INC] + 1.5
    x_cf = loan.scm.counterfactual(x, mask, values)
    u_s = x[:, S] - (-4 + 1.5 * (x[:, INC] > 0) * x[:, INC])
    expected_s = -4 + 1.5 * (values[:, INC] > 0) * values[:, INC] + u_s
    assert torch.allclose(x_cf[:, S], expected_s, atol=1e-12, rtol=0)
    assert torch.equal(x_cf[:, INC], values[:, INC])
    for j in (G, A, E, L, D):  # non-descendants of income are untouched
        assert (x_cf[:, j] - x[:, j]).abs().max() <= 1e-12


def test_loan_amount_intervention_moves_duration_one_for_one(loan, x):
    mask = torch.zeros_like(x, dtype=torch.bool)
    mask[:, L] = True
    values = x.clone()
    values[:, L] = x[:, L] - 2.0
    x_cf = loan.scm.counterfactual(x, mask, values)
    assert torch.allclose(x_cf[:, D], x[:, D] - 2.0, atol=1e-12, rtol=0)
    for j in (G, A, E, INC, S):
        assert (x_cf[:, j] - x[:, j]).abs().max() <= 1e-12


def _independent_log_prob(x: np.ndarray) -> np.ndarray:
    g, a, e, amount, dur, inc, sav = x.T
    sig = expit

    def u_e(ev: np.ndarray) -> np.ndarray:
        return logit(ev + 0.5) + 1 - 0.5 * g - sig(0.1 * a)

    h = 1e-6
    jac = np.abs((u_e(e + h) - u_e(e - h)) / (2 * h))
    lp = np.log(0.5) + stats.gamma.logpdf(a + 35, 10, scale=3.5)
    lp += stats.norm.logpdf(u_e(e), 0, 0.5) + np.log(jac)
    lp += stats.norm.logpdf(amount - (1 + 0.01 * (a - 5) * (5 - a) + (1 - g)), 0, 2)
    lp += stats.norm.logpdf(dur - (-1 + 0.1 * a + 2 * (1 - g) + amount), 0, 3)
    lp += stats.norm.logpdf(inc - (-4 + 0.1 * (a + 35) + 2 * g + g * e), 0, 2)
    lp += stats.norm.logpdf(sav - (-4 + 1.5 * (inc > 0) * inc), 0, 5)
    return lp


def test_log_prob_matches_an_independent_computation(loan, x):
    rng = np.random.default_rng(3)
    pts = x[rng.choice(len(x), 300, replace=False)].numpy()
    pts[:, L:] += rng.normal(0, 1, size=(300, 4))  # off-sample points too
    ours = loan.scm.log_prob(torch.from_numpy(pts)).numpy()
    np.testing.assert_allclose(ours, _independent_log_prob(pts), rtol=0, atol=1e-6)


def test_numpy_and_float32_inputs(loan, x):
    out64 = loan.scm.log_prob(x[:5].numpy())
    assert out64.dtype == torch.float64
    out32 = loan.scm.counterfactual(x[:5].float(), torch.zeros(5, 7), x[:5].float())
    assert out32.dtype == torch.float32


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda scm, x: scm.log_prob(x[:, :6]), r"shape \(n, 7\)"),
        (lambda scm, x: scm.abduct(torch.full((2, 7), float("nan"))), "NaN or inf"),
        (
            lambda scm, x: scm.counterfactual(x[:3], torch.eye(7)[[1, 1, 1]], x[:3]),
            "immutable feature.*age",
        ),
        (
            lambda scm, x: scm.counterfactual(x[:3], torch.full((3, 7), 0.5), x[:3]),
            "only 0/1",
        ),
        (lambda scm, x: scm.counterfactual(x[:3], torch.zeros(2, 7), x[:3]), "2 rows"),
        (lambda scm, x: scm.log_prob(torch.tensor([[0.5, 0, 0, 0, 0, 0, 0.0]])), "gender"),
        (lambda scm, x: scm.log_prob(torch.tensor([[0, 0, 0.7, 0, 0, 0, 0.0]])), "education"),
    ],
)
def test_bad_input_is_named(loan, x, call, match):
    with pytest.raises(WorldModelInputError, match=match):
        call(loan.scm, x)


def test_unknown_scenario():
    with pytest.raises(UnknownScenarioError, match="unknown scenario 'mortgage'.*loan"):
        get_scenario("mortgage")


def test_display_maps_are_monotone_and_invertible(loan):
    lo, hi = loan.bounds
    for j, f in enumerate(loan.features):
        if f.discrete:
            continue
        grid = np.linspace(float(lo[j]), float(hi[j]), 50)
        shown = np.asarray(f.display.to_display(grid))
        assert np.all(np.diff(shown) > 0), f.name
        np.testing.assert_allclose(f.display.from_display(shown), grid, atol=1e-9)
    assert loan.features[1].display.to_display(0.0) == 35.0  # age in years = A + 35
    with pytest.raises(ValueError, match="positive"):
        loan.features[5].display.from_display(-10.0)


def test_bounds_come_from_the_training_split(loan):
    x = loan.dataset["train"][0]
    assert torch.equal(loan.bounds[0], x.min(dim=0).values)
    assert torch.equal(loan.bounds[1], x.max(dim=0).values)
    assert len(loan.dataset["train"][0]) == 10_000 and len(loan.dataset["test"][0]) == 5_000
