"""A pilot's posterior draws as synthetic participants (analysis.pilot): each model quantity
lands on the synthetic parameter it stands for, and every simulated study gets its own draw."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from analysis.models import prepare, smooth_draws
from analysis.pilot import PilotPosterior, outcome_draws, project_curve
from analysis.simdata import simulate_ratings


def _posterior(data, rng, draws=6):
    """A hand-made posterior of the ordinal model (2 chains x ``draws``) for ``data``."""
    k = data.basis.k - 1
    dims = {"chain": 2, "draw": draws}

    def var(shape, *extra_dims, scale=1.0, loc=0.0, coords=None):
        values = loc + scale * rng.standard_normal((2, draws, *shape))
        return xr.DataArray(values, dims=("chain", "draw", *extra_dims), coords=coords)

    cut = np.sort(rng.normal(0, 2, (2, draws, 6)), axis=-1)
    return xr.Dataset({
        "delta_f": var((k,), "knot", scale=0.4),
        "gamma": var((len(data.arms),), "arm", coords={"arm": data.arms}),
        "beta": var((2,), "term", coords={"term": ["satisfaction", "violation"]}),
        "sigma_u": np.abs(var(())) + 1.0, "sigma_b": np.abs(var((), scale=0.3)),
        "cutpoints": xr.DataArray(cut, dims=("chain", "draw", "c")),
    }), dims


def test_each_model_quantity_becomes_its_synthetic_parameter():
    rng = np.random.default_rng(4)
    data = prepare(simulate_ratings(participants=12, plans=5, seed=2), "action", "l1_profile")
    post, dims = _posterior(data, rng)
    out = outcome_draws(data, post)
    flat = {n: np.asarray(post[n].values).reshape(12, *post[n].shape[2:]) for n in post}
    assert np.allclose(out["satisfaction"], flat["beta"][:, 0])
    assert np.allclose(out["violation"], -flat["beta"][:, 1])  # the synthetic model's -nu v
    assert np.allclose(out["cutpoints"], flat["cutpoints"])
    assert np.allclose(out["sd_slope"], flat["sigma_b"])
    # the spread at the pilot's mean distance is the model's sigma_u
    at_mean = np.sqrt(out["sd_intercept"] ** 2 + (out["sd_slope"] * data.d_centre) ** 2)
    assert np.allclose(at_mean, flat["sigma_u"])
    # the curve: the smooth plus the arms' mean effect, weighted by their share of ratings
    d = np.quantile(data.d, [0.1, 0.5, 0.9])
    share = np.bincount(data.arm, minlength=len(data.arms)) / data.n
    h = smooth_draws(data, flat["delta_f"], d) + (flat["gamma"] @ share)[:, None]
    g = out["intercept"][:, None] - out["drop"][:, None] * (1 - np.exp(-d / out["scale"][:, None]))
    assert np.abs(g - h).max() < 4 * out["rms"].max() + 1e-6


@pytest.mark.parametrize(("a", "drop", "scale"), [(0.3, 1.5, 0.1), (-1.0, -0.8, 0.4),
                                                   (0.7, 0.0, 0.2)])
def test_projection_recovers_a_curve_of_the_family(a, drop, scale):
    d = np.linspace(0.0, 0.8, 60)
    p = project_curve((a - drop * (1 - np.exp(-d / scale)))[None, :], d)
    assert p["intercept"][0] == pytest.approx(a, abs=0.01)
    assert p["drop"][0] == pytest.approx(drop, abs=0.01)
    if drop:
        assert p["scale"][0] == pytest.approx(scale, rel=0.02)
    assert p["rms"][0] < 1e-3


def _pilot(size: int) -> PilotPosterior:
    values = {k: np.arange(size, dtype=float) + i for i, k in enumerate(
        ("intercept", "drop", "scale", "satisfaction", "violation", "sd_intercept",
         "sd_slope", "rms"))}
    values["scale"] += 1.0
    values["cutpoints"] = np.arange(size)[:, None] + np.arange(6)[None, :]
    return PilotPosterior("l1_actions", {"action": values, "acceptance": dict(values)}, "f", {})


def test_every_simulated_study_has_its_own_draw():
    pilot = _pilot(40)
    used = [pilot.draw_for(s, seed=3) for s in range(40)]
    assert sorted(used) == list(range(40))  # a permutation: no draw twice while any is left
    assert used == [pilot.draw_for(s, seed=3) for s in range(40)]  # the same on a rerun
    assert used != [pilot.draw_for(s, seed=4) for s in range(40)]  # the seed orders them
    assert [pilot.draw_for(s, seed=3) for s in range(40, 45)] == used[:5]  # then cycles


def test_a_draw_is_a_valid_simulation_block():
    from protocols.definition.schema import load_protocol
    from study_app.power import pilot_protocol

    pilot = _pilot(5)
    proto = pilot_protocol(load_protocol("tominaga-replication"), pilot, 3)
    ratings = proto.simulation.behaviour().ratings
    assert ratings.distance == "l1_actions"
    for outcome in ("action", "acceptance"):
        m = getattr(ratings, outcome)
        assert (m.intercept, m.curve.drop, m.curve.scale) == (3.0, 4.0, 6.0)
        assert (m.satisfaction, m.violation, m.sd_intercept, m.sd_slope) == (6.0, 7.0, 8.0, 9.0)
        assert m.cutpoints == (3, 4, 5, 6, 7, 8) and m.curve_of == "typical"
    q = pilot.quantities([1, 3])
    assert q["action"]["drop"]["mean"] == 3.0 and q["action"]["drop"]["source"].startswith("smooth")
    assert PilotPosterior.from_json(pilot.to_json()).overrides(3) == pilot.overrides(3)
