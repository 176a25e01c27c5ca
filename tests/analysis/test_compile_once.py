"""analyze samples the acceptance and the action model of one shape on one compiled model
(analysis.pipeline.compilers, analysis.results.fit_one with a refitter): the same posterior as
a model compiled for the data alone, with the data swapped in, and each model's own
log-likelihood and posterior predictive check; the model is compiled for the participants
padded to analysis.refit.padded_count, so studies of about one size share it, and the padding
stays out of the trace."""

from __future__ import annotations

import numpy as np

from analysis import pipeline
from analysis.models import prepare
from analysis.refit import PARTICIPANT_STEP, padded, padded_count
from analysis.results import ModelSpec, fit_one
from analysis.simdata import simulate_ratings

SAMPLER = pipeline.sampler_settings("pymc", draws=60, tune=60, chains=1, seed=3)


def _means(result) -> np.ndarray:
    return np.array([c.mean for c in result.coefficients] + list(result.smooth["mean"]))


def test_the_second_model_of_a_shape_reuses_the_compiled_one_with_its_own_data():
    ratings = simulate_ratings(10, 4, seed=4)
    acceptance, action = (prepare(ratings, o, "l1_profile") for o in ("acceptance", "action"))
    refitter = pipeline.compilers(SAMPLER)["ordinal"]
    specs = {o: ModelSpec(o, "l1_profile", "ordinal", ppc=True, log_likelihood=True)
             for o in ("acceptance", "action")}
    first, _ = fit_one(specs["acceptance"], acceptance, SAMPLER, refitter=refitter)
    # after a posterior predictive check on the compiled model's data, the next fit still runs
    second, trace = fit_one(specs["action"], action, SAMPLER, refitter=refitter)
    assert refitter.compiles == 1
    assert list(trace.posterior["participant"].values) == action.participants
    # the same posterior as the model of the padded study compiled alone (the padding
    # participants are prior draws, the sampler's path the same)
    alone, _ = fit_one(specs["action"], padded(action, padded_count(10)), SAMPLER)
    # the action data were swapped in: the action posterior, not the acceptance one
    np.testing.assert_allclose(_means(second), _means(alone), rtol=1e-6, atol=1e-9)
    assert not np.allclose(_means(second), _means(first))
    assert second.loo is not None and float(second.loo["elpd_loo"]) == float(
        alone.loo["elpd_loo"])
    assert [p["observed"] for p in second.ppc] == [p["observed"] for p in alone.ppc]


def test_studies_of_about_one_size_share_a_compiled_model() -> None:
    assert [padded_count(n) for n in (1, 24, 25, 26, 362)] == [25, 25, 25, 50, 375]
    assert PARTICIPANT_STEP == 25
    refitter = pipeline.compilers(SAMPLER)["ordinal"]
    spec = ModelSpec("acceptance", "l1_profile", "ordinal", log_likelihood=True)
    for n, seed in ((12, 5), (9, 6)):  # 9 and 12 participants: both compiled for 25
        data = prepare(simulate_ratings(n, 4, seed=seed), "acceptance", "l1_profile")
        result, trace = fit_one(spec, data, SAMPLER, refitter=refitter)
        assert trace.posterior.sizes["participant"] == n
        assert result.loo is not None and len(result.loo["loo_i"]) == data.n
    assert refitter.compiles == 1
