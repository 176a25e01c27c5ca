"""Export a study database: every table (and the ratings_long view) plus a codebook.

``export(store, out_dir, fmt)`` writes ``<table>.parquet`` or ``<table>.csv`` for every
exported table, for ``ratings_long`` and for ``quality_flags`` (data.quality, computed per
study at export time), ``codebook.csv`` and ``codebook.json`` (table,
column, type, meaning, levels: what the codes of a coded column mean; data.codebook) and ``manifest.json`` (format, schema version, row
counts, what was withheld). DuckDB's COPY writes the files, so types survive: Parquet keeps
them natively; ``load_export`` reads CSV back with the codebook's types, which is how the
round trip is checked.

What leaves the database (data.codebook):

- never: secrets (the external-id salt, token hashes), the private tables (resume tokens,
  the dashboard's sign-in log, the withdrawals audit) and withdrawn participants (their
  answers are deleted: data.withdrawal; their remaining participant row is left out);
- only with ``free_text=True``: text participants typed (the reasons for their ratings, in
  ``ratings`` and inside ``responses.answer_json``), which may name or identify them;
- only with ``linkage=True``: what links a row to a person outside the study (hashes of the
  recruitment id and session, completion codes, the hashed recruitment-link parameters of
  ``recruitment`` / ``id_refused`` events).

With ``coding=True`` (free text only) also ``coding_sheet.csv``: one row per free-text
reason for the qualitative analysis (``coding_sheet``).

CSV only: a text cell that a spreadsheet would run as a formula (it starts with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return) is written with a leading apostrophe, which makes
the spreadsheet show it as text (OWASP's "CSV injection" advice). To keep the mapping
reversible, a cell that already starts with apostrophes followed by one of those characters
gets one more; ``load_export`` removes exactly one again, so the round trip is exact. The
stored data and Parquet files keep the text as typed.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Literal, get_args

import duckdb
import pandas as pd

from data.codebook import (
    FREE_TEXT_ANSWER_KEYS,
    LINKAGE_EVENTS,
    MEANINGS,
    PRIVATE_TABLES,
    codebook,
    withheld,
)
from data.migrations import LATEST
from data.quality import participant_flags
from data.store import TABLES, VIEWS, Store

Format = Literal["parquet", "csv"]
FORMATS: tuple[str, ...] = get_args(Format)
EXPORTED: tuple[str, ...] = tuple(t for t in TABLES if t not in PRIVATE_TABLES) + VIEWS
# A spreadsheet formula trigger after any run of apostrophes (RE2, as in a SQL literal).
_FORMULA = "^''*[=+\\-@\\t\\r]"
_PREFIXED = "^''+[=+\\-@\\t\\r]"
CSV_FORMULAS = "text cells starting with = + - @ tab or CR carry a leading ' (data.export)"
TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
# Withdrawn participants never leave the database (their answers are deleted: data.withdrawal).
_KEEP = {"participants": " WHERE status <> 'withdrawn'"}
FLAGS_TABLE = "quality_flags"


def _column_sql(table: str, name: str, dtype: str, fmt: Format, free_text: bool,
                linkage: bool) -> str:
    expr = name
    if table == "responses" and name == "answer_json" and not free_text:
        patch = json.dumps({k: None for k in FREE_TEXT_ANSWER_KEYS})
        tests = " OR ".join(f"json_exists(answer_json, '$.{k}')" for k in FREE_TEXT_ANSWER_KEYS)
        expr = (f"CASE WHEN {tests} THEN CAST(json_merge_patch(answer_json, '{patch}') AS "
                "VARCHAR) ELSE answer_json END")
    if table == "events" and name == "detail_json" and not linkage:
        kinds = ", ".join(f"'{k}'" for k in LINKAGE_EVENTS)
        expr = f"CASE WHEN event IN ({kinds}) THEN NULL ELSE detail_json END"
    if fmt == "csv" and dtype == "VARCHAR":
        expr = _csv_safe(expr)
    return f"{expr} AS {name}"


def _csv_safe(expr: str) -> str:
    """SQL of a text value as a CSV cell (the module docstring's formula prefix)."""
    return (f"CASE WHEN regexp_matches({expr}, '{_FORMULA}') THEN '''' || ({expr}) "
            f"ELSE {expr} END")


def _select(store: Store, table: str, fmt: Format, free_text: bool, linkage: bool,
            left_out: dict[str, tuple[str, ...]]) -> str:
    cols = [_column_sql(table, n, t, fmt, free_text, linkage)
            for n, t in store.columns(table) if n not in left_out.get(table, ())]
    return f"SELECT {', '.join(cols)} FROM {table}{_KEEP.get(table, '')}"


def export(
    store: Store,
    out_dir: str | Path,
    fmt: Format = "parquet",
    *,
    free_text: bool = False,
    linkage: bool = False,
    coding: bool = False,
) -> dict[str, Any]:
    """Write every exported table + codebook to ``out_dir``; return the manifest (module
    docstring: what is withheld unless ``free_text`` / ``linkage``). ``coding`` also writes
    ``coding_sheet.csv`` (``coding_sheet``; it needs ``free_text``).

    >>> import tempfile
    >>> from pathlib import Path
    >>> from data import Store, export, load_export
    >>> from protocols import Study, load_protocol
    >>> folder = Path(tempfile.mkdtemp())
    >>> store = Store(folder / "study.duckdb")
    >>> study = Study(load_protocol("tominaga-replication"), store)
    >>> session = study.start(external_id="p1", session="s1")   # one participant
    >>> manifest = export(store, folder / "out", "csv")
    >>> "participants" in manifest["tables"], (folder / "out" / "codebook.json").exists()
    (True, True)
    >>> len(load_export(folder / "out")["participants"])
    1
    """
    if coding and not free_text:
        raise ValueError("the coding sheet holds the participants' free text: ask for "
                         "free text too")
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; expected {' or '.join(FORMATS)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    snap = store.snapshot()  # DuckDB's COPY writes the files (a copy of a PostgreSQL store)
    try:
        return _export(snap, out, fmt, free_text, linkage, coding)
    finally:
        if snap is not store:
            snap.close()


def _export(store: Any, out: Path, fmt: Format, free_text: bool,
            linkage: bool, coding: bool = False) -> dict[str, Any]:
    cur = store.cursor()
    left_out = withheld(free_text, linkage)
    counts: dict[str, int] = {}
    options = "FORMAT parquet" if fmt == "parquet" else "FORMAT csv, HEADER true"
    for table in EXPORTED:
        path = out / f"{table}.{fmt}"
        target = str(path).replace("'", "''")
        select = _select(store, table, fmt, free_text, linkage, left_out)
        cur.execute(f"COPY ({select}) TO '{target}' ({options})")
        counts[table] = int(cur.execute(f"SELECT count(*) FROM ({select})").fetchone()[0])
    book = codebook(store, EXPORTED, left_out)
    counts[FLAGS_TABLE], flag_columns = _export_flags(store, out, fmt, options)
    book += [{"table": FLAGS_TABLE, "column": c, "type": t,
              "meaning": MEANINGS[FLAGS_TABLE][c], "levels": ""} for c, t in flag_columns]
    pd.DataFrame(book).to_csv(out / "codebook.csv", index=False)
    (out / "codebook.json").write_text(json.dumps(book, indent=1))
    manifest: dict[str, Any] = {
        "format": fmt, "schema_version": LATEST, "tables": counts,
        "free_text": free_text, "linkage": linkage,
        "withheld": {t: list(c) for t, c in left_out.items() if t in EXPORTED},
    }
    if fmt == "csv":
        manifest["csv_formulas"] = CSV_FORMULAS
    if coding:
        manifest["coding_sheet"] = {"file": "coding_sheet.csv",
                                    "rows": coding_sheet(store, out / "coding_sheet.csv"),
                                    "code_columns": list(CODE_COLUMNS)}
    manifest["files"] = sorted([p.name for p in out.iterdir()] + ["manifest.json"])
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def _export_flags(store: Any, out: Path, fmt: Format, options: str
                  ) -> tuple[int, list[tuple[str, str]]]:
    """Write the data-quality flags of every study (data.quality) as ``quality_flags``;
    (rows, [(column, type)])."""
    studies = [r["study_id"] for r in store.query("SELECT study_id FROM studies ORDER BY 1")]
    frames = [participant_flags(store, s) for s in studies]
    flags = (pd.concat(frames, ignore_index=True) if frames
             else participant_flags(store, "").iloc[0:0])
    cur = store.cursor()
    cur.register("_rs_flags", flags)
    try:
        target = str(out / f"{FLAGS_TABLE}.{fmt}").replace("'", "''")
        cur.execute(f"COPY (SELECT * FROM _rs_flags) TO '{target}' ({options})")
        types = [(r[0], r[1]) for r in cur.execute("DESCRIBE SELECT * FROM _rs_flags"
                                                   ).fetchall()]
    finally:
        cur.unregister("_rs_flags")
    return len(flags), types


# The coding sheet (``coding_sheet``): one row per free-text reason, with what a coder needs
# beside it; the code columns are left empty for the coders.
CODE_COLUMNS: tuple[str, ...] = ("code_1", "code_2", "code_3", "coder", "coder_note")
_WHY = "CASE q.question WHEN 'acceptance' THEN r.acceptance_why ELSE r.action_why END"
_CODING_SQL = """
SELECT r.study_id, r.participant_id, r.plan_id, p.arm, p.method, p.position,
       q.question, {reason} AS reason,
       CASE q.question WHEN 'acceptance' THEN r.acceptance ELSE r.action END AS rating,
       r.acceptance, r.action, p.l0_actions, p.l1_actions, p.l0_profile, p.l1_profile,
       r.impossible, {codes}
FROM ratings r
JOIN plans p ON p.study_id = r.study_id AND p.participant_id = r.participant_id
 AND p.plan_id = r.plan_id
CROSS JOIN (VALUES ('acceptance'), ('action')) AS q(question)
WHERE trim(coalesce({why}, '')) <> ''
ORDER BY r.study_id, r.participant_id, p.position, q.question
"""


def coding_sheet(store: Store, path: str | Path) -> int:
    """Write the coding sheet for the qualitative analysis of the free-text reasons (as in
    Tominaga et al., section 4.2) to ``path`` (CSV): one row per non-empty reason with
    its question (acceptance or action), the rating it explains, both ratings, the plan's
    arm, method, position and L0 / L1 distances, whether an item was marked impossible,
    and the empty code columns ``CODE_COLUMNS``. Text cells carry the CSV formula prefix
    of the module docstring. Returns the number of rows. It holds what participants typed,
    so it is written only with the export's free text."""
    sql = _CODING_SQL.format(reason=_csv_safe(f"({_WHY})"), why=_WHY,
                             codes=", ".join(f"CAST(NULL AS VARCHAR) AS {c}"
                                             for c in CODE_COLUMNS))
    target = str(path).replace("'", "''")
    snap = store.snapshot()
    try:
        cur = snap.cursor()
        cur.execute(f"COPY ({sql}) TO '{target}' (FORMAT csv, HEADER true)")
        return int(cur.execute(f"SELECT count(*) FROM ({sql})").fetchone()[0])
    finally:
        if snap is not store:
            snap.close()


def formula_cells(out_dir: str | Path) -> list[tuple[str, str, str]]:
    """(table, column, value) of every text cell of a CSV export that a spreadsheet would
    run as a formula (it starts with = + - @ tab or CR). Empty for every export ``export``
    writes; a check before sharing files that were edited elsewhere."""
    out = Path(out_dir)
    book = json.loads((out / "codebook.json").read_text())
    text = {(r["table"], r["column"]) for r in book if r["type"] == "VARCHAR"}
    found = []
    for path in sorted(out.glob("*.csv")):
        with path.open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                found += [(path.stem, col, value) for col, value in row.items()
                          if (path.stem, col) in text and value and value[0] in TRIGGERS]
    return found


def load_export(out_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Read an export back (CSV with the codebook's types, formula prefixes removed) as
    DataFrames by table.

    >>> import tempfile
    >>> from pathlib import Path
    >>> from data import Store, export, load_export
    >>> folder = Path(tempfile.mkdtemp())
    >>> with Store(folder / "empty.duckdb") as store:       # a study with nobody yet
    ...     _ = export(store, folder / "out", "csv")
    >>> tables = load_export(folder / "out")
    >>> len(tables["participants"]), list(tables["participants"].columns)[:2]
    (0, ['study_id', 'participant_id'])
    """
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
            prefixed = "csv_formulas" in manifest
            cols = ", ".join(
                f"CASE WHEN regexp_matches({c}, '{_PREFIXED}') THEN substr({c}, 2) ELSE {c} "
                f"END AS {c}" if prefixed and t == "VARCHAR" else c for c, t in types.items())
            frames[table] = con.execute(
                f"SELECT {cols} FROM read_csv('{path}', header = true, columns = {{{spec}}})"
            ).df()
    finally:
        con.close()
    return frames
