"""--ess-target (analysis.fit.sample_to_target): a model that misses the target is drawn
again until it meets it or reaches the cap: more chains pooled with those at hand when only
ESS misses or R-hat misses a little at the first try, longer chains afresh when R-hat misses
more or again; without a target, one run, as before."""

from __future__ import annotations

import arviz as az
import numpy as np

from analysis import fit as fitting
from analysis import pipeline
from analysis.models import prepare
from analysis.results import ModelSpec, fit_one
from analysis.simdata import simulate_ratings

Tries = list[tuple[int, int, int]]


def _iid_draws(tries: Tries, traces: list[az.InferenceData] | None = None,
               stuck: float = 0.0):
    """A draw function of independent normal draws (ESS ~ chains x draws), recording each
    try's (chains, draws, attempt) (and its trace); ``stuck`` shifts the first try's last
    chain."""
    rng = np.random.default_rng(0)

    def draw(k: int, n: int, attempt: int) -> az.InferenceData:
        tries.append((k, n, attempt))
        x = rng.normal(size=(k, n, 3))
        if attempt == 0:
            x[-1] += stuck
        idata = az.from_dict(posterior={"x": x},
                             sample_stats={"diverging": np.zeros((k, n), dtype=bool)})
        if traces is not None:
            traces.append(idata)
        return idata

    return draw


def test_short_of_ess_more_chains_are_pooled_with_those_drawn() -> None:
    tries: Tries = []
    traces: list[az.InferenceData] = []
    idata, diag = fitting.sample_to_target(_iid_draws(tries, traces), ["x"], 4, 1000,
                                           ess_target=6000)
    first = fitting.diagnose(traces[0], ["x"])
    ess = min(first.min_ess_bulk, first.min_ess_tail)
    assert ess < 6000 and first.max_rhat <= fitting.RHAT_MAX  # 4 x 1,000 independent
    wanted = int(np.ceil(1.2 * 4 * 6000 / ess))
    assert tries == [(4, 1000, 0), (wanted - 4, 1000, 1)]
    # nothing drawn is thrown away: the first try's chains, then the new ones
    x = idata.posterior["x"].values
    assert x.shape == (wanted, 1000, 3)
    assert np.array_equal(x[:4], traces[0].posterior["x"].values)
    assert np.array_equal(x[4:], traces[1].posterior["x"].values)
    assert diag == fitting.diagnose(idata, ["x"]) and diag.meets(6000)
    assert (diag.chains, diag.draws) == (wanted, 1000)
    assert diag.drawn() == f"{wanted} chains x 1,000 draws"


def test_rhat_short_a_fresh_run_with_longer_chains() -> None:
    tries: Tries = []
    traces: list[az.InferenceData] = []
    idata, diag = fitting.sample_to_target(_iid_draws(tries, traces, stuck=3.0), ["x"], 4,
                                           100, ess_target=100)
    assert fitting.diagnose(traces[0], ["x"]).max_rhat > 1.1
    assert tries[1][0] == 4 and tries[1][1] >= 200 and tries[1][2] == 1
    assert idata is traces[1] and diag.meets(100)  # the stuck chain is gone


def test_the_cap_and_no_target() -> None:
    tries: Tries = []
    idata, diag = fitting.sample_to_target(_iid_draws(tries), ["x"], 4, 100,
                                           ess_target=10 ** 6)
    assert idata.posterior.sizes["chain"] * idata.posterior.sizes["draw"] == (
        fitting.TARGET_MAX_FACTOR * 400)
    assert [a for *_, a in tries] == list(range(len(tries)))  # each try its own seeds
    assert diag.min_ess_bulk < 10 ** 6
    tries.clear()
    fitting.sample_to_target(_iid_draws(tries), ["x"], 4, 100)
    assert tries == [(4, 100, 0)]


def test_next_try_for_rhat_and_for_ess() -> None:
    def diag(rhat: float, bulk: float, tail: float = 900.0) -> fitting.Diagnostics:
        return fitting.Diagnostics(rhat, bulk, tail, 0)

    first = (4, 500)
    assert fitting.next_try(4, 500, first, diag(1.005, 800.0), 400) is None
    # R-hat a little high at the first try: as many chains again, pooled
    assert fitting.next_try(4, 500, first, diag(1.02, 800.0), 400) == fitting.Try(4, 500, False)
    # ... still high once pooled, or high by more: the first try's chains, longer, afresh
    assert fitting.next_try(8, 500, first, diag(1.015, 800.0), 400) == fitting.Try(4, 1000, True)
    assert fitting.next_try(4, 500, first, diag(1.03, 800.0), 400) == fitting.Try(4, 1000, True)
    assert fitting.next_try(4, 500, first, diag(1.03, 100.0), 400) == fitting.Try(4, 2000, True)
    assert fitting.next_try(4, 500, first, diag(1.0, 200.0), 400) == fitting.Try(6, 500, False)
    assert fitting.next_try(4, 500, first, diag(1.0, 390.0), 400) == fitting.Try(1, 500, False)
    assert fitting.next_try(14, 500, first, diag(1.0, 10.0, 9.0), 400) == fitting.Try(
        2, 500, False)
    assert fitting.next_try(16, 500, first, diag(1.0, 10.0, 9.0), 400) is None
    # near the cap (4 x 4 x 1,000 draws): no try that adds nothing, none beyond it
    assert fitting.next_try(5, 3000, (4, 1000), diag(1.0, 300.0), 400) is None
    assert fitting.next_try(5, 3000, (4, 1000), diag(1.02, 900.0), 400) == fitting.Try(
        4, 4000, True)
    assert fitting.next_try(4, 4000, (4, 1000), diag(1.02, 900.0), 400) is None


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
        drawn = trace.posterior.sizes["chain"] * trace.posterior.sizes["draw"]
        met = result.diagnostics.meets(150)
        assert drawn > 120 or met
        assert met or drawn == fitting.TARGET_MAX_FACTOR * 120
