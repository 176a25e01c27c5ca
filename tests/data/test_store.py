"""What only the DuckDB store does: shared connections, thread cursors, its file checks
(the contract both backends keep: test_store_contract.py)."""

from __future__ import annotations

import threading
from datetime import datetime

import duckdb
import pytest

from data.migrations import SchemaVersionError
from data.store import Store, StoreError

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
