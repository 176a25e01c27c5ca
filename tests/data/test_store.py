"""The DuckDB store: migrations, transactions, shared connections, read API."""

from __future__ import annotations

import threading
from datetime import datetime

import duckdb
import pytest

from data.migrations import LATEST, SchemaVersionError
from data.store import Store, StoreError, WriteConflictError

AT = datetime(2024, 1, 1)


def _study(tx, sid: str = "s") -> None:
    tx.insert("studies", [{"study_id": sid, "protocol_id": "p", "source": "protocol",
                           "created_at": AT}])


def test_new_database_is_migrated_and_versioned(tmp_path) -> None:
    path = tmp_path / "a.duckdb"
    with Store(path) as store:
        assert store.query("SELECT max(version) AS v FROM schema_version")[0]["v"] == LATEST
        assert set(store.counts()) >= {"studies", "ratings_long", "sim_ratings"}
    with Store(path) as store:  # reopening applies nothing twice
        assert store.counts()["schema_version"] == LATEST


def test_newer_schema_is_refused(tmp_path) -> None:
    path = tmp_path / "a.duckdb"
    Store(path).close()
    con = duckdb.connect(str(path))
    con.execute("INSERT INTO schema_version VALUES (999, 'future', now())")
    con.close()
    with pytest.raises(SchemaVersionError, match="newer than this code"):
        Store(path)


def test_transaction_is_all_or_nothing(tmp_path) -> None:
    with Store(tmp_path / "a.duckdb") as store:
        with pytest.raises(RuntimeError, match="boom"):
            with store.transaction() as tx:
                _study(tx)
                raise RuntimeError("boom")
        assert store.counts()["studies"] == 0
        with pytest.raises(WriteConflictError):
            with store.transaction() as tx:
                _study(tx, "x")
                _study(tx, "x")  # duplicate key inside one transaction
        assert store.counts()["studies"] == 0
        with pytest.raises(StoreError, match="no column"):
            with store.transaction() as tx:
                tx.insert("studies", [{"study_id": "y", "colour": "blue"}])


def test_guarded_update_detects_stale_state(tmp_path) -> None:
    with Store(tmp_path / "a.duckdb") as store:
        with store.transaction() as tx:
            _study(tx)
            tx.insert("participants", [{"study_id": "s", "participant_id": "p", "seq": 0,
                                        "source": "web", "status": "active", "step": 3,
                                        "state_json": "{}", "created_at": AT,
                                        "updated_at": AT}])
        row = {"study_id": "s", "participant_id": "p", "step": 4, "state_json": "{\"a\": 1}"}
        with pytest.raises(WriteConflictError, match="changed since"):
            with store.transaction() as tx:
                tx.update("participants", ["study_id", "participant_id"], [row],
                          guard="step", expected=[2])
        assert store.query("SELECT step FROM participants")[0]["step"] == 3
        with store.transaction() as tx:
            tx.update("participants", ["study_id", "participant_id"], [row],
                      guard="step", expected=[3])
        assert store.query("SELECT step, state_json FROM participants")[0] == {
            "step": 4, "state_json": "{\"a\": 1}"}


def test_one_shared_connection_per_file_and_thread_cursors(tmp_path) -> None:
    path = tmp_path / "a.duckdb"
    a, b = Store(path), Store(path)
    reader = Store(path, read_only=True)  # same process: reuses the writer's connection
    with a.transaction() as tx:
        _study(tx)
    assert b.counts()["studies"] == reader.counts()["studies"] == 1
    with pytest.raises(StoreError, match="read-only"):
        with reader.transaction():
            pass
    a.close()
    assert b.counts()["studies"] == 1  # still open through b
    seen = []

    def insert(k: int) -> None:
        with b.transaction() as tx:
            _study(tx, f"t{k}")
        seen.append(b.cursor())  # kept alive: a dead thread's cursor is closed and freed

    threads = [threading.Thread(target=insert, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(c) for c in seen}) == 8 and b.counts()["studies"] == 9
    later = threading.Thread(target=b.cursor)  # opening a cursor closes the dead threads'
    later.start()
    later.join()
    assert len(b._shared.cursors) == 2  # the main thread's and the last one's
    b.close()
    reader.close()
    with pytest.raises(StoreError, match="closed"):
        b.cursor()


def test_read_only_needs_an_existing_database(tmp_path) -> None:
    with pytest.raises(StoreError, match="no database"):
        Store(tmp_path / "missing.duckdb", read_only=True)
    bad = tmp_path / "junk.duckdb"
    bad.write_text("not a database")
    with pytest.raises(StoreError, match="cannot open"):
        Store(bad)
