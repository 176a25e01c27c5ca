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
