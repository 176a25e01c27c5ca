"""What only the DuckDB store does: shared connections, thread cursors, its file checks
(the contract both backends keep: test_store_contract.py)."""

from __future__ import annotations

import re
import threading
from datetime import datetime

import duckdb
import pytest

from data.contract import insert_values
from data.migrations import SchemaVersionError
from data.store import Store, StoreError, WriteConflictError
from tests.data.study_rows import AT, insert_study, participant_row


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
        insert_study(tx)
    assert b.counts()["studies"] == reader.counts()["studies"] == 1
    with pytest.raises(StoreError, match="read-only"):
        with reader.transaction():
            pass
    a.close()
    assert b.counts()["studies"] == 1  # still open through b
    seen = []

    def insert(k: int) -> None:
        with b.transaction() as tx:
            insert_study(tx, f"t{k}")
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


def test_a_damaged_database_file_is_reported_with_its_path(tmp_path) -> None:
    """A DuckDB file whose header was damaged (one byte flipped: its checksum no longer
    matches) is not an I/O problem but a file DuckDB cannot read as a database; the error
    names the file and says why."""
    path = tmp_path / "a.duckdb"
    Store(path).close()
    data = bytearray(path.read_bytes())
    data[12] ^= 0xFF  # inside the main header, after the magic bytes "DUCK"
    path.write_bytes(bytes(data))
    for read_only in (False, True):
        with pytest.raises(StoreError, match=rf"^cannot open {re.escape(str(path))} as a "
                           r"DuckDB database: .*checksum"):
            Store(path, read_only=read_only)


def test_an_older_schema_is_refused_read_only_and_migrated_by_a_writer(tmp_path) -> None:
    """A read-only store cannot migrate: a database one migration behind is refused with
    the way out (open it read-write once), left as it is, and a read-write open migrates it."""
    from data.migrations import LATEST

    path = tmp_path / "a.duckdb"
    Store(path).close()
    con = duckdb.connect(str(path))
    con.execute("DELETE FROM schema_version WHERE version = ?", [LATEST])
    con.close()
    with pytest.raises(SchemaVersionError, match=rf"^the database has schema version {LATEST - 1}"
                       rf", this code expects {LATEST}; open it read-write once"):
        Store(path, read_only=True)
    Store(path).close()  # a writer applies the missing migration
    with Store(path, read_only=True) as store:
        assert store.query("SELECT max(version) AS v FROM schema_version") == [{"v": LATEST}]


def test_updates_match_on_keys_and_guard_every_row(tmp_path) -> None:
    with Store(tmp_path / "a.duckdb") as store:
        with store.transaction() as tx:
            insert_study(tx, "s")
            insert_study(tx, "t")
            assert tx.insert("participants", [participant_row("s", "p", 1), participant_row("s", "q", 5),
                                              participant_row("t", "p", 1)]) == 3
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
            insert_study(tx, "s")
            insert_study(tx, "t")
            tx.insert("participants", [participant_row("s", "p"), participant_row("t", "p"),
                                       participant_row("t", "q", 1)])
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
        types = dict(store.columns("studies"))
        with pytest.raises(StoreError, match="^table studies has no column\\(s\\) colour, "
                           "size$"):
            insert_values("studies", types, [{"study_id": "x", "size": 1, "colour": "b"}])
        cols, values = insert_values("studies", types, [{"protocol_id": "p"}, {"study_id": "x"}])
        assert cols == ["study_id", "protocol_id"]  # the table's order, the given ones
        assert values == [[None, "p"], ["x", None]]
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


def test_plans_and_ratings_by_study_and_studies_in_creation_order(tmp_path) -> None:
    later = datetime(2024, 1, 2)
    with Store(tmp_path / "a.duckdb") as store:
        with store.transaction() as tx:
            tx.insert("studies", [{"study_id": "a", "protocol_id": "p", "source": "protocol",
                                   "created_at": later}])
            insert_study(tx, "z")  # created first: listed first although "z" > "a"
            insert_study(tx, "m")  # the same time as "z": the id breaks the tie
            tx.insert("participants", [participant_row("z", "p"), participant_row("m", "p")])
            tx.insert("plans", [{"study_id": s, "participant_id": "p", "plan_id": f"{s}1",
                                 "position": 0, "created_at": AT} for s in ("z", "m")])
            tx.insert("ratings", [{"study_id": s, "participant_id": "p", "plan_id": f"{s}1",
                                   "acceptance": 5, "action": 4, "answered_at": AT}
                                  for s in ("z", "m")])
        assert list(store.studies()["study_id"]) == ["m", "z", "a"]
        assert list(store.plans("z")["plan_id"]) == ["z1"]
        assert list(store.plans()["plan_id"]) == ["m1", "z1"]
        assert list(store.ratings_long("m")["plan_id"]) == ["m1"]
        assert list(store.ratings_long()["study_id"]) == ["m", "z"]
        assert store.plans("a").empty
        with pytest.raises(StoreError, match=r"^unknown table 'nope'; expected one of studies, "
                           r"participants, "):
            store.table("nope")


