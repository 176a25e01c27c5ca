"""The DuckDB store (the embedded default): one shared connection per file and process.

DuckDB allows one read-write connection per file per process (and one writing process per
file). ``DuckDBStore(path)`` therefore shares one connection per resolved path among every
store object of the process (reference counted) and gives each thread its own cursor
(``connection.cursor()``), so many threads can read and write at once. DuckDB's optimistic
concurrency reports a conflicting concurrent write (the same primary key, the same row
updated) at the statement or at commit, which surfaces as ``WriteConflictError`` after the
transaction was rolled back. A read-only store in a process that already holds the file
read-write reuses that connection; a read-only store in another process fails while a writer
holds the file (DuckDB's file lock). A new database file is created private to its owner
(mode 600). ``DuckDBStore.memory()`` is a private in-memory
database (PostgreSQL snapshots). The contract is ``data.store``'s.

Writes: up to ``FEW_ROWS`` rows (every answer a participant submits) go in as SQL with
parameters, one INSERT ... VALUES or one UPDATE per row; more (a simulated batch, an import)
as a registered Arrow table, which DuckDB reads in one pass. Both take the same values
(``data.contract.coerce``). Registering an Arrow table costs more than writing one row
with parameters (docs/benchmarks.md, "Findings behind the code"), and a page's answer is a
handful of one-row writes.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa

from data.contract import (
    StoreBase,
    StoreError,
    Transaction,
    WriteConflictError,
    guard_failed,
    insert_values,
    update_rows,
    update_sql,
)
from data.migrations import check_readable, migrate

# Never let DuckDB fetch an extension at run time: everything we use is statically linked.
_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}

FEW_ROWS = 8
_ARROW_TYPES: dict[str, pa.DataType] = {
    "VARCHAR": pa.string(),
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "TIMESTAMP": pa.timestamp("us"),
}


class _Shared:
    """One DuckDB connection shared by the Store objects of a process for one file."""

    def __init__(self, con: duckdb.DuckDBPyConnection, read_only: bool) -> None:
        self.con = con
        self.read_only = read_only
        self.refs = 0
        self.local = threading.local()
        # (owning thread, cursor); a dead thread's cursor is closed when the next one opens
        # (a web server runs every request in a fresh thread: without this, one cursor of
        # ~10 kB would leak per page view).
        self.cursors: list[tuple[threading.Thread, duckdb.DuckDBPyConnection]] = []
        self.lock = threading.Lock()  # serializes short critical sections (sequence numbers)
        self.columns: dict[str, list[tuple[str, str]]] = {}


_REGISTRY: dict[str, _Shared] = {}
_REGISTRY_LOCK = threading.Lock()


def _connect(path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    """Open the file; a new database is created readable by its owner only (it holds
    participants' answers), whatever the process' umask."""
    if read_only or path.exists():
        return duckdb.connect(str(path), read_only=read_only, config=_CONFIG)
    previous = os.umask(0o077)
    try:
        con = duckdb.connect(str(path), config=_CONFIG)
    finally:
        os.umask(previous)
    os.chmod(path, 0o600)
    return con


def _open_shared(path: Path, read_only: bool) -> _Shared:
    key = str(path)
    with _REGISTRY_LOCK:
        shared = _REGISTRY.get(key)
        if shared is not None:
            if shared.read_only and not read_only:
                raise StoreError(
                    f"{path} is already open read-only in this process; close it before "
                    "opening it for writing"
                )
        else:
            if read_only and not path.exists():
                raise StoreError(f"no database at {path}")
            if not read_only:
                path.parent.mkdir(parents=True, exist_ok=True)
            try:
                con = _connect(path, read_only)
            except duckdb.IOException as e:
                raise StoreError(
                    f"cannot open {path}: {e} (another process may be writing to it)"
                ) from e
            except duckdb.Error as e:
                raise StoreError(f"cannot open {path} as a DuckDB database: {e}") from e
            try:
                (check_readable if read_only else migrate)(con)
            except Exception:
                con.close()
                raise
            shared = _Shared(con, read_only)
            _REGISTRY[key] = shared
        shared.refs += 1
        return shared


def _release_shared(path: Path) -> None:
    key = str(path)
    with _REGISTRY_LOCK:
        shared = _REGISTRY.get(key)
        if shared is None:
            return
        shared.refs -= 1
        if shared.refs <= 0:
            for _, cur in shared.cursors:
                try:
                    cur.close()
                except duckdb.Error:
                    pass
            shared.con.close()
            del _REGISTRY[key]


class DuckDBTransaction(Transaction):
    """The statements of one transaction on one thread's cursor."""

    def __init__(self, store: DuckDBStore, cursor: duckdb.DuckDBPyConnection) -> None:
        self._store = store
        self._cur = cursor

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> None:
        self._cur.execute(sql, params or [])

    def query(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        return _fetch_dicts(self._cur.execute(sql, params or []))

    def insert(self, table: str, rows: Sequence[Mapping[str, Any]]) -> int:
        """Insert ``rows`` (dicts keyed by column name; missing columns are NULL): a few rows
        as one INSERT ... VALUES with parameters, more as a registered Arrow table (module
        docstring); the values are ``coerce``-d alike either way."""
        if not rows:
            return 0
        types = dict(self._store.columns(table))
        cols, values = insert_values(table, types, rows)
        if len(rows) <= FEW_ROWS:
            row = "(" + ", ".join(["?"] * len(cols)) + ")"
            self._cur.execute(f"INSERT INTO {table} ({', '.join(cols)}) VALUES "
                              + ", ".join([row] * len(rows)), [v for r in values for v in r])
            return len(rows)
        data = _arrow_table(cols, types, values)
        self._cur.register("_rs_rows", data)
        try:
            names = ", ".join(cols)
            self._cur.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM _rs_rows")
        finally:
            self._cur.unregister("_rs_rows")
        return len(rows)

    def update(
        self,
        table: str,
        keys: Sequence[str],
        rows: Sequence[Mapping[str, Any]],
        *,
        guard: str | None = None,
        expected: Sequence[Any] | None = None,
    ) -> int:
        """Update rows matched on ``keys``; every row must carry the same columns.

        With ``guard``, a row is only updated while its column ``guard`` still equals the
        matching ``expected`` value (optimistic concurrency); if any row was not, the whole
        transaction fails with ``WriteConflictError``. Returns the number of rows updated.
        """
        if not rows:
            return 0
        types = dict(self._store.columns(table))
        sets, per_row = update_rows(table, types, keys, rows, guard, expected)
        done = 0
        if len(rows) <= FEW_ROWS:
            sql = update_sql(table, sets, keys, guard, "?")
            for params in per_row:
                done += self._cur.execute(sql, params).fetchone()[0]
        else:  # one UPDATE ... FROM a registered Arrow table of the same values
            cols = [*sets, *keys, *(["_rs_expected"] if guard is not None else [])]
            kinds = {**types, **({"_rs_expected": types[guard]} if guard is not None else {})}
            data = _arrow_table(cols, kinds, per_row)
            on = " AND ".join(f"{table}.{k} = u.{k}" for k in keys)
            if guard is not None:
                on += f" AND {table}.{guard} = u._rs_expected"
            self._cur.register("_rs_upd", data)
            try:
                done = self._cur.execute(
                    f"UPDATE {table} SET {', '.join(f'{c} = u.{c}' for c in sets)} "
                    f"FROM _rs_upd AS u WHERE {on}").fetchone()[0]
            finally:
                self._cur.unregister("_rs_upd")
        if guard is not None and done != len(rows):
            raise guard_failed(table, len(rows), done)
        return int(done)


def _arrow_table(cols: Sequence[str], types: Mapping[str, str], values: Sequence[Sequence[Any]]
                 ) -> pa.Table:
    """Rows of already ``coerce``-d ``values`` (one list per row, in ``cols`` order) as an Arrow
    table typed like the store's columns."""
    return pa.table({c: pa.array([r[j] for r in values], type=_ARROW_TYPES[types[c]])
                     for j, c in enumerate(cols)})


def _fetch_dicts(result: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    names = [d[0] for d in result.description]
    return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


class DuckDBStore(StoreBase):
    """A DuckDB study database (the module docstring; the contract of ``data.store``)."""

    def __init__(self, path: str | Path | None = None, *, read_only: bool = False) -> None:
        self.path = Path(path).expanduser().resolve()  # type: ignore[arg-type]
        self.read_only = read_only
        self._shared = _open_shared(self.path, read_only)
        self._private = False
        self._closed = False

    @classmethod
    def memory(cls) -> DuckDBStore:
        """A new, private, migrated in-memory database (closed with the store)."""
        store = object.__new__(cls)
        con = duckdb.connect(":memory:", config=_CONFIG)
        migrate(con)
        store.path = Path(":memory:")
        store.read_only = False
        store._shared = _Shared(con, False)
        store._shared.refs = 1
        store._private = True
        store._closed = False
        return store

    @property
    def backend(self) -> str:
        return "duckdb"

    def snapshot(self) -> DuckDBStore:
        return self

    # ---- lifecycle ----------------------------------------------------------------------
    def close(self) -> None:
        if not self._closed:
            self._closed = True
            if self._private:
                self._shared.con.close()
            else:
                _release_shared(self.path)

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """This thread's cursor on the shared connection."""
        if self._closed:
            raise StoreError(f"the store {self.path} is closed")
        shared = self._shared
        cur = getattr(shared.local, "cursor", None)
        if cur is None:
            with _REGISTRY_LOCK:
                cur = shared.con.cursor()
                alive = []
                for thread, old in shared.cursors:
                    if thread.is_alive():
                        alive.append((thread, old))
                    else:
                        try:
                            old.close()
                        except duckdb.Error:
                            pass
                shared.cursors = alive + [(threading.current_thread(), cur)]
            shared.local.cursor = cur
        return cur

    @property
    def lock(self) -> threading.Lock:
        """A process-wide lock for this file (for short read-then-write critical sections)."""
        return self._shared.lock

    # ---- writing ------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[DuckDBTransaction]:  # type: ignore[override]
        """One transaction on this thread's cursor: commit at the end, roll back on error."""
        if self.read_only:
            raise StoreError(f"the store {self.path} was opened read-only")
        cur = self.cursor()
        cur.execute("BEGIN TRANSACTION")
        try:
            yield DuckDBTransaction(self, cur)
        except BaseException as e:
            try:
                cur.execute("ROLLBACK")
            except duckdb.Error:
                pass  # a failed statement already ended the transaction
            if isinstance(e, duckdb.TransactionException | duckdb.ConstraintException):
                raise WriteConflictError(str(e)) from e
            raise
        try:
            cur.execute("COMMIT")
        except (duckdb.TransactionException, duckdb.ConstraintException) as e:
            try:
                cur.execute("ROLLBACK")
            except duckdb.Error:
                pass
            raise WriteConflictError(str(e)) from e

    def columns(self, table: str) -> list[tuple[str, str]]:
        """(name, DuckDB type) of a table's columns, in order."""
        cached = self._shared.columns.get(table)
        if cached is None:
            rows = self.cursor().execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = 'main' AND table_name = ? ORDER BY ordinal_position",
                [table],
            ).fetchall()
            if not rows:
                raise StoreError(f"unknown table {table!r}")
            cached = [(r[0], r[1]) for r in rows]
            self._shared.columns[table] = cached
        return cached

    # ---- reading ------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        return _fetch_dicts(self.cursor().execute(sql, params or []))

    def frame(self, sql: str, params: Sequence[Any] | None = None) -> pd.DataFrame:
        return self.cursor().execute(sql, params or []).df()
