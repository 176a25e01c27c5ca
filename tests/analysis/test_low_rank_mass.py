"""nutpie adapts a low-rank mass matrix for the families that ask for it
(``ModelFamily.low_rank_mass``: the Gaussian ones, a few dozen correlated parameters once
their random effects are integrated out) and a diagonal one for the others."""

from __future__ import annotations

import pymc as pm
import pytest

from analysis import FAMILIES, fit, refit
from analysis.models import prepare
from analysis.simdata import simulate_ratings


def test_the_gaussian_families_ask_for_it_and_the_ordinal_ones_do_not():
    assert {name: f.low_rank_mass for name, f in FAMILIES.items()} == {
        "ordinal": False, "ordinal_position": False, "gamm": True, "gaussian": True}


@pytest.mark.filterwarnings("ignore:sampling diagnostics")  # 30 draws: only the stats count
@pytest.mark.parametrize("low_rank", [False, True])
def test_sample_passes_it_to_nutpie(low_rank: bool):
    """nutpie reports the low-rank part's eigenvalues only when it adapts one."""
    with pm.Model() as model:
        pm.Normal("x", 0.0, 1.0, shape=3)
    out = fit.sample(model, draws=30, tune=30, chains=1, cores=1, ess_target=0,
                     low_rank=low_rank)
    assert ("num_eigenvalues" in out.idata.sample_stats) is low_rank


class _Started(Exception):
    """Raised by the stand-in for nutpie's sampler: the settings were captured."""


@pytest.mark.parametrize("family", ["ordinal", "gamm"])
def test_analyze_s_refitter_asks_for_the_family_s_mass_matrix(family: str, monkeypatch):
    asked: dict = {}

    class Compiled:  # nutpie's compiled model, not compiled (the settings are the point)
        def with_data(self, **arrays):
            return self

    def start(compiled, **settings):
        asked.update(settings)
        raise _Started

    monkeypatch.setattr(refit, "compile_model", lambda model: Compiled())
    monkeypatch.setattr(fit, "start_nutpie", start)
    data = prepare(simulate_ratings(8, 4, seed=1), "acceptance", "l1_profile")
    with pytest.raises(_Started):
        refit.Refitter(family, "nutpie", 50, 50, 1).start(data)
    assert asked["low_rank"] is FAMILIES[family].low_rank_mass