def test_a_memory_store_is_migrated_private_and_closes(tmp_path) -> None:
    from data.duckdb_store import DuckDBStore
    from data.migrations import LATEST

    one, two = DuckDBStore.memory(), DuckDBStore.memory()
    assert one.query("SELECT max(version) AS v FROM schema_version") == [{"v": LATEST}]
    assert str(one.path) == ":memory:" and not one.read_only and one.backend == "duckdb"
    with one.transaction() as tx:
        insert_study(tx, "s")
    assert len(one.studies()) == 1 and two.studies().empty  # not shared
    assert one.snapshot() is one
    one.close()
    with pytest.raises(StoreError, match=r"^the store :memory: is closed$"):
        one.cursor()
    with pytest.raises(duckdb.ConnectionException):  # the private connection is closed too
        one._shared.con.execute("SELECT 1")
    assert two.query("SELECT 1 AS one") == [{"one": 1}]  # the other one stays open
    two.close()


def test_targets_are_resolved_and_described_without_passwords(tmp_path, monkeypatch) -> None:
    from data.contract import describe, resolve_target

    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_target("~/s.duckdb") == str(tmp_path.resolve() / "s.duckdb")
    monkeypatch.chdir(tmp_path)
    assert resolve_target("rel.duckdb") == str(tmp_path.resolve() / "rel.duckdb")
    url = "postgresql://u:secret@db.example:5432/study"
    assert resolve_target(url) == url
    assert describe(url) == "postgresql://u:***@db.example:5432/study"
    assert describe("postgresql://u@host/db") == "postgresql://u@host/db"
    assert describe("postgres://a:b:c@h/d") == "postgres://a:***@h/d"
    assert describe(tmp_path / "s.duckdb") == str(tmp_path / "s.duckdb")


def test_new_files_are_private_and_existing_files_keep_their_mode(tmp_path) -> None:
    """A new database file is created with mode 600 whatever the umask; an existing file is
    opened as it is (its mode is the owner's choice, not changed behind their back)."""
    import os
    import stat

    previous = os.umask(0o022)  # a permissive umask: the file would be 644 otherwise
    try:
        new = tmp_path / "new.duckdb"
        Store(new).close()
        assert stat.S_IMODE(new.stat().st_mode) == 0o600
        shared = tmp_path / "shared.duckdb"
        Store(shared).close()
        shared.chmod(0o640)
        with Store(shared) as store:
            assert store.counts()["studies"] == 0
        assert stat.S_IMODE(shared.stat().st_mode) == 0o640
    finally:
        os.umask(previous)


def test_missing_parent_folders_are_created_for_a_writer(tmp_path) -> None:
    path = tmp_path / "a" / "b" / "study.duckdb"
    with Store(path) as store:
        assert store.counts()["studies"] == 0
    assert path.is_file()


def test_no_connection_fetches_extensions_at_run_time(tmp_path) -> None:
    """Every connection (a new file, an existing one, read-only, in memory) runs with
    DuckDB's automatic extension install and load switched off."""
    from data.duckdb_store import DuckDBStore

    sql = ("SELECT current_setting('autoinstall_known_extensions') AS install, "
           "current_setting('autoload_known_extensions') AS load")
    off = [{"install": False, "load": False}]
    path = tmp_path / "a.duckdb"
    with Store(path) as store:  # created
        assert store.query(sql) == off
    with Store(path) as store:  # existing
        assert store.query(sql) == off
    with Store(path, read_only=True) as store:
        assert store.query(sql) == off
    memory = DuckDBStore.memory()
    assert memory.query(sql) == off
    memory.close()


def test_read_only_is_the_connection_and_blocks_a_writer_in_the_process(tmp_path) -> None:
    """A read-only store's connection is read-only (even SQL run through query() cannot
    write), and while it is open this process cannot open the file for writing."""
    from data.duckdb_store import DuckDBStore

    path = tmp_path / "a.duckdb"
    with DuckDBStore(path) as store:  # read-write by default
        assert store.read_only is False
        with store.transaction() as tx:
            insert_study(tx)
    reader = Store(path, read_only=True)
    with pytest.raises(duckdb.Error, match="read-only"):
        reader.query("CREATE TABLE scratch (a INTEGER)")
    with pytest.raises(StoreError, match=r" is already open read-only in this process; close "
                       r"it before opening it for writing$"):
        Store(path)
    reader.close()
    with Store(path) as writer:  # closed: a writer may open it now
        assert writer.counts()["studies"] == 1


def test_a_password_with_an_at_sign_is_still_hidden() -> None:
    from data.contract import describe

    assert describe("postgresql://u:p@ss@db.example/study") == (
        "postgresql://u:***@db.example/study")
