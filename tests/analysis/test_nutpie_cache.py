"""analysis.nutpie_cache: wrappers that read the right arrays, sample what nutpie's own do,
and load from disk the second time."""

from __future__ import annotations

import numpy as np
import nutpie

from analysis import nutpie_cache
from analysis.families import FAMILIES
from analysis.models import build_model, prepare
from analysis.simdata import simulate_ratings


def test_wrapper_source_finds_each_array_in_the_flat_user_data():
    arrays = {"a": np.zeros((3, 4)), "b": np.zeros(5, dtype=np.int64), "c": np.zeros(())}
    # record: addresses u[0..2], sizes u[3..5], shapes a -> u[6], u[7]; b -> u[8]; c -> none
    src = nutpie_cache.wrapper_source("logp", ["b", "c", "a"], arrays)
    assert "u = carray(user_data_, (9,), np.uint64)" in src
    assert "a0 = carray(void_ptr(u[1]), (u[8], ), np.int64)" in src
    assert "a1 = carray(void_ptr(u[2]), (), np.float64)" in src
    assert "a2 = carray(void_ptr(u[0]), (u[6], u[7], ), np.float64)" in src
    assert "logp_val, grad = inner(x, a0, a1, a2)" in src
    expand = nutpie_cache.wrapper_source("expand", ["a"], arrays)
    assert "(values,) = inner(x, a0)" in expand and "out = carray(out_, (expanded,))" in expand


def _draws(compiled) -> np.ndarray:
    trace = nutpie.sample(compiled, draws=30, tune=30, chains=1, cores=1, seed=5,
                          progress_bar=False)
    return np.asarray(trace.posterior["sigma_u"].values)


def test_cached_wrappers_sample_as_nutpies_own_and_load_from_disk(monkeypatch):
    data = prepare(simulate_ratings(12, 4, seed=3), "acceptance", "l1_profile")
    model = build_model(data, shared=True)
    ours = nutpie_cache.compile_model(model)
    again = nutpie_cache.compile_model(model)  # a new wrapper object: numba's disk cache
    assert again.compiled_logp_func.cache_hits == 1
    assert again.compiled_expand_func.cache_hits == 1

    def refuse(kind, *_a):
        raise nutpie_cache._Uncacheable(kind)

    with monkeypatch.context() as m:  # a wrapper without a key: nutpie's own wrappers
        m.setattr(nutpie_cache, "_wrapper", refuse)
        plain = nutpie_cache.compile_model(model)
    assert plain.compiled_logp_func.cache_hits == 0
    np.testing.assert_array_equal(_draws(ours), _draws(plain))
    np.testing.assert_array_equal(_draws(again), _draws(plain))
    # another study's arrays through nutpie's user data: read as nutpie's own wrapper reads them
    new = FAMILIES.main.model_arrays(prepare(simulate_ratings(12, 4, seed=4), "acceptance",
                                             "l1_profile"))
    np.testing.assert_array_equal(_draws(again.with_data(**new)),
                                  _draws(plain.with_data(**new)))
