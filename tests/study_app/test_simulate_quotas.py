"""`simulate` with quotas, time limits and dropout: completers per arm level and never past
their targets, the rest told the study is full; participants who leave time out; bad
--dropout input refused before anything is written."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from data.store import Store
from protocols.definition.schema import parse_protocol
from study_app.cli import app
from study_app.simulator import simulate

SMALL = """\
id: small-quotas
title: Small quota study
scenario: loan
seed: 5
decision_model: bayes
profile: {source: persona}
elicitation: {scheme: ranking}
arms:
  - {id: pool, method: pool, options: {donors: 10}}
  - {id: oracle, method: oracle, options: {bins: 6, plausibility: false}}
plans: {per_participant: 2, design: stratified, distance: l1_profile}
"""
QUOTAS = """\
quotas: {targets: {pool: 5, oracle: 5}}
time_limit: {seconds: 1200, warning_seconds: 900}
recruitment: {study_full: {code: FULL-1}, timed_out: {code: LATE-1}}
"""


def test_quotas_level_the_completers_despite_dropout_in_one_arm(tmp_path) -> None:
    protocol = parse_protocol(SMALL + QUOTAS)
    with Store(tmp_path / "q.duckdb") as store:
        summary = simulate(protocol, store, 30, dropout={"oracle": 0.5})
        done = {arm: row["completed"] for arm, row in summary["arms"].items()}
        assert done == {"pool": 5, "oracle": 5}  # level, none past its target
        assert summary["quota"]["oracle"] == {"target": 5, "counted": 5, "in_progress": 0,
                                              "shortfall": 0}
        assert summary["dropped_out"] >= 1  # oracle participants left mid-study ...
        statuses = summary["statuses"]
        assert statuses["timed_out"] + statuses.get("active", 0) == summary["dropped_out"]
        assert statuses["timed_out"] >= 1  # ... and timed out, freeing their places
        assert statuses["full"] == 30 - 10 - summary["dropped_out"]  # the rest: study full
        assert summary["arms"]["pool"]["consented"] == 5  # nobody left the pool arm
        full = store.query("SELECT arm, current_page FROM participants WHERE status = 'full'")
        assert {(r["arm"], r["current_page"]) for r in full} == {(None, "end")}
        # every assignment's decision is in the audit log, with the standing it saw
        assigned = [json.loads(r["detail_json"]) for r in store.query(
            "SELECT detail_json FROM events WHERE event = 'assigned' ORDER BY event_id")]
        assert len(assigned) == 10 + summary["dropped_out"]
        for d in assigned:
            best = max(v["shortfall"] for v in d["quota"].values())
            assert d["quota"][d["arm"]]["shortfall"] == best > 0


def test_without_a_time_limit_those_who_leave_stay_in_progress(tmp_path) -> None:
    protocol = parse_protocol(SMALL)
    with Store(tmp_path / "d.duckdb") as store:
        summary = simulate(protocol, store, 12, dropout={"pool": 1.0}, chunk=4)
        assert summary["quota"] is None
        pool = summary["arms"]["pool"]
        # everyone shown a plan left (whoever was shown none had no page left to leave at)
        shown = store.query("SELECT count(DISTINCT p.participant_id) AS n FROM plans p "
                            "JOIN participants pa USING (study_id, participant_id) "
                            "WHERE pa.arm = 'pool'")[0]["n"]
        assert pool["in_progress"] == summary["dropped_out"] >= shown > 0
        assert pool["completed"] == pool["consented"] - pool["in_progress"]
        assert summary["arms"]["oracle"]["completed"] == summary["arms"]["oracle"]["consented"]


@pytest.mark.parametrize("given, message", [
    ("nope=0.2", "dropout names arm 'nope'"),
    ("pool=1.5", "must be a probability from 0 to 1"),
    ("pool", "is not ARM=P"),
])
def test_bad_dropout_is_refused_before_anything_is_written(tmp_path, given, message) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(SMALL)
    db = tmp_path / "x.duckdb"
    out = CliRunner().invoke(app, ["simulate", "--protocol", str(path), "--db", str(db),
                                   "--participants", "2", "--dropout", given, "--json"])
    assert out.exit_code == 2, out.output
    assert message in " ".join(re.sub(r"[│╭╮╰╯─]", " ", out.output).split())
    assert not db.exists()
