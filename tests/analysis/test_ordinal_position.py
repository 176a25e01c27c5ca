"""The recipe's family (docs/tutorials/add-an-analysis-model.md): the ordinal model with a
random intercept per position shown, fitted on a small simulated study whose ratings move
with the position, recovered, and drawn in analyze's report when asked for."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import FAMILIES, prepare, simulate_ratings
from analysis.model_data import AnalysisDataError
from analysis.pipeline import Analysis, plan_models
from analysis.report import render
from analysis.results import ModelSpec, fit_one

SAMPLER = {"backend": "pymc", "draws": 150, "tune": 150, "chains": 2, "seed": 0,
           "target_accept": 0.9}


def _ratings() -> pd.DataFrame:
    """30 participants x 6 plans; the first plan shown rated 2 points higher, the last 2
    lower (clipped to 1..7): a strong order effect."""
    r = simulate_ratings(participants=30, plans=6, seed=3)
    shift = np.select([r["position"] == 0, r["position"] == 5], [2, -2], 0)
    return r.assign(acceptance=np.clip(r["acceptance"] + shift, 1, 7))


@pytest.fixture(scope="module")
def fitted():
    ratings = _ratings()
    data = prepare(ratings, "acceptance", "l1_profile")
    result, _ = fit_one(ModelSpec("acceptance", "l1_profile", "ordinal_position"), data,
                        SAMPLER)
    return ratings, result


def test_the_family_is_registered_and_needs_the_position():
    family = FAMILIES["ordinal_position"]
    assert not family.default and not family.main and family.scale == "logit"
    data = prepare(_ratings().drop(columns=["position"]), "acceptance", "l1_profile")
    with pytest.raises(AnalysisDataError, match="position"):
        family.model_arrays(data)


def test_the_position_effect_is_recovered(fitted):
    _, result = fitted
    by = {c.name: c for c in result.coefficients}
    assert [c.name for c in result.coefficients if c.name.startswith("v[")] == [
        f"v[{j}]" for j in range(6)]
    assert by["sigma_v"].lo > 0.2  # the order effect is found, not shrunk away
    assert by["v[0]"].lo > 0 > by["v[5]"].hi  # first plan up, last plan down
    assert by["v[0]"].mean - by["v[5]"].mean > 1.5
    assert result.diagnostics.max_rhat < 1.1


def test_its_section_appears_in_the_report(fitted):
    ratings, result = fitted
    specs = plan_models("l1_profile", gaussian=False, families=("ordinal_position",))
    analysis = Analysis("s", ratings, pd.DataFrame(), specs, models=[result])
    html = render(analysis)
    title = "Bayesian ordinal model with position intercepts"
    assert html.count(title) == 1 and "Intercept per position shown" in html
    section = html[html.index(title):]
    assert "sigma_v" in section and "v[0]" in section.split("</section>")[0]


@pytest.mark.e2e
def test_analyze_fits_it_when_asked_and_reports_it(tmp_path):
    """``analyze --family ordinal_position`` on a small simulated study: its models beside
    the main ones in summary.json, its section in report.html (the recipe's step 4)."""
    import json

    from typer.testing import CliRunner

    from data.store import Store
    from protocols.definition.schema import load_protocol
    from study_app.cli import app
    from study_app.simulator import simulate

    db, out = tmp_path / "tom.duckdb", tmp_path / "out"
    with Store(db) as store:
        simulate(load_protocol("tominaga-replication"), store, 30, decision_model="bayes")
    r = CliRunner().invoke(app, ["analyze", "--db", str(db), "--out", str(out), "--backend",
                                 "pymc", "--draws", "100", "--tune", "100", "--chains", "2",
                                 "--no-gaussian", "--mgcv", "off", "--family",
                                 "ordinal_position", "--trace", "none"])
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    assert [m["likelihood"] for m in summary["models"]] == [
        "ordinal", "ordinal", "ordinal_position", "ordinal_position"] * 2
    mine = [m for m in summary["models"] if m["likelihood"] == "ordinal_position"]
    assert all("sigma_v" in {c["name"] for c in m["coefficients"]} for m in mine)
    html = (out / "report.html").read_text()
    assert "Bayesian ordinal model with position intercepts" in html
    assert "Intercept per position shown" in html
