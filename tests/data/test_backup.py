"""Backups and restores on both backends (data.backup): a backup holds every row with
checksums that a restore checks; a participant who withdrew after the backup stays
withdrawn after the restore (their withdrawal re-applied from the database being replaced,
or from the withdrawal journal when that database is lost); a damaged or foreign file is
refused and the target left as it was; sequences continue after a restore."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest

from data.backup import BackupError, backup, file_sha256, restore, verify
from data.store import Store, is_postgres
from data.withdrawal import journal_path, read_journal, withdraw
from protocols.definition.schema import parse_protocol
from study_app.simulator import simulate

PROTOCOL = """\
id: bk
title: Backup study
scenario: loan
seed: 4
decision_model: bayes
profile: {source: persona}
elicitation: {scheme: binary}
arms:
  - {id: oracle, method: oracle, options: {bins: 6, plausibility: false, grid_range: training}}
plans: {per_participant: 2, design: stratified, distance: l1_profile}
"""


def _pids(store: Store) -> list[str]:
    return [r["participant_id"] for r in store.query(
        "SELECT participant_id FROM participants ORDER BY seq")]


def _withdrawn(store: Store) -> set[str]:
    return {r["participant_id"] for r in store.query(
        "SELECT participant_id FROM participants WHERE status = 'withdrawn'")}


def test_backup_restore_keeps_a_later_withdrawal(store_target, tmp_path) -> None:
    with Store(store_target) as store:
        simulate(parse_protocol(PROTOCOL), store, 4)
        first, later, *rest = _pids(store)
        withdraw(store, "bk", first, "researcher", account="alice")
        saved = backup(store, tmp_path / "b.duckdb", source="test")
        counts = {t: v["rows"] for t, v in saved["tables"].items()}
        assert counts["participants"] == 4 and counts["withdrawals"] == 1
        assert counts["ratings"] == 6  # 3 participants with answers x 2 plans
        assert saved["sha256"] == file_sha256(tmp_path / "b.duckdb")
        withdraw(store, "bk", later, "researcher", account="alice")
        entries = store.query("SELECT * FROM withdrawals")
    done = restore(tmp_path / "b.duckdb", store_target, entries)
    assert done["sha256_checked"] and done["tables"] == saved["tables"]
    assert done["reapplied"] == [{"study_id": "bk", "participant_id": later,
                                  "rows_deleted": done["reapplied"][0]["rows_deleted"]}]
    assert done["reapplied"][0]["rows_deleted"] > 0
    with Store(store_target) as store:
        assert _withdrawn(store) == {first, later}
        assert store.query("SELECT count(*) AS n FROM ratings WHERE participant_id = ?",
                           [later]) == [{"n": 0}]
        (audit,) = store.query("SELECT * FROM withdrawals WHERE participant_id = ?", [later])
        assert (audit["account"], audit["requested_by"]) == ("alice", "researcher")
        # new rows continue the numbering after the restored ones
        restored_top = store.query("SELECT max(event_id) AS m FROM events")[0]["m"]
        with store.transaction() as tx:
            tx.insert("events", [{"study_id": "bk", "participant_id": rest[0],
                                  "event": "start", "occurred_at": datetime(2026, 1, 1)}])
        top = store.query("SELECT max(event_id) AS m, count(DISTINCT event_id) AS d, "
                          "count(*) AS n FROM events")[0]
        assert top["d"] == top["n"] and top["m"] > restored_top
    if not is_postgres(store_target):
        assert done["replaced"] and Path(done["replaced"]).exists()


def test_a_lost_database_is_restored_with_the_journal(tmp_path) -> None:
    db = tmp_path / "study.duckdb"
    with Store(db) as store:
        simulate(parse_protocol(PROTOCOL), store, 3)
        keep, gone, _ = _pids(store)
        backup(store, tmp_path / "b.duckdb")
        withdraw(store, "bk", gone, "participant")
        journal = journal_path(store)
    assert journal == Path(f"{db}.withdrawals.jsonl")
    assert [e["participant_id"] for e in read_journal(journal)] == [gone]
    db.unlink()  # the database is lost; its journal beside it is not
    done = restore(tmp_path / "b.duckdb", str(db), read_journal(journal))
    assert [r["participant_id"] for r in done["reapplied"]] == [gone]
    assert done["replaced"] is None
    with Store(db) as store:
        assert _withdrawn(store) == {gone} and keep in _pids(store)
    # the restore's own re-application is not journaled twice
    assert [e["participant_id"] for e in read_journal(journal)] == [gone]


def test_damaged_and_foreign_files_are_refused(tmp_path) -> None:
    db = tmp_path / "study.duckdb"
    with Store(db) as store:
        simulate(parse_protocol(PROTOCOL), store, 2)
        backup(store, tmp_path / "b.duckdb")
        with pytest.raises(BackupError, match="exists already"):
            backup(store, tmp_path / "b.duckdb")
    before = file_sha256(db)
    damaged = tmp_path / "d.duckdb"
    shutil.copyfile(tmp_path / "b.duckdb", damaged)
    shutil.copyfile(tmp_path / "b.duckdb.sha256", tmp_path / "d.duckdb.sha256")
    with damaged.open("r+b") as f:
        f.seek(damaged.stat().st_size // 2)
        f.write(b"\x00garbage\xff" * 8)
    with pytest.raises(BackupError, match="damaged: its SHA-256"):
        restore(damaged, str(db), [])
    (tmp_path / "d.duckdb.sha256").unlink()  # without the side file: the checksums or DuckDB
    with pytest.raises(BackupError, match="damaged|cannot be read"):
        restore(damaged, str(db), [])
    with pytest.raises(BackupError, match="not a recourse-study backup"):
        verify(db)
    (tmp_path / "text.duckdb").write_text("not a database")
    with pytest.raises(BackupError, match="cannot be read as a backup"):
        verify(tmp_path / "text.duckdb")
    assert file_sha256(db) == before
    assert sorted(p.name for p in tmp_path.iterdir() if "restoring" in p.name) == []


def test_backup_and_restore_commands(store_target, tmp_path) -> None:
    """The commands on both backends: --json reports the checksums; a restore re-applies a
    withdrawal made after the backup (from the replaced database's withdrawals)."""
    import json

    from typer.testing import CliRunner

    from study_app.cli import app

    with Store(store_target) as store:
        simulate(parse_protocol(PROTOCOL), store, 2)
        later = _pids(store)[1]
    run = CliRunner().invoke
    made = run(app, ["backup", "--db", store_target, "--out", str(tmp_path / "b.duckdb"),
                     "--json"])
    assert made.exit_code == 0, made.output
    saved = json.loads(made.stdout)
    assert saved["via"] == "cli" and saved["tables"]["participants"]["rows"] == 2
    with Store(store_target) as store:
        withdraw(store, "bk", later, "participant")
    back = run(app, ["restore", "--backup", str(tmp_path / "b.duckdb"), "--db", store_target,
                     "--json"])
    assert back.exit_code == 0, back.output
    doc = json.loads(back.stdout)
    assert doc["tables"] == saved["tables"] and doc["sha256"] == saved["sha256"]
    assert [r["participant_id"] for r in doc["reapplied"]] == [later]
    with Store(store_target) as store:
        assert _withdrawn(store) == {later}
        acts = [(r["action_id"], r["action"], r["via"]) for r in store.query(
            "SELECT action_id, action, via FROM researcher_actions ORDER BY action_id")]
    # the backup's own audit row (written after the snapshot) is kept, and the restore's
    # row continues the numbering after it
    assert [(a, v) for _, a, v in acts] == [("backup", "cli"), ("restore", "cli")]
    assert acts[0][0] < acts[1][0]
    bad = run(app, ["restore", "--backup", str(tmp_path / "none.duckdb"), "--db",
                    store_target, "--json"])
    assert bad.exit_code == 2 and "no backup file" in json.loads(bad.stdout)["error"]
