"""No finished work is lost: per-model results written as each model finishes, a failing
model or report step, --resume by fingerprint (a real SIGKILL too), trace levels."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from analysis import pipeline
from analysis.folder import AnalysisFolder, fingerprint
from analysis.models import prepare
from analysis.results import ModelSpec, fit_one
from analysis.simdata import simulate_import, simulate_ratings
from study_app.cli import app

TINY = ["--backend", "pymc", "--draws", "50", "--tune", "50", "--chains", "1", "--mgcv", "off"]
SAMPLER = pipeline.sampler_settings("pymc", draws=50, tune=50, chains=1)


@pytest.fixture(scope="module")
def imported_db(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("resume")
    csv, db = tmp / "r.csv", tmp / "s.duckdb"
    simulate_import(16, 4, seed=5).to_csv(csv, index=False)
    r = CliRunner().invoke(app, ["import-ratings", "--csv", str(csv), "--db", str(db),
                                 "--study", "ext"])
    assert r.exit_code == 0, r.output
    return db


def _counting_fit(monkeypatch, fail_on: str | None = None) -> list[str]:
    """Replace the pipeline's fit with one that records each model fitted (and fails on
    ``fail_on``)."""
    calls: list[str] = []

    def fit(spec, data, sampler, **kw):
        calls.append(spec.name)
        if spec.name == fail_on:
            raise RuntimeError("sampler exploded\nwith a second line")
        return fit_one(spec, data, sampler, **kw)

    monkeypatch.setattr(pipeline, "fit_one", fit)
    return calls


def _analyze(db: Path, out: Path, *extra: str):
    return CliRunner().invoke(app, ["analyze", "--db", str(db), "--out", str(out), *TINY,
                                    "--no-gaussian", *extra])


def test_a_failed_model_loses_nothing_and_resume_fits_only_it(imported_db, tmp_path,
                                                              monkeypatch):
    out = tmp_path / "out"
    calls = _counting_fit(monkeypatch, fail_on="action_l0_profile_ordinal")
    r = _analyze(imported_db, out, "--trace", "none")  # traces: test_trace_levels below
    assert r.exit_code == 1
    assert "error: model action_l0_profile_ordinal failed: RuntimeError: sampler exploded " \
           "with a second line" in r.stderr
    assert "rerun the same command with --resume" in r.stderr
    assert len(calls) == 4  # the models after the failed one still ran
    summary = json.loads((out / "summary.json").read_text())
    assert not summary["complete"] and [f["model"] for f in summary["failed"]] == [
        "action_l0_profile_ordinal"]
    assert len(summary["models"]) == 3 and "action" not in summary["loo"]
    assert len(list((out / "models").glob("*.json"))) == 3
    assert "Incomplete analysis" in (out / "report.html").read_text()

    calls = _counting_fit(monkeypatch)
    r = _analyze(imported_db, out, "--trace", "none", "--resume", "--json")
    assert r.exit_code == 0, r.output
    assert calls == ["action_l0_profile_ordinal"]
    summary = json.loads(r.stdout)
    assert summary["complete"] and summary["fitted"] == ["action_l0_profile_ordinal"]
    assert len(summary["reused"]) == 3 and set(summary["loo"]) == {"acceptance", "action"}
    assert r.stderr.count("reused ") == 3


@pytest.mark.slow  # eight fits, then a resume; the failed-model resume above stays fast
def test_a_failed_report_keeps_every_fit_and_resume_only_reports(imported_db, tmp_path,
                                                                 monkeypatch):
    import analysis.report

    out = tmp_path / "out"
    calls = _counting_fit(monkeypatch)

    def broken(_analysis):
        raise ValueError("cannot convert float NaN to bool")

    monkeypatch.setattr(analysis.report, "render", broken)
    r = _analyze(imported_db, out, "--json")
    assert r.exit_code == 1 and len(calls) == 4
    assert "the report step failed: ValueError: cannot convert float NaN to bool" in r.stderr
    assert "rerun with --resume to make the report without refitting" in r.stderr
    summary = json.loads(r.stdout)  # the result is still printed
    assert summary["complete"] and summary["report"] is None and summary["report_error"]
    assert json.loads((out / "summary.json").read_text())["report_error"]
    assert not (out / "report.html").exists()

    monkeypatch.undo()
    calls = _counting_fit(monkeypatch)
    r = _analyze(imported_db, out, "--resume")
    assert r.exit_code == 0, r.output
    assert calls == [] and (out / "report.html").exists()


@pytest.mark.slow  # eight fits twice; the resume tests above keep the fast path covered
def test_without_resume_everything_is_refitted(imported_db, tmp_path, monkeypatch):
    out = tmp_path / "out"
    calls = _counting_fit(monkeypatch)
    assert _analyze(imported_db, out, "--trace", "none").exit_code == 0
    r = _analyze(imported_db, out, "--trace", "none")
    assert r.exit_code == 0 and len(calls) == 8
    assert r.stderr.count("a matching fit is stored; --resume reuses it") == 4
    r = _analyze(imported_db, out, "--trace", "compact", "--resume")  # needs traces: refit
    assert r.exit_code == 0 and len(calls) == 12


def test_fingerprint_follows_data_model_and_sampler():
    ratings = simulate_ratings(12, 3, seed=1)
    spec = ModelSpec("action", "l1_profile", "ordinal", log_likelihood=True)
    data = prepare(ratings, "action", "l1_profile")
    fp = fingerprint(spec, data, SAMPLER)
    assert fp == fingerprint(spec, prepare(ratings.copy(), "action", "l1_profile"), SAMPLER)
    changed = ratings.copy()
    changed.loc[0, "action"] = 8 - changed.loc[0, "action"]
    assert fp != fingerprint(spec, prepare(changed, "action", "l1_profile"), SAMPLER)
    assert fp != fingerprint(spec, data, {**SAMPLER, "draws": 51})
    assert fp != fingerprint(spec, data, {**SAMPLER, "seed": 1})
    assert fp != fingerprint(ModelSpec("action", "l1_profile", "gaussian"), data, SAMPLER)


def test_trace_levels(tmp_path):
    import arviz as az

    ratings = simulate_ratings(12, 3, seed=2)
    spec = ModelSpec("action", "l1_profile", "ordinal", ppc=True, log_likelihood=True)
    data = prepare(ratings, "action", "l1_profile")
    # one fit per kind of trace: "none" and "compact" store the same fit (no probabilities)
    fits = {keep: fit_one(spec, data, SAMPLER, keep_probabilities=keep)
            for keep in (False, True)}
    sizes = {}
    for level in ("none", "compact", "full"):
        folder = AnalysisFolder(tmp_path / level)
        result, idata = fits[level == "full"]
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


@pytest.mark.slow  # a real SIGKILL mid-analysis and a rerun (make test-slow)
def test_sigkill_after_the_third_model_then_resume(imported_db, tmp_path):
    """A real SIGKILL once three models are on disk; the rerun with --resume reuses them."""
    out = tmp_path / "out"
    cli = [str(Path(sys.executable).parent / "recourse-study"), "analyze", "--db",
           str(imported_db), "--out", str(out), *TINY, "--trace", "none"]
    proc = subprocess.Popen(cli, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while len(list((out / "models").glob("*.json"))) < 3:
        assert proc.poll() is None, "analyze ended before its third model"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    saved = {p.stem for p in (out / "models").glob("*.json")}
    assert len(saved) >= 3
    r = subprocess.run([*cli, "--resume", "--json"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert set(summary["reused"]) == saved
    assert len(summary["models"]) == len(pipeline.plan_models("l1_profile"))  # 8: + GAMMs
    assert set(summary["fitted"]) == {s.name for s in pipeline.plan_models("l1_profile")} - saved
    assert summary["complete"] and (out / "report.html").exists()
