"""What only the DuckDB store does: shared connections, thread cursors, its file checks
(the contract both backends keep: test_store_contract.py)."""

from __future__ import annotations

import threading
from datetime import datetime

import duckdb
import pytest

from data.migrations import SchemaVersionError
from data.store import Store, StoreError, WriteConflictError

AT = datetime(2024, 1, 1)


def _study(tx, sid: str = "s") -> None:
    tx.insert("studies", [{"study_id": sid, "protocol_id": "p", "source": "protocol",
                           "created_at": AT}])


def test_newer_schema_is_refused(tmp_path) -> None:
    path = tmp_path / "a.duckdb"
    Store(path).close()
    con = duckdb.connect(str(path))
    con.execute("INSERT INTO schema_version VALUES (999, 'future', now())")
    con.close()
    with pytest.raises(SchemaVersionError, match="newer than this code"):
        Store(path)


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


def _participant(sid: str, pid: str, step: int = 0) -> dict:
    return {"study_id": sid, "participant_id": pid, "seq": step, "source": "web",
            "status": "active", "step": step, "state_json": "{}", "created_at": AT,
            "updated_at": AT}


def test_updates_match_on_keys_and_guard_every_row(tmp_path) -> None:
    with Store(tmp_path / "a.duckdb") as store:
        with store.transaction() as tx:
            _study(tx, "s")
            _study(tx, "t")
            assert tx.insert("participants", [_participant("s", "p", 1), _participant("s", "q", 5),
                                              _participant("t", "p", 1)]) == 3
            assert tx.insert("participants", []) == 0
        with store.transaction() as tx:
            assert tx.update("participants", ["study_id", "participant_id"], []) == 0
            # keys select one row each; other columns are untouched
            n = tx.update("participants", ["study_id", "participant_id"], [
                {"study_id": "s", "participant_id": "p", "status": "complete"},
                {"study_id": "s", "participant_id": "q", "status": "declined"}])
            assert n == 2
        rows = store.query("SELECT study_id, participant_id, status, step FROM participants "
                           "ORDER BY study_id, participant_id")
        assert [(r["study_id"], r["participant_id"], r["status"], r["step"]) for r in rows] == [
            ("s", "p", "complete", 1), ("s", "q", "declined", 5), ("t", "p", "active", 1)]
        # a guarded update of two rows where one is stale changes neither
        both = [{"study_id": "s", "participant_id": "p", "step": 2},
                {"study_id": "s", "participant_id": "q", "step": 6}]
        with pytest.raises(WriteConflictError, match=r"^1 row\(s\) of participants changed "
                           r"since they were read$"):
            with store.transaction() as tx:
                tx.update("participants", ["study_id", "participant_id"], both,
                          guard="step", expected=[1, 4])
        assert [r["step"] for r in store.query(
            "SELECT step FROM participants WHERE study_id = 's' ORDER BY participant_id")] == [1, 5]
        with pytest.raises(ValueError, match="^a guarded update needs one expected value per "
                           "row$"):
            with store.transaction() as tx:
                tx.update("participants", ["study_id", "participant_id"], both,
                          guard="step", expected=[1])
        with pytest.raises(ValueError, match="one expected value"):
            with store.transaction() as tx:
                tx.update("participants", ["study_id", "participant_id"], both, guard="step")
        with store.transaction() as tx:
            assert tx.update("participants", ["study_id", "participant_id"], both,
                             guard="step", expected=[1, 5]) == 2
            assert tx.query("SELECT count(*) AS n FROM participants WHERE step IN (2, 6)") == [
                {"n": 2}]
            tx.execute("UPDATE participants SET status = ? WHERE study_id = 't'", ["complete"])
        assert store.query("SELECT status FROM participants WHERE study_id = 't'") == [
            {"status": "complete"}]


def test_read_api_filters_by_study_and_names_unknown_tables(tmp_path) -> None:
    with Store(tmp_path / "a.duckdb") as store:
        with store.transaction() as tx:
            _study(tx, "s")
            _study(tx, "t")
            tx.insert("participants", [_participant("s", "p"), _participant("t", "p"),
                                       _participant("t", "q", 1)])
        assert len(store.table("participants")) == 3
        assert list(store.table("participants", "t")["participant_id"]) == ["p", "q"]
        assert len(store.table("schema_version", "t")) == store.counts()["schema_version"]
        assert list(store.studies()["study_id"]) == ["s", "t"]
        assert store.plans("s").empty and store.ratings_long("t").empty
        assert set(store.plans().columns) >= {"study_id", "participant_id", "position"}
        with pytest.raises(StoreError, match="^unknown table 'nope'; expected one of studies"):
            store.table("nope")
        with pytest.raises(StoreError, match="^unknown table 'nope'$"):
            store.columns("nope")
        assert ("study_id", "VARCHAR") in store.columns("studies")
        with pytest.raises(StoreError, match="^table studies has no column\\(s\\) colour, "
                           "size$"):
            store.arrow_rows("studies", [{"study_id": "x", "size": 1, "colour": "b"}])
        table = store.arrow_rows("studies", [{"study_id": "x"}, {"protocol_id": "p"}])
        assert table.column_names == ["study_id", "protocol_id"]  # table order, given ones
        assert table.to_pylist() == [{"study_id": "x", "protocol_id": None},
                                     {"study_id": None, "protocol_id": "p"}]
        only = store.arrow_rows("studies", [{"study_id": "x"}], only=["study_id", "source"])
        assert only.column_names == ["study_id", "source"]
        assert store.frame("SELECT 1 AS one").to_dict("records") == [{"one": 1}]
        assert store.query("SELECT ? AS v", [7]) == [{"v": 7}]


def test_closing_twice_and_reopening_after_the_last_close(tmp_path) -> None:
    path = tmp_path / "a.duckdb"
    a = Store(path)
    a.close()
    a.close()  # idempotent: does not release someone else's reference
    b = Store(path)
    c = Store(path)
    a.close()
    assert b.counts()["studies"] == 0  # b still works after a's repeated close
    b.close()
    assert c.counts()["studies"] == 0
    c.close()
    with Store(path, read_only=True) as r:  # every writer closed: a read-only open works
        assert r.counts()["studies"] == 0
