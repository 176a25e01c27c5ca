"""A simulate process killed with SIGKILL midway, then resumed: every participant complete or
resumable, none corrupt; the resumed run finishes with exact counts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from data.store import Store
from tests.cli_process import CLI

pytestmark = pytest.mark.slow  # minutes: 2 x 400 participants in subprocesses (make test-slow)

N = 400


def _command(db: Path) -> list[str]:
    return [CLI, "simulate", "--protocol",
            "tominaga-replication", "--participants", str(N), "--db", str(db),
            "--decision-model", "bayes", "--chunk", "10", "--json"]


def _check_consistent(store: Store) -> dict[str, int]:
    """Every participant is complete or exactly resumable (its rows match its state)."""
    parts = store.table("participants")
    by_status = parts["status"].value_counts().to_dict()
    for row in parts.itertuples():
        state = json.loads(row.state_json)
        pid = row.participant_id
        n_resp = store.query("SELECT count(*) AS n FROM responses WHERE participant_id = ?",
                             [pid])[0]["n"]
        assert n_resp == row.step == len(state["answered"]), pid
        n_plans = store.query("SELECT count(*) AS n FROM plans WHERE participant_id = ?",
                              [pid])[0]["n"]
        # plans are stored with the state that says they are ready (in one transaction); a
        # participant for whom the method found no valid plan is ready with none
        assert state["plans_ready"] or n_plans == 0, pid
        rated = store.query("SELECT count(*) AS n FROM ratings WHERE participant_id = ?",
                            [pid])[0]["n"]
        assert rated == sum(a.startswith("plan-") for a in state["answered"]), pid
        truth = store.query("SELECT count(*) AS n FROM sim_participants WHERE participant_id "
                            "= ?", [pid])[0]["n"]
        assert truth == 1, pid
        if row.status == "complete":  # every plan shown was rated; fewer than 5 where too
            assert rated == n_plans <= 5, pid  # few distinct plans fit (the plan shortfalls)
    return by_status


def test_sigkill_midway_then_resume(tmp_path) -> None:
    db = tmp_path / "k.duckdb"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen(_command(db), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    wal = Path(str(db) + ".wal")
    deadline = time.monotonic() + 120
    # wait until a good part of the work is committed (the WAL grows with every commit)
    while time.monotonic() < deadline and proc.poll() is None:
        if wal.exists() and wal.stat().st_size > 400_000:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "simulate finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    with Store(db) as store:
        status = _check_consistent(store)
        done = status.get("complete", 0)
        active = status.get("active", 0)
        assert 0 < sum(status.values()) and done < N
        assert set(status) <= {"complete", "active"}
        print("status after SIGKILL:", status)
    res = subprocess.run(_command(db), env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    summary = json.loads(res.stdout)
    assert summary["complete"] == summary["participants"] == N
    # the resumed run resumes exactly the active ones and starts exactly the missing ones
    assert summary["resumed"] == active > 0  # killed mid-chunk: someone was mid-session
    assert summary["started"] == N - done - active
    assert summary["started"] + summary["resumed"] + done == N
    # the same study run without interruption: the resumed one holds the same answers
    reference = tmp_path / "reference.duckdb"
    ref = subprocess.run(_command(reference), env=env, capture_output=True, text=True,
                         timeout=600)
    assert ref.returncode == 0, ref.stderr
    # participant ids carry the database's salt: match participants by their number
    ratings = ("SELECT p.seq, regexp_extract(r.plan_id, '-(p[0-9]+)$', 1) AS plan, "
               "r.acceptance, r.action, r.impossible FROM ratings r "
               "JOIN participants p USING (study_id, participant_id) ORDER BY 1, 2")
    with Store(reference, read_only=True) as store:
        expected_ratings = store.query(ratings)
    with Store(db) as store:
        assert _check_consistent(store) == {"complete": N}
        c = store.counts()
        # fewer than 5 x N: a few participants have fewer distinct plans that fit (shortfalls)
        assert c["plans"] == c["ratings"] == c["sim_ratings"] == json.loads(ref.stdout)["plans"]
        assert c["sim_participants"] == c["profiles"] == N
        assert store.query(ratings) == expected_ratings
