"""The commands on a PostgreSQL store: simulate writes, and while the study stays open for
writing (as a server would hold it), export and analyze's reader see the same data as from
a DuckDB file written with the same seed (the commands run through the console script's
entry point, in this process)."""

from __future__ import annotations

import json

import pytest

from data.store import Store
from study_app.study_analysis import load_study

SMALL = """\
id: pg-cli
title: PostgreSQL CLI study
scenario: loan
seed: 3
decision_model: bayes
profile: {source: persona}
elicitation: {scheme: binary}
arms:
  - {id: oracle, method: oracle, options: {bins: 6, plausibility: false, grid_range: training}}
plans: {per_participant: 2, design: stratified, distance: l1_profile}
"""


def test_simulate_export_and_analysis_reads_on_postgres(tmp_path, postgres_url,
                                                        run_cli) -> None:
    def _run(*args: str) -> dict:
        out = run_cli(*args, "--json")
        assert out.code == 0, out.stderr[-2000:]
        return json.loads(out.stdout)

    proto = tmp_path / "p.yaml"
    proto.write_text(SMALL)
    file_db = str(tmp_path / "same.duckdb")
    on_pg = _run("simulate", "--protocol", str(proto), "--participants", "6", "--db",
                 postgres_url, "--seed", "1")
    on_file = _run("simulate", "--protocol", str(proto), "--participants", "6", "--db",
                   file_db, "--seed", "1")
    for key in ("participants", "complete", "plans", "ratings"):
        assert on_pg[key] == on_file[key], key
    # the same ratings, summed in each database's own order
    assert on_pg["mean_acceptance"] == pytest.approx(on_file["mean_acceptance"], abs=1e-12)
    with Store(postgres_url):  # a writer holds the study, as `serve` does
        manifest = _run("export", "--db", postgres_url, "--format", "csv", "--out",
                        str(tmp_path / "out"))
        # six participants, up to two plans each (fewer where no plan keeps to the rules)
        assert manifest["tables"]["ratings"] == on_pg["ratings"] > 6
        study, ratings, plans, _ = load_study(postgres_url, None)
    _, file_ratings, file_plans, _ = load_study(file_db, None)
    assert study == "pg-cli"
    assert list(ratings.columns) == list(file_ratings.columns)
    assert ratings.dtypes.to_dict() == file_ratings.dtypes.to_dict()
    assert sorted(ratings["acceptance"]) == sorted(file_ratings["acceptance"])
    assert len(plans) == len(file_plans) == on_pg["plans"]
