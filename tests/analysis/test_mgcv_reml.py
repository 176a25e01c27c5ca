"""mgcv's REML by default: the smoothing parameters located by bam's fast REML and gam's fit
at them are gam's own REML fit (the same criterion, the same optimum), not a different
model; GCV.Cp, the named alternative, is gam's own search and lands elsewhere.

The reference fit is gam(method = "REML") run here directly in R on the same ratings."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from analysis import mgcv
from analysis.simdata import simulate_ratings

SPEC = mgcv.GammSpec("action", "l1_profile")


@pytest.fixture(scope="module")
def ratings():
    status = mgcv.r_status()
    assert status["available"], f"{status['reason']}: run `make install` (scripts/install_r.sh)"
    return simulate_ratings(80, 5, seed=5, arms=("pool",))


def _gam_reml(ratings, folder: Path) -> dict:
    """gam(method = "REML")'s EDF of each term, the smooth's F and the intercept."""
    csv = folder / "r.csv"
    ratings[["participant_id", "action", "l1_profile"]].to_csv(csv, index=False)
    code = f"""
    d <- read.csv("{csv}"); d$uid <- factor(d$participant_id)
    d <- data.frame(y = d$action, x = d$l1_profile, uid = d$uid)
    m <- mgcv::gam(y ~ s(x, k = 10) + s(uid, bs = "re") + s(uid, x, bs = "re"), data = d,
                   method = "REML")
    s <- summary(m)
    cat(jsonlite::toJSON(list(edf = unname(s$s.table[, "edf"]),
        F = s$s.table["s(x)", "F"], intercept = s$p.table[1, 1]), digits = NA,
        auto_unbox = TRUE))
    """
    r = subprocess.run(["Rscript", "--vanilla", "-e", code], capture_output=True, text=True,
                       check=True)
    return json.loads(r.stdout)


def test_reml_by_default_is_gams_own_reml_fit(ratings, tmp_path):
    assert mgcv.DEFAULT_METHOD == "REML"
    ours = mgcv.fit_gamms(ratings, [SPEC])["models"][0]
    reference = _gam_reml(ratings, tmp_path)
    assert ours["method"] == "REML" and ours["converged"]
    assert ours["search"].startswith('bam(method = "fREML")')
    edf = [ours[t]["edf"] for t in ("smooth", "participant_intercept", "participant_slope")]
    assert edf == pytest.approx(reference["edf"], rel=1e-3, abs=0.01)
    assert ours["smooth"]["F"] == pytest.approx(reference["F"], rel=1e-3)
    assert ours["intercept"]["estimate"] == pytest.approx(reference["intercept"], rel=1e-5)


def test_gcv_is_gams_own_search_and_another_optimum(ratings):
    reml = mgcv.fit_gamms(ratings, [SPEC])["models"][0]
    gcv = mgcv.fit_gamms(ratings, [SPEC], method="GCV.Cp")["models"][0]
    assert gcv["search"] == 'gam(method = "GCV.Cp")'
    assert gcv["smooth"]["edf"] != pytest.approx(reml["smooth"]["edf"], rel=1e-3)
