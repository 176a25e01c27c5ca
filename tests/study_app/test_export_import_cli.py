"""`recourse-study import-ratings` and `recourse-study export` end to end (CLI)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from study_app.cli import app

CSV = """participant_id,plan_id,l0,l1,acceptance,action,arm
P1,a,1,0.2,3,2,pool
P1,b,2,0.5,4,1,pool
P2,a,3,0.7,2,2,pool
"""


def test_import_then_export(tmp_path) -> None:
    runner = CliRunner()
    csv, db, out = tmp_path / "r.csv", tmp_path / "s.duckdb", tmp_path / "out"
    csv.write_text(CSV)
    res = runner.invoke(app, ["import-ratings", "--csv", str(csv), "--db", str(db),
                              "--study", "ref", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == {"study_id": "ref", "participants": 2,
                                      "new_participants": 2, "ratings": 3,
                                      "ignored_columns": []}
    res = runner.invoke(app, ["export", "--db", str(db), "--out", str(out), "--format", "csv",
                              "--json"])
    assert res.exit_code == 0, res.output
    manifest = json.loads(res.stdout)
    assert manifest["tables"]["ratings_long"] == 3 and manifest["format"] == "csv"
    assert (out / "ratings_long.csv").read_text().count("\n") == 4
    assert "codebook.csv" in manifest["files"]


def test_bad_csv_and_bad_arguments(tmp_path) -> None:
    runner = CliRunner()
    csv, db = tmp_path / "r.csv", tmp_path / "s.duckdb"
    csv.write_text(CSV.replace("P2,a,3,0.7,2,2", "P2,a,3,0.7,9,2"))
    res = runner.invoke(app, ["import-ratings", "--csv", str(csv), "--db", str(db),
                              "--study", "ref"])
    assert res.exit_code == 2
    assert "line 4: acceptance: 9 is outside 1..7" in res.output
    assert "nothing was imported" in res.output
    res = runner.invoke(app, ["export", "--db", str(tmp_path / "none.duckdb"), "--out",
                              str(tmp_path / "o")])
    assert res.exit_code == 2 and "no database" in res.output
    res = runner.invoke(app, ["export", "--db", str(db), "--out", str(tmp_path / "o"),
                              "--format", "xlsx"])
    assert res.exit_code == 2 and "'xlsx' is not one of" in res.output
    assert "psych-ds" in res.output


def test_unknown_columns_are_reported_or_ignored_on_request(tmp_path) -> None:
    runner = CliRunner()
    csv, db = tmp_path / "r.csv", tmp_path / "s.duckdb"
    csv.write_text(CSV.replace("action,arm\n", "action,arm,age\n").replace("pool\n", "pool,30\n"))
    res = runner.invoke(app, ["import-ratings", "--csv", str(csv), "--db", str(db),
                              "--study", "ref", "--json"])
    assert res.exit_code == 2 and res.stdout == ""
    assert "line 1: unknown column(s): age" in res.stderr
    assert "--ignore-unknown-columns" in res.stderr and "nothing was imported" in res.stderr
    res = runner.invoke(app, ["import-ratings", "--csv", str(csv), "--db", str(db),
                              "--study", "ref", "--ignore-unknown-columns"])
    assert res.exit_code == 0, res.output
    assert "imported 3 ratings" in res.stderr and "ignored column(s): age" in res.stderr
