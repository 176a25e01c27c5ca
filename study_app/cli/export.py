"""`recourse-study export`: every table of a study database plus a codebook."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

from study_app.cli.apps import app

_console = Console(stderr=True)


@app.command()
def export(
    db: Path = typer.Option(..., help="The study database (DuckDB file)."),
    out: Path = typer.Option(..., help="Directory to write into (created if missing)."),
    format: str = typer.Option("parquet", "--format", help="parquet | csv."),
    free_text: bool = typer.Option(
        False, "--free-text", help="Include text participants typed (their reasons), which "
        "may identify them."),
    linkage: bool = typer.Option(
        False, "--linkage", help="Include what links rows to people on the recruitment "
        "platform: hashes of recruitment ids and sessions, completion codes."),
    json_out: bool = typer.Option(False, "--json", help="Print the manifest as JSON on stdout."),
) -> None:
    """Write every table (and the ratings_long view) as Parquet or CSV, with a codebook.

    Files: <table>.<format> per table, codebook.csv and codebook.json (table, column, type,
    meaning), manifest.json. Secrets (the external-id salt, token hashes, the dashboard's
    sign-in log) are never exported; free text and linkage columns only with --free-text /
    --linkage. In CSV, a text cell starting with = + - @ tab or CR gets a leading ' so a
    spreadsheet shows it as text (Parquet keeps the exact text).

    --json prints the manifest: format, schema_version, tables {name: rows}, free_text,
    linkage, withheld {table: [columns]}, csv_formulas (CSV only), files.
    """
    from data.export import export as run
    from data.store import Store, StoreError

    if format not in ("parquet", "csv"):
        raise typer.BadParameter("expected parquet or csv", param_hint="--format")
    if not db.exists():
        raise typer.BadParameter(f"no database at {db}", param_hint="--db")
    try:
        with Store(db, read_only=True) as store:
            manifest = run(store, out, format,  # type: ignore[arg-type]
                           free_text=free_text, linkage=linkage)
    except StoreError as e:
        _console.print(f"[bold red]error:[/] {e}", highlight=False)
        raise typer.Exit(1) from None
    if json_out:
        typer.echo(json.dumps(manifest, indent=2))
    else:
        rows = sum(manifest["tables"].values())
        _console.print(f"{len(manifest['tables'])} tables ({rows} rows) + codebook -> {out}")
