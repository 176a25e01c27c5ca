"""No finished work is lost: per-model results written as each model finishes, a failing
model or report step, --resume by fingerprint (a real SIGKILL too); the trace levels are
test_traces.py's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analysis import pipeline
from analysis.folder import fingerprint
from analysis.models import prepare
from analysis.results import ModelSpec, finish_one, start_one
from analysis.simdata import simulate_import, simulate_ratings
from study_app.cli import app
from tests.cli_process import CLI

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
    """Replace the start of the pipeline's fits with one that records each model fitted (and
    fails on ``fail_on``)."""
    calls: list[str] = []

    def start(spec, data, sampler, **kw):
        calls.append(spec.name)
        if spec.name == fail_on:
            raise RuntimeError("sampler exploded\nwith a second line")
        return start_one(spec, data, sampler, **kw)

    monkeypatch.setattr(pipeline, "start_one", start)
    return calls


def _analyze(db: Path, out: Path, *extra: str):
    return CliRunner().invoke(app, ["analyze", "--db", str(db), "--out", str(out), *TINY,
                                    "--no-gaussian", *extra])


def test_a_failed_model_loses_nothing_and_resume_fits_only_it(imported_db, tmp_path,
                                                              monkeypatch):
    out = tmp_path / "out"
    calls = _counting_fit(monkeypatch, fail_on="action_l0_profile_ordinal")
    r = _analyze(imported_db, out, "--trace", "none")  # traces: test_traces.py
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


def test_each_model_starts_before_the_previous_one_is_summarized(imported_db, tmp_path,
                                                                monkeypatch):
    """The pipeline: model i + 1 is started (compiled, its chains running) before model i is
    waited for and summarized; the results still come in the models' order."""
    events: list[tuple[str, str]] = []

    def start(spec, data, sampler, **kw):
        events.append(("start", spec.name))
        return start_one(spec, data, sampler, **kw)

    def finish(pending):
        events.append(("finish", pending.spec.name))
        return finish_one(pending)

    monkeypatch.setattr(pipeline, "start_one", start)
    monkeypatch.setattr(pipeline, "finish_one", finish)
    r = _analyze(imported_db, tmp_path / "out", "--trace", "none", "--json")
    assert r.exit_code == 0, r.output
    names = [name for kind, name in events if kind == "start"]
    overlapped = [e for i in range(1, len(names))
                  for e in (("start", names[i]), ("finish", names[i - 1]))]
    assert len(names) == 4
    assert events == [("start", names[0]), *overlapped, ("finish", names[-1])]
    assert [m["name"] for m in json.loads(r.stdout)["models"]] == names


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


def test_a_gaussian_familys_fingerprint_covers_its_likelihood_kernel():
    """An edited marginal likelihood (analysis.gaussian_marginal) refits a GAMM on resume;
    the ordinal models, which do not use it, keep their fingerprints."""
    from analysis.families import FAMILIES
    from analysis.folder import family_modules

    assert "gaussian_marginal.py" in family_modules(FAMILIES["gamm"])
    assert "gaussian_marginal.py" in family_modules(FAMILIES["gaussian"])
    assert "gaussian_marginal.py" not in family_modules(FAMILIES["ordinal"])


@pytest.mark.slow  # a real SIGKILL mid-analysis and a rerun (make test-slow)
def test_sigkill_after_the_third_model_then_resume(imported_db, tmp_path):
    """A real SIGKILL once three models are on disk; the rerun with --resume reuses them."""
    out = tmp_path / "out"
    cli = [CLI, "analyze", "--db",
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
