"""The store contract both backends implement (``data.store`` explains it and opens one):
the base class with the read API built on ``query`` / ``frame``, the transaction interface,
the errors and the table list."""


from __future__ import annotations

import numbers
from abc import ABCMeta
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pandas as pd

from data.columns import CATALOGUE

# The store's tables and views, in the catalogue's order (data.columns).
TABLES: tuple[str, ...] = tuple(name for name, t in CATALOGUE.items() if not t.view)
VIEWS: tuple[str, ...] = tuple(name for name, t in CATALOGUE.items() if t.view)
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class StoreError(RuntimeError):
    """The database cannot be opened or used as asked.

    >>> import tempfile
    >>> from pathlib import Path
    >>> from data import Store, StoreError
    >>> folder = Path(tempfile.mkdtemp())
    >>> try:
    ...     Store(folder / "missing.duckdb", read_only=True)
    ... except StoreError as e:
    ...     print(type(e).__name__)
    StoreError
    """


class WriteConflictError(StoreError):
    """A concurrent transaction wrote the same rows first; this one was rolled back.

    Raised by a store's transaction when another writer committed the same rows first (the
    transaction is rolled back; callers retry it):

    >>> from data import StoreError, WriteConflictError
    >>> issubclass(WriteConflictError, StoreError)
    True
    """


def is_postgres(target: str | Path) -> bool:
    """Whether ``target`` names a PostgreSQL database (a ``postgresql://`` URL)."""
    return isinstance(target, str) and target.startswith(POSTGRES_SCHEMES)


def resolve_target(target: str | Path) -> str:
    """A PostgreSQL URL as given, a DuckDB file as its absolute path."""
    if is_postgres(target):
        return str(target)
    return str(Path(target).expanduser().resolve())


def describe(target: str | Path) -> str:
    """``target`` fit for messages and logs (a URL's password removed)."""
    if not is_postgres(target):
        return str(target)
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(str(target))
    if parts.password is None:
        return str(target)
    netloc = parts.netloc.rsplit("@", 1)
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{netloc[-1]}"))


