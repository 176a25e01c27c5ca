"""`reproduce tominaga` on a small simulated study (slow: a simulation and four mgcv GAMMs;
the full 362-participant run is the acceptance measurement, docs/analysis-mgcv.md)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from study_app.cli import app


@pytest.mark.slow
def test_reproduce_tominaga_json_holds_table_s2_beside_the_papers():
    r = CliRunner().invoke(app, ["reproduce", "tominaga", "--n", "40", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["target"] == "tominaga" and doc["ours"]["participants"] == 40
    assert doc["ours"]["analysed"] == doc["ours"]["evaluations"] - doc["ours"]["excluded"]
    assert [f["finding"] for f in doc["findings"]] == [1, 2, 3]
    assert all(f["holds"] in (True, False) for f in doc["findings"])
    assert len(doc["table_s2"]) == 16 and {c["model"] for c in doc["beside_paper"]} == {
        "Model-1", "Model-2", "Model-3", "Model-4"}
    edf = next(c for c in doc["beside_paper"] if c["model"] == "Model-3"
               and c["statistic"] == "edf")
    assert edf["paper"] == 4.25 and edf["ours"] > 0
    assert "Table S2" in r.stderr and "of the paper's findings hold" in r.stderr


def test_the_sloped_truth_gives_acceptance_the_falling_curve_finding_1_denies():
    """The negative control changes only the acceptance curve of the shipped truth: its mean
    rating falls with distance (the simulation's own curve, engine.synthetic.rating_model)."""
    from protocols.definition.schema import load_protocol
    from study_app.cli.reproduce_tominaga import KIND, truth_protocol

    shipped = load_protocol("tominaga-replication")
    assert truth_protocol(shipped, "shipped") is shipped
    sloped = truth_protocol(shipped, "sloped")
    assert sloped.simulation.ratings.action == shipped.simulation.ratings.action
    acc = sloped.simulation.ratings.acceptance
    assert (acc.at_zero, acc.at_far, acc.half_distance) == (4.5, 2.5, 0.3)
    assert acc.sd_intercept == shipped.simulation.ratings.acceptance.sd_intercept
    curve = sloped.simulation.behaviour().ratings.acceptance.curve
    assert curve.drop > 1.0 and shipped.simulation.behaviour().ratings.acceptance.curve.drop == 0
    assert KIND.startswith("recovery check of the pipeline")
    with pytest.raises(ValueError, match="shipped, sloped"):
        truth_protocol(shipped, "flat")


def test_truth_is_a_tominaga_option_only():
    r = CliRunner().invoke(app, ["reproduce", "hare-budget", "--truth", "sloped"])
    assert r.exit_code == 2 and "tominaga target only" in r.output
    r = CliRunner().invoke(app, ["reproduce", "tominaga", "--truth", "flat"])
    assert r.exit_code == 2 and "shipped, sloped" in r.output


@pytest.mark.slow
def test_the_negative_control_fails_finding_1_and_says_what_it_is():
    r = CliRunner().invoke(app, ["reproduce", "tominaga", "--truth", "sloped", "--n", "80",
                                 "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["config"]["truth"] == "sloped" and "negative control" in doc["config"]["truth_is"]
    finding1 = doc["findings"][0]
    assert finding1["finding"] == 1 and finding1["holds"] is False, finding1["detail"]
    assert "recovery check of the pipeline" in r.stderr
