"""Export a study database: every table (and the ratings_long view) plus a codebook.

``export(store, out_dir, fmt)`` writes ``<table>.parquet`` or ``<table>.csv`` for every table
and for ``ratings_long``, ``codebook.csv`` and ``codebook.json`` (table, column, type,
meaning; data.codebook) and ``manifest.json`` (format, schema version, row counts). Secret
columns (``data.codebook.NOT_EXPORTED``) are left out. DuckDB's COPY writes the files, so
types survive: Parquet keeps them natively; ``load_export`` reads CSV back with the
codebook's types, which is how the round trip is checked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import duckdb
import pandas as pd

from data.codebook import NOT_EXPORTED, codebook
from data.migrations import LATEST
from data.store import TABLES, VIEWS, Store

Format = Literal["parquet", "csv"]
EXPORTED: tuple[str, ...] = TABLES + VIEWS


def _select(store: Store, table: str) -> str:
    cols = [n for n, _ in store.columns(table) if n not in NOT_EXPORTED.get(table, ())]
    return f"SELECT {', '.join(cols)} FROM {table}"


def export(store: Store, out_dir: str | Path, fmt: Format = "parquet") -> dict[str, Any]:
    """Write every table + codebook to ``out_dir``; return the manifest."""
    if fmt not in ("parquet", "csv"):
        raise ValueError(f"unknown export format {fmt!r}; expected parquet or csv")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    snap = store.snapshot()  # DuckDB's COPY writes the files (a copy of a PostgreSQL store)
    try:
        return _export(snap, out, fmt)
    finally:
        if snap is not store:
            snap.close()


def _export(store: Any, out: Path, fmt: Format) -> dict[str, Any]:
    cur = store.cursor()
    counts: dict[str, int] = {}
    options = "FORMAT parquet" if fmt == "parquet" else "FORMAT csv, HEADER true"
    for table in EXPORTED:
        path = out / f"{table}.{fmt}"
        target = str(path).replace("'", "''")
        cur.execute(f"COPY ({_select(store, table)}) TO '{target}' ({options})")
        counts[table] = int(cur.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    book = codebook(store, EXPORTED)
    pd.DataFrame(book).to_csv(out / "codebook.csv", index=False)
    (out / "codebook.json").write_text(json.dumps(book, indent=1))
    manifest = {"format": fmt, "schema_version": LATEST, "tables": counts,
                "files": sorted(p.name for p in out.iterdir())}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def load_export(out_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Read an export back (CSV with the codebook's types) as DataFrames by table."""
    out = Path(out_dir)
    manifest = json.loads((out / "manifest.json").read_text())
    book = json.loads((out / "codebook.json").read_text())
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False,
                                             "autoload_known_extensions": False})
    frames: dict[str, pd.DataFrame] = {}
    try:
        for table in manifest["tables"]:
            path = str(out / f"{table}.{manifest['format']}").replace("'", "''")
            if manifest["format"] == "parquet":
                frames[table] = con.execute(f"SELECT * FROM read_parquet('{path}')").df()
                continue
            types = {r["column"]: r["type"] for r in book if r["table"] == table}
            spec = ", ".join(f"'{c}': '{t}'" for c, t in types.items())
            frames[table] = con.execute(
                f"SELECT * FROM read_csv('{path}', header = true, columns = {{{spec}}})"
            ).df()
    finally:
        con.close()
    return frames
