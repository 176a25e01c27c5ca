"""`power --from` and `simulate --like` on a pilot simulated with no action effect: power is
low, a rerun with more studies fits only the new ones, each study used its own posterior
draw, and the drawn behaviour is what a `--like` study stores as its truth. Bad pilots (no
file, no ratings, another protocol) are one line, exit 2, and nothing is written."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from study_app.cli import app
from tests.cli_process import CLI

REPO = Path(__file__).resolve().parents[2]
FIT = ["--backend", "pymc", "--draws", "30", "--tune", "30", "--chains", "1"]
LIKE_FIT = ["--like-backend", "pymc", "--like-draws", "30", "--like-tune", "30",
            "--like-chains", "1"]


def _flat_protocol(folder: Path) -> Path:
    """The pilot-power example with action ratings flat in distance (no effect)."""
    text = (REPO / "docs" / "examples" / "pilot-power.yaml").read_text(encoding="utf-8")
    flat = text.replace("action: {at_zero: 3.6, at_far: 2.8, half_distance: 2.0,",
                        "action: {at_zero: 3.6, drop: 0.0,")
    assert flat != text
    path = folder / "flat.yaml"
    path.write_text(flat, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def flat_pilot(tmp_path_factory, trained_home) -> Path:
    folder = tmp_path_factory.mktemp("pilot")
    db = folder / "pilot.duckdb"
    r = subprocess.run([CLI, "simulate", "--protocol", str(_flat_protocol(folder)),
                        "--participants", "16", "--db", str(db), "--seed", "3", "--json"],
                       capture_output=True, text=True, env=os.environ)
    assert r.returncode == 0, r.stderr
    return db


def _power(db: Path, out: Path, sims: int) -> dict:
    r = subprocess.run([CLI, "power", "--from", str(db), "--participants", "16", "--sims",
                        str(sims), "--effect", "action.distance", *FIT, "--workers", "1",
                        "--out", str(out), "--json"], capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "100"})
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.e2e  # whole pilot fits and Ray-run power studies (make test-e2e)
def test_a_pilot_without_an_effect_gives_low_power_and_resumes(flat_pilot, tmp_path):
    out = tmp_path / "power"
    first = _power(flat_pilot, out, 3)
    assert first["fits"]["fitted_now"] == 3 and first["pilot"]["participants"] == 16
    row = first["rows"][0]["power"]
    assert row["sims"] == 3 and row["detected"] <= 1  # no effect in the pilot: low power
    results = out / "results.jsonl"
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert len({r["draw"] for r in records}) == 3  # every study from its own posterior draw
    pilot = first["pilot"]
    assert pilot["draws"] == 30 and pilot["draws_used"] == 3
    assert set(pilot["quantities"]) == {"acceptance", "action"}
    drop = pilot["quantities"]["action"]["drop"]
    assert first["truth"]["drop"] == drop["mean"] and drop["lo"] < drop["hi"]
    assert "one draw of the posterior" in (out / "power.html").read_text()

    again = _power(flat_pilot, out, 3)  # the same command: the pilot's fit and studies reused
    assert again["fits"]["reused"] == 3 and again["fits"]["fitted_now"] == 0
    assert again["rows"] == first["rows"]
    # a run killed before its last study was written fits only that one on the rerun
    lines = results.read_text().splitlines()
    results.write_text("\n".join(lines[:-1]) + "\n")
    resumed = _power(flat_pilot, out, 3)
    assert resumed["fits"]["reused"] == 2 and resumed["fits"]["fitted_now"] == 1
    redone = json.loads(results.read_text().splitlines()[-1])
    assert redone["key"] == records[-1]["key"] and redone["draw"] == records[-1]["draw"]


@pytest.mark.e2e  # a pilot fit, then a study simulated from one of its draws
def test_simulate_like_stores_the_drawn_behaviour_as_truth(flat_pilot, tmp_path):
    db = tmp_path / "like.duckdb"
    r = subprocess.run([CLI, "simulate", "--like", str(flat_pilot), *LIKE_FIT,
                        "--participants", "3", "--db", str(db), "--seed", "5", "--json"],
                       capture_output=True, text=True, env=os.environ)
    assert r.returncode == 0, r.stderr
    like = json.loads(r.stdout)["like"]
    from data.store import Store

    with Store(db, read_only=True) as store:
        row = store.studies().iloc[0]
    stored = json.loads(row["simulation_json"])["behaviour"]["ratings"]
    block = like["ratings_block"]
    assert stored["distance"] == block["distance"] == "l1_actions"
    for outcome in ("acceptance", "action"):
        assert stored[outcome]["intercept"] == pytest.approx(block[outcome]["intercept"])
        assert stored[outcome]["curve"]["drop"] == pytest.approx(block[outcome]["drop"])
        assert stored[outcome]["cutpoints"] == pytest.approx(block[outcome]["cutpoints"])


def _one_line_exit_2(args: list[str], message: str) -> None:
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 2, r.output
    assert r.stdout == "" and "Traceback" not in r.output
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: "), r.stderr
    assert message in r.stderr


def _pilots(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "pilots").glob("*")) if (home / "pilots").exists() else []


def test_bad_pilots_are_one_line_and_nothing_is_written(flat_pilot, tmp_path, trained_home):
    from data.store import Store
    from protocols.definition.schema import load_protocol
    from protocols.running.registration import register_study

    empty = tmp_path / "empty.duckdb"
    with Store(empty) as store:
        register_study(store, "empty", load_protocol("tominaga-replication"), None)
    before = _pilots(trained_home)
    power = ["power", "--participants", "16", "--sims", "2", *FIT, "--out", str(tmp_path / "p")]
    _one_line_exit_2([*power, "--from", str(tmp_path / "missing.duckdb")],
                     f"--from: no database at {tmp_path / 'missing.duckdb'}")
    _one_line_exit_2([*power, "--from", str(empty)],
                     "study 'empty' in " + str(empty) + " has no ratings yet: a pilot needs "
                     "rated plans")
    _one_line_exit_2([*power, "--from", str(flat_pilot), "--protocol",
                      "icarma-personalization"],
                     "is a pilot of protocol 'pilot-power'")
    _one_line_exit_2(power, "give --protocol")
    like = tmp_path / "like.duckdb"
    _one_line_exit_2(["simulate", "--like", str(empty), "--db", str(like)],
                     "--like: study 'empty' in")
    assert not (tmp_path / "p").exists() and not like.exists()
    assert _pilots(trained_home) == before  # no pilot fit written for a refused pilot
