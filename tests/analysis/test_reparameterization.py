"""The ordinal model samples z_u ~ Normal(0, 1) iid and c_1 ~ Normal(-2.5, 3) in pieces
(analysis.families.base.random_intercepts: the intercepts' mean apart, c_1 as its level
against it); these tests check that the pieces are the stated model: the same density up
to a constant, the same prior draws."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from analysis import build_model, prepare, simulate_ratings


@pytest.fixture(scope="module")
def model():
    data = prepare(simulate_ratings(participants=6, plans=4, seed=3), "acceptance",
                   "l1_profile")
    return build_model(data)


def test_the_pieces_have_the_stated_density(model):
    """log p(pieces, y | rest) - [log N(c_1; -2.5, 3) + sum log N(z_u; 0, 1)
    + log p(y | c, eta(z_u))] is one constant over random points: the likelihood given the
    stated c_1 and z_u and their stated priors. A wrong sign of the shift, or a mean with the
    wrong spread, moves the difference from point to point."""
    pieces = [model[n] for n in ("cut_level", "z_u_centred", "z_u_mean", "y")]
    joint = model.compile_logp(vars=pieces, jacobian=False)
    stated = model.compile_fn(
        model.replace_rvs_by_values([model["z_u"], model["cut_first"]]),
        inputs=model.value_vars, on_unused_input="ignore")
    likelihood = model.compile_logp(vars=[model["y"]])
    rng = np.random.default_rng(7)
    gaps = []
    for _ in range(6):
        point = {k: v + rng.normal(0, 0.8, np.shape(v))
                 for k, v in model.initial_point().items()}
        z_u, cut_first = stated(point)
        prior = stats.norm.logpdf(cut_first, -2.5, 3.0) + stats.norm.logpdf(z_u).sum()
        gaps.append(joint(point) - prior - likelihood(point))
    assert np.ptp(gaps) < 1e-9, gaps


def test_prior_draws_are_iid_standard_intercepts_and_the_stated_first_cutpoint(model):
    """Drawn from the prior, z_u is Normal(0, 1) per participant and uncorrelated between
    participants (sum-to-zero deviations alone would give variance 5/6 and correlation -1/5
    with 6 participants) and c_1 is Normal(-2.5, 3)."""
    import pymc as pm

    with model:
        prior = pm.sample_prior_predictive(draws=8000, var_names=["z_u", "cut_first"],
                                           random_seed=11).prior
    z = prior["z_u"].values.reshape(-1, 6)
    np.testing.assert_allclose(z.var(axis=0), 1.0, atol=0.08)
    corr = np.corrcoef(z.T)[np.triu_indices(6, 1)]
    assert np.abs(corr).max() < 0.05, corr
    c = prior["cut_first"].values.ravel()
    assert abs(c.mean() + 2.5) < 0.15 and abs(c.std() - 3.0) < 0.1
