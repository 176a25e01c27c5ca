"""The PostgreSQL store: one study database for several server processes (``data.store``'s
contract).

- Connections: a small pool per store (autocommit connections; a transaction borrows one
  for its block, a read for its statement), shared by the threads of the process.
- SQL: the portable subset of ``data.store``; ``?`` placeholders become psycopg's ``%s``
  (a literal ``%`` is escaped), and the DDL of ``data.migrations`` gets PostgreSQL's type
  names (``DOUBLE`` -> ``DOUBLE PRECISION``). Tables live in the connection's current schema
  (``?options=-csearch_path%3Dname`` in the URL puts a study database in a schema of its own).
- Concurrency: READ COMMITTED; a guarded update re-checks its guard on the latest row
  version, so a second writer of the same step updates nothing and fails with
  ``WriteConflictError``, as do unique-key, serialization and deadlock failures (after the
  rollback). ``lock`` holds a thread lock and a session advisory lock: the sequence numbers
  it protects are taken by one process at a time. Migrations run under an advisory lock too,
  so workers starting together migrate once.
- Types: values are coerced to the column's type (NumPy scalars included) as DuckDB's Arrow
  path does; ``columns`` reports DuckDB's type names, so the codebook and exports read the
  same on both backends.
- ``snapshot()``: every table copied, in one REPEATABLE READ transaction, into an in-memory
  DuckDB store, where the dashboard's and the export's DuckDB SQL run unchanged.
"""

from __future__ import annotations

import hashlib
import queue
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import pandas as pd
import psycopg
import pyarrow as pa
from psycopg import errors as pg_errors

from data.contract import (
    TABLES,
    StoreBase,
    StoreError,
    Transaction,
    WriteConflictError,
    describe,
    guard_failed,
    insert_values,
    update_rows,
    update_sql,
)
from data.migrations import check_readable, migrate

POOL_SIZE = 8
_PG_TO_DUCKDB = {
    "character varying": "VARCHAR", "text": "VARCHAR", "integer": "INTEGER",
    "bigint": "BIGINT", "smallint": "INTEGER", "double precision": "DOUBLE",
    "real": "DOUBLE", "boolean": "BOOLEAN", "timestamp without time zone": "TIMESTAMP",
}
# result column type oids -> Arrow types (frames typed as DuckDB's .df() types them)
_OID_ARROW = {16: pa.bool_(), 20: pa.int64(), 21: pa.int32(), 23: pa.int32(),
              25: pa.string(), 1043: pa.string(), 700: pa.float64(), 701: pa.float64(),
              1700: pa.float64(), 1114: pa.timestamp("us")}
_CONFLICTS = (pg_errors.IntegrityError, pg_errors.SerializationFailure,
              pg_errors.DeadlockDetected, pg_errors.LockNotAvailable)
_DDL_TYPES = re.compile(r"\bDOUBLE\b(?!\s+PRECISION)")
_MIGRATION_LOCK = 0x72735F6D6967  # "rs_mig"
_DUCKDB_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


def to_pg_sql(sql: str) -> str:
    """DuckDB-style SQL with ``?`` placeholders as psycopg SQL."""
    return sql.replace("%", "%%").replace("?", "%s")


class _Translating:
    """A cursor that runs DuckDB-flavoured SQL (migrations) on PostgreSQL."""

    def __init__(self, cur: psycopg.Cursor) -> None:
        self._cur = cur

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> _Translating:
        self._cur.execute(_DDL_TYPES.sub("DOUBLE PRECISION", to_pg_sql(sql)), params)
        return self

    def fetchone(self) -> Any:
        return self._cur.fetchone()


class PostgresTransaction(Transaction):
    def __init__(self, store: PostgresStore, cur: psycopg.Cursor) -> None:
        self._store = store
        self._cur = cur

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> None:
        self._cur.execute(to_pg_sql(sql), params)

    def query(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        self._cur.execute(to_pg_sql(sql), params)
        return _dicts(self._cur)

    def insert(self, table: str, rows: Sequence[Mapping[str, Any]]) -> int:
        if not rows:
            return 0
        # this transaction's own connection: asking the pool for a second one while holding
        # one deadlocks once every pooled connection is held by a writer doing the same
        types = dict(self._store.columns(table, via=self.query))
        cols, values = insert_values(table, types, rows)
        marks = ", ".join(["%s"] * len(cols))
        self._cur.executemany(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})",
                              values)
        return len(rows)

    def update(self, table: str, keys: Sequence[str], rows: Sequence[Mapping[str, Any]], *,
               guard: str | None = None, expected: Sequence[Any] | None = None) -> int:
        if not rows:
            return 0
        # the transaction's own connection, as in insert (a pooled one can deadlock)
        types = dict(self._store.columns(table, via=self.query))
        sets, per_row = update_rows(table, types, keys, rows, guard, expected)
        sql = update_sql(table, sets, keys, guard, "%s")
        done = 0
        for params in per_row:
            self._cur.execute(sql, params)
            done += self._cur.rowcount
        if guard is not None and done != len(rows):
            raise guard_failed(table, len(rows), done)
        return done


