"""The Psych-DS package's analysis/primary.R (ordinal::clmm) on an exported simulated study
agrees with the PyMC fit of the same model (`analyze`): each estimate within one posterior
sd of the posterior mean (end-to-end: R, a Bayesian fit)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pandas as pd
import pytest
from typer.testing import CliRunner

from data.store import Store
from protocols.definition.schema import load_protocol
from study_app.cli import app
from study_app.simulator import simulate

# A central 94% interval of a normal posterior spans 2 x 1.881 sd (analysis.results' HDI).
SD_PER_INTERVAL = 2 * 1.881


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R with ordinal")
def test_primary_r_agrees_with_the_pymc_fit(tmp_path) -> None:
    db = tmp_path / "tom.duckdb"
    with Store(db) as store:
        simulate(load_protocol("tominaga-replication"), store, 40, decision_model="bayes")
    runner = CliRunner()
    r = runner.invoke(app, ["analyze", "--db", str(db), "--out", str(tmp_path / "fit"),
                            "--draws", "500", "--tune", "500", "--chains", "2",
                            "--no-gaussian", "--mgcv", "off"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["export", "--db", str(db), "--out", str(tmp_path / "pkg"),
                            "--format", "psych-ds", "--json"])
    assert r.exit_code == 0, r.output
    main = json.loads(r.stdout)["primary_model"]
    run = subprocess.run(["Rscript", "analysis/primary.R"], cwd=tmp_path / "pkg",
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr
    kept = int(re.search(r"(\d+) of \d+ ratings after", run.stdout).group(1))
    clmm = pd.read_csv(tmp_path / "pkg" / "analysis" / "primary_estimates.csv")
    summary = json.loads((tmp_path / "fit" / "summary.json").read_text())
    model = next(m for m in summary["models"] if m["outcome"] == main["outcome"]
                 and m["distance"] == main["distance"] and m["likelihood"] == "ordinal")
    assert kept == model["n"]  # the same exclusions, the same ratings
    posterior = {c["name"]: c for c in model["coefficients"]}
    compared = []
    for row in clmm.itertuples():
        if row.name not in posterior or row.name == "sigma_b":
            continue  # sigma_b: clmm's slopes are correlated with the intercepts
        c = posterior[row.name]
        sd = (c["hi"] - c["lo"]) / SD_PER_INTERVAL
        compared.append(row.name)
        assert abs(row.estimate - c["mean"]) <= sd, (row.name, row.estimate, c)
    assert "sigma_u" in compared and sum(n.startswith("cutpoint") for n in compared) >= 5
