"""The two analysis engines on one small simulated study (short sampling): the Bayesian
GAMM's smooth and mgcv's agree within their 95% intervals at every grid point, and the
ordinal model's satisfaction and violation effects agree with ordinal::clmm's.

R is part of `make install` (scripts/install_r.sh): without it these tests fail, saying so.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from analysis import engines, mgcv
from analysis.models import prepare
from analysis.results import ModelSpec, fit_one
from analysis.simdata import simulate_ratings
from engine.synthetic.rating_model import DistanceCurve, RatingBehaviour

pytestmark = pytest.mark.e2e  # two Bayesian fits of 300 draws beside R's: make test-e2e

SAMPLER = {"backend": "nutpie", "draws": 300, "tune": 300, "chains": 2, "seed": 1,
           "target_accept": 0.95}


@pytest.fixture(scope="module")
def r_ready():
    status = mgcv.r_status()
    assert status["available"], f"{status['reason']}: run `make install` (scripts/install_r.sh)"


@pytest.fixture(scope="module")
def study():
    """60 people x 5 plans, one arm, no elicitation; the reference behaviour with the
    action curve of the reference study's finding made plain: a drop of 4 on the latent
    scale over the smallest distances (scale 0.1), flat beyond. mgcv gives EDF ~4.5 and
    p < 0.001 here, so a smooth that is changed (its sign, its scale, mgcv's k, or lost
    altogether) leaves the other engine's interval somewhere; with the reference drop of
    1.6 (p ~ 0.15) a flat curve from either engine passed unnoticed
    (docs/analysis-mgcv.md)."""
    reference = RatingBehaviour.reference()
    behaviour = replace(reference, action=replace(
        reference.action, curve=DistanceCurve(drop=4.0, scale=0.1)))
    ratings = simulate_ratings(60, 5, seed=3, arms=("pool",), behaviour=behaviour)
    return ratings.assign(satisfaction=np.nan, violation=np.nan)


def test_bayesian_and_mgcv_smooths_agree_at_every_grid_point(r_ready, study):
    data = prepare(study, "action", "l1_profile")
    bayes, _ = fit_one(ModelSpec("action", "l1_profile", "gamm"), data, SAMPLER)
    grid = bayes.smooth["d"].to_numpy()
    fitted = mgcv.fit_gamms(study, [mgcv.GammSpec("action", "l1_profile")],
                            grids={"l1_profile": grid})["models"][0]
    curve = {k: np.asarray(fitted["curve"][k]) for k in ("fit", "lo", "hi")}
    np.testing.assert_allclose(fitted["curve"]["d"], grid)
    ok = engines.smooth_agreement({k: bayes.smooth[k].to_numpy() for k in ("mean", "lo", "hi")},
                                  curve)
    assert ok.all(), (f"the smooths disagree at d = {grid[~ok].round(3).tolist()}: "
                      f"Bayes {bayes.smooth['mean'].to_numpy()[~ok].round(2).tolist()}, "
                      f"mgcv {curve['fit'][~ok].round(2).tolist()}")
    sentence = engines.agreement(fitted, [bayes])
    assert sentence["points_agree"] == grid.size
    assert f"at {grid.size} of {grid.size} grid points" in sentence["sentence"]
    # both engines see the effect, so agreement is a test of the curves, not of two flat
    # lines: mgcv's smooth is significant and the Bayesian curve spans more than half of its
    # range (the Bayesian band only just clears zero here: docs/analysis-mgcv.md)
    assert fitted["smooth"]["p"] < 0.001 and fitted["smooth"]["edf"] > 2
    assert np.ptp(bayes.smooth["mean"].to_numpy()) > 0.5 * np.ptp(curve["fit"])
    # the Bayesian verdict reads the band: zero outside it at some grid point
    mean = bayes.smooth["mean"]
    for (below, above), excludes in {(-9.0, 9.0): False, (0.0, 9.0): True,
                                     (-9.0, 0.0): True}.items():
        band = bayes.smooth.assign(lo=mean + below, hi=mean + above)
        assert engines.band_excludes_zero(replace(bayes, smooth=band)) is excludes


def test_ordinal_effects_agree_with_clmm(r_ready):
    """Acceptance of the reference behaviour (no random slopes: clmm's random intercept is
    the whole random part); satisfaction and violation effects +0.5 and -0.8."""
    behaviour = RatingBehaviour.reference()
    ratings = simulate_ratings(60, 5, seed=4, behaviour=behaviour)
    data = prepare(ratings, "acceptance", "l1_profile")
    bayes, _ = fit_one(ModelSpec("acceptance", "l1_profile", "ordinal"), data, SAMPLER)
    rows = {r["term"]: r for r in engines.clmm_agreement(data, bayes)}
    assert set(rows) == {"satisfaction", "violation"}
    for term, row in rows.items():
        assert row["agree"], f"{term}: Bayes {row['mean']:.2f} [{row['lo']:.2f}, " \
            f"{row['hi']:.2f}], clmm {row['clmm']:.2f} (SE {row['clmm_se']:.2f})"
    assert rows["violation"]["clmm"] < 0 < rows["satisfaction"]["clmm"]
