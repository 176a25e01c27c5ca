"""`benchmark analysis` times a first fit (compilation included) and further studies refit on
the model compiled once (the amortized seconds per fit), each against PyMC's default NUTS
in the same run (tiny studies, short chains: this checks the bookkeeping, not the speed)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from study_app.cli import app

pytestmark = pytest.mark.e2e  # benchmark runs, each a first fit and refits: make test-e2e


def test_amortized_fits_are_new_studies_on_one_compiled_model(tmp_path):
    out = tmp_path / "bench.json"
    r = CliRunner().invoke(app, ["benchmark", "analysis", "--participants", "10", "--plans",
                                 "3", "--backend", "pymc", "--draws", "60", "--tune", "60",
                                 "--baseline-draws", "70", "--baseline-tune", "50",
                                 "--chains", "2", "--refits", "2", "--json-file", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    fits = doc["amortized_fits"]
    assert doc["refits"] == 2 and [f["seed"] for f in fits] == [1, 2]  # new data each time
    # each backend at its own settings
    assert (doc["draws"], doc["tune"], doc["baseline_draws"], doc["baseline_tune"]) == (
        60, 60, 70, 50)
    assert doc["compile_seconds"] > 0 and doc["seconds"] >= doc["compile_seconds"]
    mean = sum(f["seconds"] for f in fits) / 2
    assert abs(doc["amortized_seconds_per_fit"] - mean) < 0.011
    assert doc["amortized_speedup"] == round(doc["baseline_seconds"]
                                             / doc["amortized_seconds_per_fit"], 2)
    assert doc["speedup"] == round(doc["baseline_seconds"] / doc["seconds"], 2)
    assert doc["amortized_max_rhat"] == max(f["max_rhat"] for f in fits)
    assert isinstance(doc["converged"], bool) and isinstance(doc["baseline_converged"], bool)
    assert doc["cores"] == 2 and doc["cpu_speedup"] is None  # other processes' CPU: not ours


def test_one_core_reports_cpu_seconds(tmp_path):
    """With --cores 1 every chain runs in this process: its CPU seconds are the fit's."""
    out = tmp_path / "bench.json"
    r = CliRunner().invoke(app, ["benchmark", "analysis", "--participants", "10", "--plans",
                                 "3", "--backend", "pymc", "--draws", "60", "--tune", "60",
                                 "--baseline-draws", "60", "--baseline-tune", "60",
                                 "--chains", "2", "--cores", "1", "--refits", "1",
                                 "--json-file", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["cpu_seconds"] > 0 and doc["baseline_cpu_seconds"] > 0
    assert doc["amortized_cpu_seconds_per_fit"] == doc["amortized_fits"][0]["cpu_seconds"] > 0
    assert doc["amortized_cpu_speedup"] == round(doc["baseline_cpu_seconds"]
                                                 / doc["amortized_cpu_seconds_per_fit"], 2)


def test_no_refits_means_no_amortized_figure(tmp_path):
    out = tmp_path / "bench.json"
    r = CliRunner().invoke(app, ["benchmark", "analysis", "--participants", "8", "--plans",
                                 "3", "--backend", "pymc", "--draws", "50", "--tune", "50",
                                 "--chains", "1", "--refits", "0", "--no-baseline",
                                 "--json-file", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["amortized_seconds_per_fit"] is None and doc["amortized_fits"] == []
    assert "amortized_speedup" not in doc and "baseline_seconds" not in doc
