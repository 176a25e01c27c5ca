"""The store contract: what every driver writes and reads through, whatever the database.

``Store(target)`` opens a study database: a DuckDB file (the embedded default,
``data.duckdb_store``) or a PostgreSQL database given as ``postgresql://...``
(``data.postgres_store``: several server processes on one study). Both keep one contract:

- ``transaction()``: a block whose statements (``execute``, ``query``, ``insert``,
  ``update`` with an optional optimistic guard) commit together or not at all; a
  concurrent write of the same rows (primary key, unique index, guarded row) surfaces as
  ``WriteConflictError`` after the rollback, so callers can retry;
- ``lock``: a context manager held around short read-then-write sections (sequence
  numbers): a thread lock for DuckDB (one writing process per file), a thread lock plus a
  PostgreSQL advisory lock for PostgreSQL (every process of the study);
- reads: ``query`` (rows as dicts), ``frame`` (a DataFrame), ``table``, ``studies``,
  ``plans``, ``ratings_long``, ``counts``, ``columns`` (name, DuckDB type name);
- ``snapshot()``: a DuckDB store holding the same rows, for reads written in DuckDB's SQL
  (dashboard queries, export): the store itself for DuckDB, an in-memory copy taken in one
  repeatable-read transaction for PostgreSQL;
- opening read-write applies pending migrations (``data.migrations``); read-only refuses a
  database that is not at this code's schema version.

SQL given to ``query``, ``frame`` and transactions is the portable subset both databases
run, with ``?`` placeholders. Columns are documented in ``data.codebook``.
"""

from __future__ import annotations

from pathlib import Path

from data.contract import (
    POSTGRES_SCHEMES,
    TABLES,
    VIEWS,
    StoreBase,
    StoreError,
    Transaction,
    WriteConflictError,
    describe,
    is_postgres,
    resolve_target,
)
from data.duckdb_store import DuckDBStore

__all__ = ["POSTGRES_SCHEMES", "TABLES", "VIEWS", "DuckDBStore", "Store", "StoreError",
           "Transaction", "WriteConflictError", "describe", "is_postgres", "resolve_target"]


class Store(StoreBase):
    r"""Opens a study database: ``Store(path_or_url, read_only=False)`` is a ``DuckDBStore``
    for a file, a ``PostgresStore`` for a ``postgresql://`` URL (both are ``Store``\ s).

    >>> import tempfile
    >>> from pathlib import Path
    >>> from data import Store
    >>> store = Store(Path(tempfile.mkdtemp()) / "study.duckdb")   # or a postgresql:// URL
    >>> store.backend, len(store.studies())
    ('duckdb', 0)
    >>> store.counts()["participants"]
    0
    """

    def __new__(cls, target: str | Path, *, read_only: bool = False) -> Store:  # type: ignore[misc]
        if is_postgres(target):
            from data.postgres_store import PostgresStore  # psycopg only when asked for

            Store.register(PostgresStore)
            return PostgresStore(str(target), read_only=read_only)  # type: ignore[return-value]
        return DuckDBStore(target, read_only=read_only)  # type: ignore[return-value]


Store.register(DuckDBStore)

