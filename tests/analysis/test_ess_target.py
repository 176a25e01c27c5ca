"""--ess-target (analysis.fit.sample_to_target): a model that misses the target draws more
chains, pooled with those it has, until it meets it or reaches the cap; without a target, one
run, as before."""

from __future__ import annotations

import arviz as az
import numpy as np

from analysis import fit as fitting
from analysis import pipeline
from analysis.models import prepare
from analysis.results import ModelSpec, fit_one
from analysis.simdata import simulate_ratings


def _iid_draws(tries: list[tuple[int, int]], traces: list[az.InferenceData] | None = None,
               stuck: float = 0.0):
    """A draw function of independent normal draws (ESS ~ chains x 100), recording each
    try's (chains, attempt) (and its trace); ``stuck`` shifts the first try's last chain."""
    rng = np.random.default_rng(0)

    def draw(k: int, attempt: int) -> az.InferenceData:
        tries.append((k, attempt))
        x = rng.normal(size=(k, 100, 3))
        if attempt == 0:
            x[-1] += stuck
        idata = az.from_dict(posterior={"x": x},
                             sample_stats={"diverging": np.zeros((k, 100), dtype=bool)})
        if traces is not None:
            traces.append(idata)
        return idata

    return draw


def test_more_chains_pooled_until_the_target_is_met_then_stop() -> None:
    tries: list[tuple[int, int]] = []
    traces: list[az.InferenceData] = []
    idata, diag = fitting.sample_to_target(_iid_draws(tries, traces), ["x"], 4,
                                           ess_target=600)
    first = fitting.diagnose(traces[0], ["x"])
    ess = min(first.min_ess_bulk, first.min_ess_tail)
    assert ess < 600  # 4 chains x 100 independent draws: ~400
    wanted = int(np.ceil(1.2 * 4 * 600 / ess))
    assert tries == [(4, 0), (wanted - 4, 1)]
    # nothing drawn is thrown away: the first try's chains, then the new ones
    x = idata.posterior["x"].values
    assert x.shape == (wanted, 100, 3)
    assert np.array_equal(x[:4], traces[0].posterior["x"].values)
    assert np.array_equal(x[4:], traces[1].posterior["x"].values)
    assert diag == fitting.diagnose(idata, ["x"]) and diag.meets(600)


def test_the_cap_and_no_target() -> None:
    tries: list[tuple[int, int]] = []
    idata, diag = fitting.sample_to_target(_iid_draws(tries), ["x"], 4, ess_target=10 ** 6)
    assert sum(k for k, _ in tries) == fitting.TARGET_MAX_FACTOR * 4
    assert [a for _, a in tries] == list(range(len(tries)))  # each try its own seeds
    assert idata.posterior.sizes["chain"] == fitting.TARGET_MAX_FACTOR * 4
    assert diag.min_ess_bulk < 10 ** 6
    tries.clear()
    fitting.sample_to_target(_iid_draws(tries), ["x"], 4)
    assert tries == [(4, 0)]


def test_a_stuck_first_try_is_dropped_when_the_new_chains_alone_meet_the_target() -> None:
    tries: list[tuple[int, int]] = []
    traces: list[az.InferenceData] = []
    idata, diag = fitting.sample_to_target(_iid_draws(tries, traces, stuck=3.0), ["x"], 4,
                                           ess_target=100)
    assert fitting.diagnose(traces[0], ["x"]).max_rhat > 1.1
    assert len(tries) == 2 and tries[1][0] >= 4  # R-hat missed: at least twice the chains
    assert idata is traces[1] and diag.meets(100)


def test_more_chains_for_rhat_and_for_ess() -> None:
    ok = fitting.Diagnostics(1.005, 800.0, 900.0, 0)
    assert fitting.more_chains(4, 4, ok, 400) is None
    assert fitting.more_chains(4, 4, fitting.Diagnostics(1.02, 800.0, 900.0, 0), 400) == 8
    assert fitting.more_chains(4, 4, fitting.Diagnostics(1.0, 200.0, 900.0, 0), 400) == 10
    assert fitting.more_chains(4, 4, fitting.Diagnostics(1.0, 390.0, 900.0, 0), 400) == 5
    assert fitting.more_chains(14, 4, fitting.Diagnostics(1.0, 10.0, 9.0, 0), 400) == 16
    assert fitting.more_chains(16, 4, fitting.Diagnostics(1.0, 10.0, 9.0, 0), 400) is None


def test_each_try_its_own_seed() -> None:
    assert fitting.try_seed(7, 0) == 7
    seeds = {fitting.try_seed(s, a) for s in range(3) for a in range(1, 4)}
    assert len(seeds) == 9 and not seeds & {0, 1, 2}
    assert fitting.try_seed(7, 2) == fitting.try_seed(7, 2)


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
        chains = trace.posterior.sizes["chain"]
        assert trace.posterior.sizes["draw"] == 60
        met = result.diagnostics.meets(150)
        assert chains > 2 or met
        assert met or chains == fitting.TARGET_MAX_FACTOR * 2
    assert idata.posterior.sizes["chain"] == idata_alone.posterior.sizes["chain"]
