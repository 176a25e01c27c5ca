"""--ess-target (analysis.fit.sample_to_target): a model that misses the target is drawn again
with more draws per chain until it meets it or reaches the cap; without a target, one run of
the given draws, as before."""

from __future__ import annotations

import arviz as az
import numpy as np

from analysis import fit as fitting
from analysis import pipeline
from analysis.models import prepare
from analysis.results import ModelSpec, fit_one
from analysis.simdata import simulate_ratings


def _iid_draws(tries: list[int], traces: list[az.InferenceData] | None = None):
    """A draw function of independent normal draws (ESS ~ chains x draws), recording each
    try's draws per chain (and its trace)."""
    rng = np.random.default_rng(0)

    def draw(n: int) -> az.InferenceData:
        tries.append(n)
        idata = az.from_dict(posterior={"x": rng.normal(size=(4, n, 3))},
                             sample_stats={"diverging": np.zeros((4, n), dtype=bool)})
        if traces is not None:
            traces.append(idata)
        return idata

    return draw


def test_more_draws_until_the_target_is_met_then_stop() -> None:
    tries: list[int] = []
    traces: list[az.InferenceData] = []
    idata, diag = fitting.sample_to_target(_iid_draws(tries, traces), ["x"], 100,
                                           ess_target=600)
    first = fitting.diagnose(traces[0], ["x"])
    ess = min(first.min_ess_bulk, first.min_ess_tail)
    assert ess < 600  # 4 chains x 100 independent draws: ~400
    assert tries == [100, int(np.ceil(1.2 * 100 * 600 / ess))]
    assert idata is traces[-1]
    assert min(diag.min_ess_bulk, diag.min_ess_tail) >= 600


def test_the_cap_and_no_target() -> None:
    tries: list[int] = []
    _, diag = fitting.sample_to_target(_iid_draws(tries), ["x"], 100, ess_target=10 ** 6)
    assert tries[-1] == fitting.TARGET_MAX_FACTOR * 100 and tries == sorted(set(tries))
    assert diag.min_ess_bulk < 10 ** 6
    tries.clear()
    fitting.sample_to_target(_iid_draws(tries), ["x"], 100)
    assert tries == [100]


def test_more_draws_for_rhat_and_for_ess() -> None:
    ok = fitting.Diagnostics(1.005, 800.0, 900.0, 0)
    assert fitting.more_draws(500, 500, ok, 400) is None
    assert fitting.more_draws(500, 500, fitting.Diagnostics(1.02, 800.0, 900.0, 0), 400) == 1000
    assert fitting.more_draws(500, 500, fitting.Diagnostics(1.0, 200.0, 900.0, 0), 400) == 1200
    assert fitting.more_draws(1800, 500, fitting.Diagnostics(1.0, 10.0, 9.0, 0), 400) == 2000
    assert fitting.more_draws(2000, 500, fitting.Diagnostics(1.0, 10.0, 9.0, 0), 400) is None


def test_analyze_models_honour_the_target_compiled_once_or_alone() -> None:
    sampler = pipeline.sampler_settings("pymc", draws=60, tune=60, chains=2, seed=3,
                                        ess_target=150)
    assert sampler["ess_target"] == 150
    assert pipeline.sampler_settings("pymc")["ess_target"] == fitting.DEFAULT_ESS_TARGET
    assert "ess_target" not in pipeline.sampler_settings("pymc", draws=60)  # one run of 60
    assert "ess_target" not in pipeline.sampler_settings("pymc", ess_target=0)
    data = prepare(simulate_ratings(10, 4, seed=4), "acceptance", "l1_profile")
    spec = ModelSpec("acceptance", "l1_profile", "ordinal")
    refitter = pipeline.compilers(sampler)["ordinal"]
    compiled, idata = fit_one(spec, data, sampler, refitter=refitter)
    alone, idata_alone = fit_one(spec, data, sampler)
    for result, trace in ((compiled, idata), (alone, idata_alone)):
        drawn = trace.posterior.sizes["draw"]
        d = result.diagnostics
        met = min(d.min_ess_bulk, d.min_ess_tail) >= 150 and d.max_rhat <= fitting.RHAT_MAX
        assert drawn > 60 or met
        assert met or drawn == fitting.TARGET_MAX_FACTOR * 60
    assert idata.posterior.sizes["draw"] == idata_alone.posterior.sizes["draw"]
