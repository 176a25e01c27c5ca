"""Persistence: the DuckDB store every driver writes through, and export / import.

Imports nothing of ours outside ``data``; the only package that imports a database driver.

    from data import Store
    with Store("pilot.duckdb") as store:
        ratings = store.table("ratings")      # a pandas DataFrame

Every table's columns (name, SQL declaration, meaning) are in one catalogue,
``data.columns`` (``CATALOGUE``).
"""

from __future__ import annotations

from data.column_spec import Column, Table
from data.columns import CATALOGUE
from data.export import export, load_export
from data.imports import ImportRowsError, import_ratings
from data.psych_ds import PackageError, write_package
from data.store import TABLES, VIEWS, Store, StoreError, WriteConflictError

__all__ = [
    "CATALOGUE", "TABLES", "VIEWS", "Column", "ImportRowsError", "PackageError", "Store",
    "StoreError", "Table", "WriteConflictError", "export", "import_ratings", "load_export",
    "write_package",
]