class Transaction:
    """The statements of one ``Store.transaction()`` block."""

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> None:
        raise NotImplementedError

    def query(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        raise NotImplementedError

    def insert(self, table: str, rows: Sequence[Mapping[str, Any]]) -> int:
        """Insert ``rows`` (dicts keyed by column name; missing columns are NULL)."""
        raise NotImplementedError

    def update(self, table: str, keys: Sequence[str], rows: Sequence[Mapping[str, Any]], *,
               guard: str | None = None, expected: Sequence[Any] | None = None) -> int:
        """Update rows matched on ``keys``; every row must carry the same columns.

        With ``guard``, a row is only updated while its column ``guard`` still equals the
        matching ``expected`` value (optimistic concurrency); if any row was not, the whole
        transaction fails with ``WriteConflictError``. Returns the number of rows updated.
        """
        raise NotImplementedError


def check_columns(table: str, known: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> None:
    """StoreError naming the columns ``rows`` give that ``table`` does not have."""
    unknown = sorted(set().union(*(r.keys() for r in rows)) - set(known))
    if unknown:
        raise StoreError(f"table {table} has no column(s) {', '.join(unknown)}")


def check_guard(guard: str | None, expected: Sequence[Any] | None, rows: Sequence[Any]) -> None:
    if guard is not None and (expected is None or len(expected) != len(rows)):
        raise ValueError("a guarded update needs one expected value per row")


def update_sets(table: str, keys: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The columns an update of ``rows`` sets (those of ``rows[0]`` that are not ``keys``, in
    its order); a StoreError when the rows do not all carry the same columns."""
    first = rows[0].keys()
    if any(r.keys() != first for r in rows):
        raise StoreError(f"every row of an update of {table} must carry the same columns")
    return [c for c in rows[0] if c not in keys]


def coerce(value: Any, dtype: str) -> Any:
    """``value`` as a parameter for a column of type ``dtype`` (the store's SQL types), the
    same for both backends: None stays NULL; integers (NumPy's too, and integral floats such
    as 3.0) for INTEGER / BIGINT, numbers for DOUBLE, bools for BOOLEAN, text for VARCHAR;
    anything else is a StoreError naming the value."""
    if value is None:
        return None
    if dtype in ("INTEGER", "BIGINT"):
        if isinstance(value, numbers.Integral):
            return int(value)
        if isinstance(value, numbers.Real) and float(value).is_integer():
            return int(value)
        raise StoreError(f"expected an integer, got {type(value).__name__} {value!r}")
    if dtype == "DOUBLE":
        if isinstance(value, numbers.Real):
            return float(value)
        raise StoreError(f"expected a number, got {type(value).__name__} {value!r}")
    if dtype == "BOOLEAN":
        return bool(value)
    if dtype == "VARCHAR" and not isinstance(value, str):
        raise StoreError(f"expected text, got {type(value).__name__} {value!r}")
    return value


def insert_values(table: str, types: Mapping[str, str], rows: Sequence[Mapping[str, Any]]
                  ) -> tuple[list[str], list[list[Any]]]:
    """(columns, one list of ``coerce``-d values per row) of an INSERT of ``rows`` into
    ``table`` (column name -> type ``types``): the columns any row gives, in the table's
    order; a column a row lacks is NULL."""
    check_columns(table, list(types), rows)
    cols = [c for c in types if any(c in r for r in rows)]
    return cols, [[coerce(r.get(c), types[c]) for c in cols] for r in rows]


def update_rows(table: str, types: Mapping[str, str], keys: Sequence[str],
                rows: Sequence[Mapping[str, Any]], guard: str | None,
                expected: Sequence[Any] | None) -> tuple[list[str], list[list[Any]]]:
    """(the columns an update of ``rows`` sets: those of ``rows[0]`` that are not ``keys``,
    one list of ``coerce``-d parameters per row: the values set, the keys and, with ``guard``,
    the row's ``expected`` value of that column)."""
    check_columns(table, list(types), rows)
    check_guard(guard, expected, rows)
    sets = update_sets(table, keys, rows)
    params = []
    for i, r in enumerate(rows):
        values = [coerce(r[c], types[c]) for c in sets] + [coerce(r[k], types[k]) for k in keys]
        if guard is not None:
            assert expected is not None
            values.append(coerce(expected[i], types[guard]))
        params.append(values)
    return sets, params


def update_sql(table: str, sets: Sequence[str], keys: Sequence[str], guard: str | None,
               mark: str) -> str:
    """An UPDATE of one row with ``mark`` as parameter placeholder, taking ``update_rows``'
    parameters: setting ``sets`` where the keys match (and, with ``guard``, where that column
    still holds the expected value)."""
    where = " AND ".join(f"{k} = {mark}" for k in keys)
    if guard is not None:
        where += f" AND {guard} = {mark}"
    return f"UPDATE {table} SET {', '.join(f'{c} = {mark}' for c in sets)} WHERE {where}"


def guard_failed(table: str, rows: int, done: int) -> WriteConflictError:
    return WriteConflictError(f"{rows - done} row(s) of {table} changed since they were read")


class StoreBase(metaclass=ABCMeta):
    """A study database (``data.store``'s docstring). Usable as a context manager."""

    path: Path | str
    read_only: bool

    # ---- lifecycle ----------------------------------------------------------------------
    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> StoreBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def backend(self) -> str:
        raise NotImplementedError

    @property
    def lock(self) -> AbstractContextManager[Any]:
        """A lock for short read-then-write critical sections (module docstring)."""
        raise NotImplementedError

    def transaction(self) -> AbstractContextManager[Transaction]:
        raise NotImplementedError

    def columns(self, table: str) -> list[tuple[str, str]]:
        """(name, DuckDB type name) of a table's columns, in order."""
        raise NotImplementedError

    def snapshot(self) -> StoreBase:
        """A DuckDB store with the same rows (module docstring); close it when done unless
        it is this store."""
        raise NotImplementedError

    # ---- reading ------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        """Rows of a read query as dicts."""
        raise NotImplementedError

    def frame(self, sql: str, params: Sequence[Any] | None = None) -> pd.DataFrame:
        raise NotImplementedError

    def table(self, name: str, study_id: str | None = None) -> pd.DataFrame:
        """A whole table or view (optionally one study's rows) as a DataFrame."""
        if name not in TABLES + VIEWS:
            raise StoreError(f"unknown table {name!r}; expected one of {', '.join(TABLES + VIEWS)}")
        if study_id is None or name == "schema_version":
            return self.frame(f"SELECT * FROM {name}")
        return self.frame(f"SELECT * FROM {name} WHERE study_id = ?", [study_id])

    def studies(self) -> pd.DataFrame:
        """One row per study (protocol and simulation settings as JSON text)."""
        return self.frame("SELECT * FROM studies ORDER BY created_at, study_id")

    def plans(self, study_id: str | None = None) -> pd.DataFrame:
        """Every plan shown (one row per plan) with its recourse metrics."""
        where, params = _study_filter(study_id)
        return self.frame(
            f"SELECT * FROM plans {where} ORDER BY study_id, participant_id, position", params
        )

    def ratings_long(self, study_id: str | None = None) -> pd.DataFrame:
        """One row per rated plan (columns in ``data.codebook``)."""
        where, params = _study_filter(study_id)
        return self.frame(
            f"SELECT * FROM ratings_long {where} ORDER BY study_id, participant_id, position",
            params,
        )

    def counts(self) -> dict[str, int]:
        """Row count of every table and view."""
        return {t: int(self.query(f"SELECT count(*) AS n FROM {t}")[0]["n"])
                for t in TABLES + VIEWS}


def _study_filter(study_id: str | None) -> tuple[str, list[Any]]:
    if study_id is None:
        return "", []
    return "WHERE study_id = ?", [study_id]
