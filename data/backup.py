"""Backups of a study database and their restore, checked by row counts and checksums.

A backup is one DuckDB file, whatever the store: ``backup(store, path)`` copies every table
in one read transaction (DuckDB's ``COPY FROM DATABASE`` of the served file, or of the
consistent copy of a PostgreSQL store, ``Store.snapshot``), so it is a snapshot of one
moment even while participants answer. It holds a ``backup_manifest`` table (schema version,
when, from where, and per table its rows and checksum) and gets a side file
``<path>.sha256`` (the file's SHA-256, in ``sha256sum`` format). The file is written under a
temporary name and renamed when complete: a backup that failed leaves nothing.

The checksum of a table is order-independent:

    checksum(T) = md5( concat over rows r of T, sorted by md5(text(r)), of md5(text(r)) )

(text(r): DuckDB's text form of the whole row). ``verify(path)`` recomputes the file's
SHA-256 (against the side file, when present) and every table's rows and checksum (against
the manifest); a damaged or foreign file is a ``BackupError`` naming what differs.

``restore(path, target, entries)`` verifies the backup, builds the restored database in a
temporary DuckDB file (migrated to this code's schema), withdraws again everyone in
``entries`` (the withdrawal journal and the withdrawals of the database being replaced:
data.withdrawal.reapply), keeps the researchers' audit rows the backup lacks, and only
then replaces the target: a DuckDB file by renaming (the
old file is kept beside it as ``<target>.replaced-<time>``), a PostgreSQL store in one
transaction. Anything that fails before leaves the target as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from data.contract import TABLES, StoreError, describe, is_postgres
from data.migrations import LATEST
from data.withdrawal import JOURNAL_SUFFIX, reapply

MANIFEST_TABLE = "backup_manifest"
# (sequence, table, column): numbers a restored store must continue after
SEQUENCES: tuple[tuple[str, str, str], ...] = (
    ("event_seq", "events", "event_id"), ("login_seq", "dashboard_logins", "login_id"),
    ("withdrawal_seq", "withdrawals", "withdrawal_id"),
    ("action_seq", "researcher_actions", "action_id"))
_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


class BackupError(StoreError):
    """A backup that cannot be written, read or restored as asked (nothing was changed)."""


def _quote(path: Path | str) -> str:
    return str(path).replace("'", "''")


def _checksums(cur: duckdb.DuckDBPyConnection, schema: str = "main"
               ) -> dict[str, dict[str, Any]]:
    out = {}
    for table in TABLES:
        if table == "schema_version":
            continue
        rows, digest = cur.execute(
            f"SELECT count(*), md5(coalesce(string_agg(md5(t::VARCHAR), '' ORDER BY "
            f"md5(t::VARCHAR)), '')) FROM {schema}.{table} t").fetchone()
        out[table] = {"rows": int(rows), "checksum": digest}
    return out


def file_sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _advance_sequences(cur: duckdb.DuckDBPyConnection) -> None:
    """Make every sequence continue after the highest number its table holds (a copy of a
    PostgreSQL store starts its sequences at 1)."""
    for seq, table, column in SEQUENCES:
        top = cur.execute(f"SELECT coalesce(max({column}), 0) FROM {table}").fetchone()[0]
        last = cur.execute("SELECT coalesce(last_value, start_value - 1) FROM "
                           "duckdb_sequences() WHERE sequence_name = ?", [seq]).fetchone()[0]
        if top > last:
            cur.execute(f"SELECT max(nextval('{seq}')) FROM range({int(top - last)})")


def backup(store: Any, path: str | Path, source: str | None = None) -> dict[str, Any]:
    """Write a backup of ``store`` to ``path`` (module docstring); its manifest with
    ``file``, ``sha256`` and ``bytes``. BackupError when ``path`` exists."""
    out = Path(path).expanduser().resolve()
    if out.exists():
        raise BackupError(f"{out} exists already; a backup never overwrites a file")
    if not out.parent.is_dir():
        raise BackupError(f"no folder {out.parent} to write the backup into")
    tmp = out.with_name(f".{out.name}.partial-{secrets.token_hex(4)}")
    alias = f"rs_backup_{secrets.token_hex(4)}"
    snap = store.snapshot()
    try:
        cur = snap.cursor()
        name = cur.execute("SELECT current_database()").fetchone()[0]
        cur.execute(f"ATTACH '{_quote(tmp)}' AS {alias}")
        try:
            cur.execute(f"COPY FROM DATABASE \"{name}\" TO {alias}")
        finally:
            cur.execute(f"DETACH {alias}")
    except duckdb.Error as e:
        tmp.unlink(missing_ok=True)
        raise BackupError(f"the backup failed: {e}; nothing was written") from None
    finally:
        if snap is not store:
            snap.close()
    try:
        with duckdb.connect(str(tmp), config=_CONFIG) as con:
            _advance_sequences(con)
            manifest: dict[str, Any] = {
                "schema_version": LATEST,
                "created_at": datetime.now(UTC).replace(tzinfo=None).isoformat(),
                "source": source or "", "tables": _checksums(con)}
            con.execute(f"CREATE TABLE {MANIFEST_TABLE} (manifest_json VARCHAR NOT NULL)")
            con.execute(f"INSERT INTO {MANIFEST_TABLE} VALUES (?)", [json.dumps(manifest)])
            con.execute("CHECKPOINT")
        os.chmod(tmp, 0o600)
        digest = file_sha256(tmp)
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    side = out.with_name(out.name + ".sha256")
    side.write_text(f"{digest}  {out.name}\n")
    return {**manifest, "file": str(out), "sha256": digest, "bytes": out.stat().st_size,
            "sha256_file": str(side)}


def verify(path: str | Path) -> dict[str, Any]:
    """The backup's manifest after checking it whole (module docstring): ``sha256``,
    ``sha256_checked`` (a side file was there and matched), ``tables`` {name: {rows,
    checksum}}. BackupError for a missing, damaged or foreign file."""
    src = Path(path).expanduser().resolve()
    if not src.is_file():
        raise BackupError(f"no backup file at {src}")
    digest = file_sha256(src)
    side = src.with_name(src.name + ".sha256")
    checked = side.is_file()
    if checked:
        want = side.read_text().split()[0] if side.read_text().split() else ""
        if want != digest:
            raise BackupError(f"{src} is damaged: its SHA-256 is {digest}, the backup wrote "
                              f"{want} ({side.name}); nothing was restored")
    try:
        with duckdb.connect(str(src), read_only=True, config=_CONFIG) as con:
            found = con.execute("SELECT count(*) FROM information_schema.tables WHERE "
                                "table_name = ?", [MANIFEST_TABLE]).fetchone()[0]
            if not found:
                raise BackupError(f"{src} is not a recourse-study backup (it has no "
                                  f"{MANIFEST_TABLE}); nothing was restored")
            manifest = json.loads(con.execute(
                f"SELECT manifest_json FROM {MANIFEST_TABLE}").fetchone()[0])
            now = _checksums(con)
    except duckdb.Error as e:
        raise BackupError(f"{src} cannot be read as a backup (damaged or not a DuckDB file: "
                          f"{str(e).splitlines()[0]}); nothing was restored") from None
    bad = [t for t, want in manifest["tables"].items() if now.get(t) != want]
    if bad:
        raise BackupError(f"{src} is damaged: rows or checksum differ from its manifest in "
                          f"{', '.join(bad)}; nothing was restored")
    return {**manifest, "file": str(src), "sha256": digest, "sha256_checked": checked}


def restore(path: str | Path, target: str, entries: list[dict[str, Any]],
            actions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Restore the backup at ``path`` into ``target`` (module docstring), re-applying the
    withdrawals in ``entries`` and keeping the audit rows in ``actions`` (the
    ``researcher_actions`` of the database being replaced) that the backup lacks; the
    verified manifest with ``reapplied`` (the participants withdrawn again), ``target``
    and, for a DuckDB file, ``replaced`` (where the old file went, or None)."""
    from data.store import Store

    manifest = verify(path)
    if not is_postgres(target):
        dest = Path(target).expanduser().resolve()
        if not dest.parent.is_dir():
            raise BackupError(f"no folder {dest.parent} to restore into")
        tmp = dest.with_name(f".{dest.name}.restoring-{secrets.token_hex(4)}")
    else:
        tmp = Path(str(Path(path).expanduser().resolve()) + f".restoring-{secrets.token_hex(4)}")
    try:
        shutil.copyfile(path, tmp)
        os.chmod(tmp, 0o600)
        with duckdb.connect(str(tmp), config=_CONFIG) as con:
            con.execute(f"DROP TABLE {MANIFEST_TABLE}")
        with Store(tmp) as built:  # migrated to this code's schema
            again = reapply(built, entries)
            _keep_actions(built, actions or [])
        with duckdb.connect(str(tmp), config=_CONFIG) as con:
            _advance_sequences(con)
            con.execute("CHECKPOINT")  # everything in the file itself, none in a WAL
        Path(f"{tmp}{JOURNAL_SUFFIX}").unlink(missing_ok=True)
        if is_postgres(target):
            _load_postgres(tmp, target)
            replaced = None
        else:
            replaced = None
            if dest.exists():
                replaced = dest.with_name(
                    f"{dest.name}.replaced-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}")
                os.replace(dest, replaced)
                wal = Path(f"{dest}.wal")
                if wal.exists():
                    os.replace(wal, Path(f"{replaced}.wal"))
            os.replace(tmp, dest)
            replaced = str(replaced) if replaced else None
    finally:
        tmp.unlink(missing_ok=True)
        Path(f"{tmp}.wal").unlink(missing_ok=True)
        Path(f"{tmp}{JOURNAL_SUFFIX}").unlink(missing_ok=True)
    return {**manifest, "target": describe(target), "reapplied": again,
            "replaced": replaced}


def _keep_actions(store: Any, actions: list[dict[str, Any]]) -> None:
    """Add the audit rows the restored store lacks (by ``action_id``): what researchers
    did after the backup stays on record."""
    have = {r["action_id"] for r in store.query("SELECT action_id FROM researcher_actions")}
    missing = [a for a in actions if a["action_id"] not in have]
    if missing:
        with store.transaction() as tx:
            tx.insert("researcher_actions", missing)


def _load_postgres(built: Path, target: str) -> None:
    """Replace every table of the PostgreSQL store ``target`` with those of the DuckDB file
    ``built``, and continue its sequences, in one transaction."""
    from data.store import Store

    with Store(built, read_only=True) as src, Store(target) as dst, dst.transaction() as tx:
        for table in reversed(TABLES):
            if table != "schema_version":
                tx.execute(f"DELETE FROM {table}")
        for table in TABLES:
            if table == "schema_version":
                continue
            rows = src.query(f"SELECT * FROM {table}")
            if rows:
                tx.insert(table, rows)
        for seq, table, column in SEQUENCES:
            tx.execute(f"SELECT setval('{seq}', (SELECT coalesce(max({column}), 0) + 1 "
                       f"FROM {table}), false)")
