"""`analyze` on a study whose exclusions hit the arms unevenly (iCARMA's three arms: CARMA
ignores what a person marked unchangeable, and impossible_items takes its ratings): the
exclusions per arm, and the main model fitted on every rating beside the per-protocol one."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from data.store import Store
from protocols.definition.schema import load_protocol
from study_app.cli import app
from study_app.simulator import simulate


@pytest.mark.e2e  # six short Bayesian fits
@pytest.mark.timeout(2400)
def test_uneven_exclusions_add_the_intention_to_treat_fit(tmp_path, trained_home) -> None:
    db = tmp_path / "icarma.duckdb"
    with Store(db) as store:
        simulate(load_protocol("icarma-personalization"), store, 24)
        n_all = len(store.ratings_long("icarma-personalization"))
    out = tmp_path / "report"
    r = CliRunner().invoke(app, ["analyze", "--db", str(db), "--out", str(out), "--draws",
                                 "100", "--tune", "100", "--chains", "2", "--no-gaussian",
                                 "--mgcv", "off", "--json"])
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    ex = summary["exclusions"]
    assert ex["uneven"] and {row["arm"] for row in ex["by_arm"]} == {"icarma", "carma",
                                                                     "oracle"}
    assert sum(row["excluded"] for row in ex["by_arm"]) == ex["n_ratings_before"] - ex[
        "n_ratings_kept"]
    itt = summary["intention_to_treat"]
    assert itt["n_ratings"] == n_all > summary["n_ratings"]
    main = {m["name"]: m for m in summary["models"]}
    assert [m["name"] for m in itt["models"]] == [
        f"{o}_l1_profile_ordinal" for o in ("acceptance", "action")]
    assert all(m["n"] == n_all and main[m["name"]]["n"] == summary["n_ratings"]
               for m in itt["models"])
    html = (out / "report.html").read_text()
    assert "intention to treat" in html and "per protocol" in html
