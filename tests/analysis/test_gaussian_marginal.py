"""analysis.gaussian_marginal: the Gaussian families' likelihood with the random effects
integrated out, its gradient and the conditional draws of the effects."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from scipy.stats import multivariate_normal, norm

from analysis.families import FAMILIES
from analysis.gaussian_marginal import (
    _backward,
    _forward,
    conditional_effects,
    participant_rows,
)
from analysis.model_data import prepare
from analysis.simdata import simulate_ratings

PEOPLE, Q, N = 7, 4, 30


@pytest.fixture
def problem():
    rng = np.random.default_rng(0)
    person = rng.integers(0, PEOPLE - 1, N).astype(np.int64)  # the last one has no rating
    zt = np.vstack([np.ones(N), rng.normal(size=(Q - 1, N))])
    return {"r": rng.normal(size=N) * 2, "zt": zt, "person": person,
            "rows": participant_rows(person, PEOPLE),
            "s": np.array([0.7, 0.3, 1.2, 0.05]), "sigma": np.array([0.9])}


def _args(p, **changed):
    p = {**p, **changed}
    order, offsets = p["rows"]
    return p["r"], np.ascontiguousarray(p["zt"][:, order].T), order, offsets, p["s"], p["sigma"]


def test_each_participants_term_is_the_multivariate_normal_of_their_ratings(problem):
    out = _forward(*_args(problem))[0]
    for p in range(PEOPLE):
        rows = problem["person"] == p
        if not rows.any():  # a padded participant: no term
            assert out[p] == 0.0
            continue
        z = problem["zt"][:, rows].T
        cov = problem["sigma"][0] ** 2 * np.eye(rows.sum()) + z @ np.diag(
            problem["s"] ** 2) @ z.T
        expected = multivariate_normal(np.zeros(rows.sum()), cov).logpdf(problem["r"][rows])
        assert out[p] == pytest.approx(expected, abs=1e-10)


def test_the_gradient_is_the_derivative_of_the_value(problem):
    g = np.random.default_rng(1).normal(size=PEOPLE)
    _, alpha, pieces_s, pieces_sigma = _forward(*_args(problem))
    dr, ds, dsigma = _backward(g, *problem["rows"], alpha, pieces_s, pieces_sigma)

    def total(**changed):
        return g @ _forward(*_args(problem, **changed))[0]

    eps = 1e-6
    for name, analytic in (("r", dr), ("s", ds), ("sigma", dsigma)):
        base = problem[name]
        numeric = [(total(**{name: base + eps * e}) - total(**{name: base - eps * e}))
                   / (2 * eps) for e in np.eye(len(base))]
        assert np.allclose(analytic, numeric, atol=1e-6), name


def test_an_index_out_of_range_is_an_error(problem):
    with pytest.raises(ValueError, match="out of range"):
        participant_rows(problem["person"] + PEOPLE, PEOPLE)
    order, offsets = problem["rows"]
    with pytest.raises(ValueError, match="differ in size"):
        _forward(*_args(problem, rows=(order[:-1], offsets)))


def test_the_conditional_draws_have_the_exact_conditional_moments(problem):
    """w_p | r ~ Normal(A^T Sigma^-1 r, I - A^T Sigma^-1 A), A = Z_p S: the Gaussian
    conditional of the prior w_p ~ Normal(0, I) given r_p = A w_p + e_p."""
    draws = 20000
    rng = np.random.default_rng(2)
    w = conditional_effects(np.tile(problem["r"], (draws, 1)), problem["zt"],
                            problem["person"], PEOPLE, np.tile(problem["s"], (draws, 1)),
                            np.full(draws, problem["sigma"][0]), rng)
    assert w.shape == (draws, PEOPLE, Q)
    for p in range(PEOPLE):
        rows = problem["person"] == p
        a = problem["zt"][:, rows].T * problem["s"]
        cov_r = problem["sigma"][0] ** 2 * np.eye(rows.sum()) + a @ a.T
        mean = a.T @ np.linalg.solve(cov_r, problem["r"][rows])
        cov = np.eye(Q) - a.T @ np.linalg.solve(cov_r, a)
        se = np.sqrt(np.diag(cov) / draws)
        assert np.all(np.abs(w[:, p].mean(axis=0) - mean) < 5 * se + 1e-12), p
        assert np.allclose(np.cov(w[:, p].T), cov, atol=0.05), p


@pytest.mark.parametrize("family", ["gamm", "gaussian"])
def test_the_fixed_part_is_the_models_mean(family):
    """With the random effects' scales at ~0 the model's likelihood is Normal(y | alpha +
    fixed effects, sigma_y): the fixed part the conditional draws start from is the one the
    model's likelihood uses (the design, the random walk, the terms and the arms)."""
    data = prepare(simulate_ratings(8, 4, seed=3, arms=("a", "b", "c")), "action",
                   "l1_profile")
    fam = FAMILIES[family]
    model = fam.build(data)
    rng = np.random.default_rng(0)
    point = {k: rng.normal(size=np.shape(v)) for k, v in model.initial_point().items()}
    for k in point:
        if k.startswith(("sigma_u", "sigma_s", "sigma_b")):
            point[k] = np.full(np.shape(point[k]), np.log(1e-9))
    likelihood = model.compile_logp()(point) - model.compile_logp(vars=model.free_RVs)(point)
    values = {"delta_f": np.exp(point["sigma_f_log__"]) * point["z_f"],
              "alpha": point["alpha"], "beta": point["beta"],
              "gamma": np.concatenate([[0.0], point["gamma_raw"]])}
    posterior = xr.Dataset({n: xr.DataArray(np.asarray(v)[None, None], dims=(
        "chain", "draw", *[f"{n}_{i}" for i in range(np.ndim(v))]))
        for n, v in values.items()})
    fixed = fam.fixed_draws(data, posterior)[0]
    sigma_y = np.exp(point["sigma_y_log__"])
    expected = norm.logpdf(data.y.astype(float), fixed, sigma_y).sum()
    assert likelihood == pytest.approx(expected, rel=1e-6)
