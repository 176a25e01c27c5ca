"""The trace levels (none, compact, full: what each stores and --resume reuses), and the
compact level: a reduced posterior (thinned draws, the smooth's curve draws
instead of the GAMM's per-participant basis coefficients) that the summary, the report and
--resume do not need, since they are served by each model's result JSON."""

from __future__ import annotations

import json

import arviz as az
import numpy as np
import pytest
from typer.testing import CliRunner

from analysis import pipeline, traces
from analysis.folder import AnalysisFolder
from analysis.models import prepare, smooth_draws
from analysis.results import ModelSpec, fit_one
from analysis.simdata import simulate_import, simulate_ratings
from study_app.cli import app

SAMPLER = pipeline.sampler_settings("pymc", draws=50, tune=50, chains=2)
TINY = ["--backend", "pymc", "--draws", "50", "--tune", "50", "--chains", "1"]


def test_thin_step_keeps_at_most_the_budget():
    assert traces.thin_step(4, 1500) == 6  # 4 x 1,500 draws -> 4 x 250 = 1,000
    assert traces.thin_step(4, 250) == 1
    assert traces.thin_step(1, 1001) == 2
    for chains, draws in [(4, 1500), (2, 999), (3, 1000), (1, 50)]:
        step = traces.thin_step(chains, draws)
        assert chains * len(range(0, draws, step)) <= traces.COMPACT_DRAWS


@pytest.fixture(scope="module")
def ordinal_full_fit():
    """One full fit (with the per-rating probabilities and the posterior predictive draws)
    of the ordinal action model, shared by the tests below: the compact level drops what a
    full fit adds, so every level can be written from it."""
    ratings = simulate_ratings(12, 3, seed=2)
    spec = ModelSpec("action", "l1_profile", "ordinal", ppc=True, log_likelihood=True)
    data = prepare(ratings, "action", "l1_profile")
    result, idata = fit_one(spec, data, SAMPLER, keep_probabilities=True)
    return spec, data, result, idata


def _fit(likelihood: str, ordinal_full_fit):
    if likelihood == "ordinal":
        return ordinal_full_fit
    spec = ModelSpec("action", "l1_profile", likelihood)
    data = prepare(simulate_ratings(12, 3, seed=2), "action", "l1_profile")
    # a full-trace fit: the GAMM's integrated w_s are drawn into it
    return (spec, data, *fit_one(spec, data, SAMPLER, keep_probabilities=True))


@pytest.mark.parametrize("likelihood", ["gamm", "ordinal"])
def test_compact_trace_thins_and_keeps_the_curve_draws(tmp_path, monkeypatch, likelihood,
                                                      ordinal_full_fit):
    monkeypatch.setattr(traces, "COMPACT_DRAWS", 20)  # 2 x 50 draws -> every 5th: 2 x 10
    spec, data, result, idata = _fit(likelihood, ordinal_full_fit)
    folder = AnalysisFolder(tmp_path)
    folder.save(result, idata, "fp", "compact")
    trace = az.from_netcdf(folder.trace_path(spec))
    post = trace.posterior
    assert post.sizes["chain"] == 2 and post.sizes["draw"] == 10
    assert list(post["draw"].values) == list(range(0, 50, 5))
    assert "w_s" not in post and ("w_s" in idata.posterior) == (likelihood == "gamm")
    assert "sigma_u" in post and post["sigma_u"].dtype == np.float32
    kept = idata.posterior["delta_f"].isel(draw=slice(None, None, 5)).astype("float32")
    grid = result.smooth["d"].to_numpy()
    expected = smooth_draws(data, np.asarray(kept.values, dtype=float).reshape(20, -1), grid)
    curve = post["f_curve"]
    assert curve.dims == ("chain", "draw", "d") and np.allclose(curve["d"].values, grid)
    assert np.allclose(np.asarray(curve.values).reshape(20, -1), expected, atol=1e-6)
    assert ("log_likelihood" in trace.groups()) == (likelihood == "ordinal")
    if likelihood == "ordinal":
        assert trace.log_likelihood.sizes["draw"] == 10
    assert trace.sample_stats.sizes["draw"] == 10
    reloaded = folder.reusable(spec, data, "fp", "compact")
    assert reloaded is not None and reloaded.coefficients == result.coefficients


def test_trace_levels(tmp_path, ordinal_full_fit):
    spec, data, result, idata = ordinal_full_fit
    assert "y_probs" in idata.posterior and "posterior_predictive" in idata.groups()
    sizes = {}
    for level in ("none", "compact", "full"):
        folder = AnalysisFolder(tmp_path / level)
        folder.save(result, idata, "fp", level)
        path = folder.trace_path(spec)
        assert path.exists() == (level != "none")
        assert folder.reusable(spec, data, "fp", level) is not None
        assert folder.reusable(spec, data, "other", level) is None
        if level == "none":
            assert folder.reusable(spec, data, "fp", "compact") is None  # no trace to reuse
            continue
        sizes[level] = path.stat().st_size
        trace = az.from_netcdf(path)
        assert "log_likelihood" in trace.groups() and "sigma_u" in trace.posterior
        assert ("y_probs" in trace.posterior) == (level == "full")
        assert ("posterior_predictive" in trace.groups()) == (level == "full")
        dtype = trace.posterior["sigma_u"].dtype
        assert dtype == (np.float32 if level == "compact" else np.float64)
        reloaded = folder.reusable(spec, data, "fp", level)
        assert reloaded.reused and reloaded.coefficients == result.coefficients
        assert np.allclose(np.asarray(reloaded.loo["loo_i"]), np.asarray(result.loo["loo_i"]))
    assert sizes["compact"] < sizes["full"]


@pytest.mark.slow  # two analyze runs; compact traces themselves are tested above
def test_resume_after_a_compact_trace_gives_the_same_summary_and_report(tmp_path):
    csv, db = tmp_path / "r.csv", tmp_path / "s.duckdb"
    simulate_import(16, 4, seed=5).to_csv(csv, index=False)
    runner = CliRunner()
    assert runner.invoke(app, ["import-ratings", "--csv", str(csv), "--db", str(db),
                               "--study", "ext"]).exit_code == 0
    out = tmp_path / "out"
    args = ["analyze", "--db", str(db), "--out", str(out), *TINY, "--no-gaussian", "--json"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    (out / "report.html").unlink()
    again = runner.invoke(app, [*args, "--resume"])
    assert again.exit_code == 0, again.output
    a, b = json.loads(first.stdout), json.loads(again.stdout)
    assert b["reused"] == [m["name"] for m in a["models"]] and b["fitted"] == []

    def without_reuse(doc):
        return [{k: v for k, v in m.items() if k != "reused"} for m in doc["models"]]

    assert without_reuse(a) == without_reuse(b)
    assert a["loo"] == b["loo"] and (out / "report.html").stat().st_size > 10_000
    assert b["report"] == "report.html" and b["report_error"] is None
