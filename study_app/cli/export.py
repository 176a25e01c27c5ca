"""`recourse-study export`: every table of a study database plus a codebook."""

from __future__ import annotations

from pathlib import Path

import typer

from study_app.cli.apps import app
from study_app.cli.choices import ExportFormat
from study_app.cli.output import emit, err, fail, json_file_option, json_option
from study_app.cli.researcher import account_option, run_action


@app.command()
def export(
    db: str = typer.Option(..., help="The study database: a DuckDB file or postgresql://..."),
    out: Path = typer.Option(..., help="Directory to write into (created if missing)."),
    format: ExportFormat = typer.Option(
        "parquet", "--format", help="psych-ds: a Psych-DS data package of one study "
        "(docs/export.md)."),
    free_text: bool = typer.Option(
        False, "--free-text", help="Include text participants typed (their reasons), which "
        "may identify them."),
    linkage: bool = typer.Option(
        False, "--linkage", help="Include what links rows to people on the recruitment "
        "platform: hashes of recruitment ids and sessions, completion codes."),
    coding_sheet: bool = typer.Option(
        False, "--coding-sheet", help="Also write coding_sheet.csv: one row per free-text "
        "reason with its plan's distances and ratings and empty code columns, for the "
        "qualitative analysis (needs --free-text; docs/analysis-mgcv.md)."),
    account: str | None = account_option(),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Export every table as Parquet or CSV, with a codebook.

    Write every table (and the ratings_long view) as Parquet or CSV, with a codebook.

    Files: <table>.<format> per table, quality_flags.<format> (speeders, straight-liners,
    attention failures per participant: docs/participants.md), codebook.csv and codebook.json (table, column, type,
    meaning, levels: the 7-point scales' labels), manifest.json. Secrets (the external-id salt, token hashes, the dashboard's
    sign-in log), the withdrawals audit and withdrawn participants are never exported; free text and linkage columns only with --free-text /
    --linkage. In CSV, a text cell starting with = + - @ tab or CR gets a leading ' so a
    spreadsheet shows it as text (Parquet keeps the exact text).

    While `recourse-study serve` runs the study on a DuckDB file, the server writes the
    export (it owns the file; the same rows as the export of the stopped study) and the
    study keeps running. Needs an exporter or admin account when the database has accounts;
    every export is audited with the account.

    With --format psych-ds: a Psych-DS data package of the study (OUT must not exist; see
    docs/export.md): dataset_description.json, data/ (ratings, one row per participant),
    codebook.csv with value labels, analysis/primary.R. JSON: format, study_id, out,
    files, rows {file: rows}, variables, primary_model {outcome, distance, script}.

    JSON (the manifest, also written as OUT/manifest.json): format, schema_version, tables
    {name: rows}, free_text, linkage, withheld {table: [columns]}, csv_formulas (CSV only),
    files, coding_sheet {file, rows, code_columns} (with --coding-sheet), account, via.
    """
    if coding_sheet and not free_text:
        fail("--coding-sheet holds what participants typed: add --free-text", 2,
             json_out=json_out)
    if format == "psych-ds":
        from study_app.cli.export_package import export_package

        export_package(db, out, free_text or linkage or coding_sheet, json_out, json_file)
        return
    manifest = run_action(db, "export", {
        "out": str(out.expanduser().resolve()), "format": format, "free_text": free_text,
        "linkage": linkage, "coding": coding_sheet}, account, json_out)
    rows = sum(manifest["tables"].values())
    emit(manifest, json_out=json_out, json_file=json_file, human=lambda: err.print(
        f"{len(manifest['tables'])} tables ({rows} rows) + codebook -> {out}", highlight=False))