def _dicts(cur: psycopg.Cursor) -> list[dict[str, Any]]:
    if cur.description is None:
        return []
    names = [d.name for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


class _StoreLock:
    """A thread lock plus a PostgreSQL session advisory lock (every process)."""

    def __init__(self, store: PostgresStore, key: int) -> None:
        self._store, self._key = store, key
        self._thread_lock = threading.Lock()

    def __enter__(self) -> _StoreLock:
        self._thread_lock.acquire()
        try:
            self._con = self._store._take()
            self._con.execute("SELECT pg_advisory_lock(%s)", [self._key])
        except BaseException:
            self._thread_lock.release()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._con.execute("SELECT pg_advisory_unlock(%s)", [self._key])
            self._store._give(self._con)
        finally:
            self._thread_lock.release()


class PostgresStore(StoreBase):
    """A PostgreSQL study database (module docstring)."""

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        self.url = url
        self.path = describe(url)
        self.read_only = read_only
        self._idle: queue.LifoQueue[psycopg.Connection] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(POOL_SIZE)
        self._all: list[psycopg.Connection] = []
        self._pool_lock = threading.Lock()
        self._columns: dict[str, list[tuple[str, str]]] = {}
        self._closed = False
        con = self._take()
        try:
            self.schema = con.execute("SELECT current_schema()").fetchone()[0]
            if self.schema is None:
                raise StoreError(f"{self.path}: no schema to use (check search_path)")
            key = int.from_bytes(hashlib.sha256(self.schema.encode()).digest()[:7], "big")
            self._lock = _StoreLock(self, key)
            if read_only:
                check_readable(_Translating(con.cursor()), self.schema)
            else:
                con.execute("SELECT pg_advisory_lock(%s)", [_MIGRATION_LOCK])
                try:
                    migrate(_Translating(con.cursor()), self.schema)
                finally:
                    con.execute("SELECT pg_advisory_unlock(%s)", [_MIGRATION_LOCK])
        except BaseException:
            self._give(con)
            self.close()
            raise
        self._give(con)

    # ---- connections --------------------------------------------------------------------
    def _take(self) -> psycopg.Connection:
        if self._closed:
            raise StoreError(f"the store {self.path} is closed")
        self._slots.acquire()
        try:
            while True:
                try:
                    con = self._idle.get_nowait()
                except queue.Empty:
                    return self._connect()
                if not con.closed and con.info.transaction_status == 0:  # idle
                    return con
                con.close()
        except BaseException:
            self._slots.release()
            raise

    def _give(self, con: psycopg.Connection) -> None:
        if self._closed or con.closed or con.info.transaction_status != 0:
            con.close()
        else:
            self._idle.put(con)
        self._slots.release()

    def _connect(self) -> psycopg.Connection:
        try:
            con = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except psycopg.Error as e:
            raise StoreError(f"cannot connect to {self.path}: {e}") from e
        with self._pool_lock:
            self._all.append(con)
        return con

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection]:
        con = self._take()
        try:
            yield con
        except psycopg.OperationalError as e:
            con.close()  # a broken connection never goes back to the pool
            raise StoreError(f"{self.path}: {e}") from e
        finally:
            self._give(con)

    # ---- contract -----------------------------------------------------------------------
    def close(self) -> None:
        if not self._closed:
            self._closed = True
            with self._pool_lock:
                for con in self._all:
                    con.close()
                self._all.clear()

    @property
    def backend(self) -> str:
        return "postgresql"

    @property
    def lock(self) -> _StoreLock:
        return self._lock

    @contextmanager
    def transaction(self) -> Iterator[PostgresTransaction]:  # type: ignore[override]
        if self.read_only:
            raise StoreError(f"the store {self.path} was opened read-only")
        with self._connection() as con:
            try:
                with con.transaction(), con.cursor() as cur:
                    yield PostgresTransaction(self, cur)
            except _CONFLICTS as e:
                raise WriteConflictError(str(e).strip()) from e

    def columns(self, table: str, via: Callable[..., list[dict[str, Any]]] | None = None
                ) -> list[tuple[str, str]]:
        """(name, DuckDB type) of ``table``'s columns, read once; ``via`` runs the lookup
        (a transaction's own query) instead of a pooled connection."""
        cached = self._columns.get(table)
        if cached is None:
            rows = (via or self.query)(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position",
                [self.schema, table])
            if not rows:
                raise StoreError(f"unknown table {table!r}")
            cached = [(r["column_name"], _PG_TO_DUCKDB.get(r["data_type"], "VARCHAR"))
                      for r in rows]
            self._columns[table] = cached
        return cached

    def query(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        with self._connection() as con, con.cursor() as cur:
            cur.execute(to_pg_sql(sql), params)
            return _dicts(cur)

    def frame(self, sql: str, params: Sequence[Any] | None = None) -> pd.DataFrame:
        with self._connection() as con, con.cursor() as cur:
            cur.execute(to_pg_sql(sql), params)
            return _frame(cur)

    def snapshot(self) -> StoreBase:
        from data.duckdb_store import DuckDBStore

        copy = DuckDBStore.memory()
        try:
            with self._connection() as con:
                con.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                try:
                    with copy.transaction() as tx:
                        tx.execute("DELETE FROM schema_version")  # the original's, below
                        for table in TABLES:
                            rows = _dicts(con.execute(f"SELECT * FROM {table}"))
                            tx.insert(table, rows)
                finally:
                    con.execute("COMMIT")
        except BaseException:
            copy.close()
            raise
        return copy


def _frame(cur: psycopg.Cursor) -> pd.DataFrame:
    if cur.description is None:
        return pd.DataFrame()
    rows = cur.fetchall()
    arrays = {}
    for i, d in enumerate(cur.description):
        values = [r[i] for r in rows]
        dtype = _OID_ARROW.get(d.type_code)
        if dtype is not None and dtype == pa.float64():
            values = [None if v is None else float(v) for v in values]
        arrays[d.name] = pa.array(values, type=dtype) if dtype is not None else pa.array(values)
    if not arrays:
        return pd.DataFrame()
    # through DuckDB's own Arrow -> pandas conversion: frames typed as DuckDB's .df() types them
    with duckdb.connect(config=_DUCKDB_CONFIG) as con:
        return con.from_arrow(pa.table(arrays)).df()

