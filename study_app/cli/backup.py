"""`recourse-study backup` and `recourse-study restore`: a checked snapshot of a study
database, and its restore with every later withdrawal re-applied (data.backup)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from study_app.cli.apps import app
from study_app.cli.output import emit, err, fail, json_file_option, json_option
from study_app.cli.researcher import account_option, run_action


def _tables(doc: dict[str, Any]) -> str:
    return ", ".join(f"{t} {v['rows']}" for t, v in doc["tables"].items() if v["rows"])


@app.command()
def backup(
    db: str = typer.Option(..., help="The study database: a DuckDB file or postgresql://..."),
    out: Path = typer.Option(..., help="The backup file to write (a DuckDB file; it must not "
                             "exist)."),
    account: str | None = account_option(),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Back up a study database into one checked file.

    Back up a study database into one file: every table copied in one read transaction
    (a consistent snapshot, also while `serve` runs: on a served DuckDB file the server
    writes it), with a manifest of each table's rows and checksum inside and the file's
    SHA-256 beside it (OUT.sha256). Needs an admin account when the database has accounts;
    audited with the account. docs/participants.md: what a restore does with withdrawals.

    JSON: file, sha256, sha256_file, bytes, schema_version, created_at, source, tables
    {name: {rows, checksum}}, account, via.
    """
    from data.store import describe

    doc = run_action(db, "backup", {"path": str(out.expanduser().resolve()),
                                    "source": describe(db)}, account, json_out)
    emit(doc, json_out=json_out, json_file=json_file, human=lambda: err.print(
        f"backup of {describe(db)} -> {doc['file']} ({doc['bytes']} bytes, sha256 "
        f"{doc['sha256']}): {_tables(doc)}", highlight=False, markup=False))


@app.command()
def restore(
    backup_file: Path = typer.Option(..., "--backup", help="The backup file "
                                     "(`recourse-study backup`)."),
    db: str = typer.Option(..., help="The database to restore into: a DuckDB file (replaced; "
                           "the old one is kept as DB.replaced-TIME) or postgresql://... "
                           "(every table replaced in one transaction)."),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Restore a checked backup of a study database.

    Restore a backup, checked first: the file's SHA-256 against BACKUP.sha256 and every
    table's rows and checksum against the backup's manifest (a damaged file is refused and
    nothing changes). Everyone who withdrew after the backup was taken is withdrawn again:
    the withdrawals of the database being replaced and of its withdrawal journal
    (DB.withdrawals.jsonl beside a DuckDB file) are re-applied before the restored database
    takes its place; the researchers' audit rows of the replaced database stay. The study's
    server must be stopped. Audited as local:<user>.

    JSON: file, sha256, sha256_checked, schema_version, created_at, source, tables {name:
    {rows, checksum}} (verified), target, reapplied [{study_id, participant_id,
    rows_deleted}], replaced (the old DuckDB file's new name, or null), journal_entries,
    replaced_readable (the old database could be read for its withdrawals).
    """
    from data import accounts
    from data.backup import BackupError
    from data.backup import restore as run
    from data.store import Store, StoreError, is_postgres
    from data.withdrawal import journal_path, read_journal
    from study_app.live_server import read_control
    from study_app.operations import OperationError, local_account

    entries: list[dict[str, Any]] = []
    actions: list[dict[str, Any]] = []
    readable = None
    journal: Path | None = None
    try:
        if not is_postgres(db) and read_control(db) is not None:
            fail(f"a running `recourse-study serve` holds {db}: stop it first (a restore "
                 "replaces the database it serves)", 1, json_out=json_out)
        if is_postgres(db) or Path(db).exists():
            try:
                with Store(db) as old:
                    entries += old.query("SELECT * FROM withdrawals ORDER BY withdrawal_id")
                    actions = old.query("SELECT * FROM researcher_actions")
                    journal = journal_path(old)
                readable = True
            except StoreError as e:
                if "lock" in str(e).lower():
                    fail(f"{e}; another process holds {db}: stop it first", 1,
                         json_out=json_out)
                readable = False  # a damaged database: its journal still counts
        if journal is None and not is_postgres(db):
            journal = Path(f"{Path(db).expanduser().resolve()}.withdrawals.jsonl")
        from_journal = read_journal(journal) if journal is not None else []
        doc = run(backup_file, db, from_journal + entries, actions)
        with Store(db) as restored:
            accounts.record_action(restored, local_account(), "restore", "cli", {
                "file": doc["file"], "sha256": doc["sha256"], "reapplied": doc["reapplied"]})
    except (BackupError, OperationError) as e:
        fail(e, getattr(e, "code", 2), json_out=json_out)
    except StoreError as e:
        fail(e, 2, json_out=json_out)
    doc = {**doc, "journal_entries": len(from_journal), "replaced_readable": readable}
    emit(doc, json_out=json_out, json_file=json_file, human=lambda: _report(doc))


def _report(doc: dict[str, Any]) -> None:
    err.print(f"restored {doc['file']} (sha256 {doc['sha256']}, "
              f"{'checked against its .sha256' if doc['sha256_checked'] else 'no .sha256 file'}"
              f") into {doc['target']}: {_tables(doc)}; every table's rows and checksum "
              "match the backup's manifest", highlight=False, markup=False)
    again = ", ".join(f"{r['study_id']}/{r['participant_id']}" for r in doc["reapplied"])
    err.print(f"withdrawn again (withdrew after the backup): {again or 'nobody'}",
              highlight=False, markup=False)
    if doc["replaced"]:
        err.print(f"the database it replaced: {doc['replaced']}", highlight=False,
                  markup=False)
