"""mgcv's GAMM needs more ratings than coefficients (k + 2 per participant): a study of one or
two ratings per participant (HARE's studies rate two plans at most) gets the mgcv part skipped
with the reason, before R is run, instead of R's failure."""

from __future__ import annotations

import numpy as np

from analysis import engines, mgcv
from analysis.simdata import simulate_ratings


def _ratings(per_participant: int):
    ratings = simulate_ratings(30, 4, seed=2, arms=("pool",))
    ratings = ratings.groupby("participant_id").head(per_participant)
    return ratings.assign(l0_profile=np.round(ratings["l1_profile"] * 4))


def test_one_rating_each_is_skipped_with_the_reason_before_r_runs(monkeypatch):
    monkeypatch.setattr(mgcv, "RSCRIPT", "no-rscript-needed-to-decide-this")
    block = engines.mgcv_part(_ratings(1), ("l0_profile", "l1_profile"), [], mode="auto")
    assert block["status"] == "skipped"
    assert block["reason"].startswith("acceptance on l0_profile: 30 ratings of 30 participants")
    # k = 4 distinct L0 values (fewer than 10) + a random intercept and slope for each of 30
    assert "has 64 coefficients: too few ratings per participant" in block["reason"]


def test_enough_ratings_each_goes_on_to_r():
    assert mgcv.too_few_ratings(_ratings(4), [mgcv.GammSpec("action", "l1_profile")]) is None
    # 2 each: 60 ratings against min(10, distinct) + 60 coefficients
    assert mgcv.too_few_ratings(_ratings(2), [mgcv.GammSpec("action", "l1_profile")])


def test_beside_the_sampler_the_block_comes_without_agreement_until_the_models_are_there(
        monkeypatch):
    """analyze starts R before the Bayesian models (engines.mgcv_beside) and adds the
    agreement afterwards (engines.with_agreement); the skip reaches it through the future."""
    monkeypatch.setattr(mgcv, "RSCRIPT", "no-rscript-needed-to-decide-this")
    grids = {"l1_profile": np.linspace(0, 1, 60)}
    block = engines.mgcv_beside(_ratings(1), ("l0_profile", "l1_profile"), grids).result()
    assert block["status"] == "skipped" and block["agreement"] == []
    assert engines.with_agreement(block, [])["reason"] == block["reason"]
    off = engines.mgcv_beside(_ratings(4), ("l0_profile", "l1_profile"), grids,
                              mode="off").result()
    assert off["status"] == "off" and off["reason"] == "not asked for (--mgcv off)"
