"""`recourse-study import-ratings`: load ratings collected elsewhere from a long CSV."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import typer

from study_app.cli.apps import app
from study_app.cli.output import emit, err, fail, json_file_option, json_option


@app.command("import-ratings")
def import_ratings(
    csv: Path = typer.Option(..., "--csv", help="The long CSV (one row per rated plan)."),
    db: str = typer.Option(..., help="The study database: a DuckDB file (created if missing) or postgresql://..."),
    study: str = typer.Option(..., help="Study name the ratings go into."),
    ignore_unknown_columns: bool = typer.Option(
        False, "--ignore-unknown-columns",
        help="Import a file that has columns outside the documented ones, without them "
        "(by default such a file is refused and the columns are named)."),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Import ratings to analyse like a study run here.

    Import ratings so they can be analysed like a study run here (source 'imported').

    Columns (header line required): participant_id, plan_id, l0 (changed items, >= 0), l1
    (sum of range-normalized changes, >= 0), acceptance and action (integers 1..7); optional:
    satisfaction (0..1), violation (0/1), arm, impossible (0/1). l0/l1 fill both the action
    and the profile distance columns. Every bad row and every unknown column is reported
    (the header is line 1) and nothing is imported unless the whole file is good.

    JSON: {study_id, participants (in the study), new_participants, ratings (imported),
    ignored_columns (unknown columns left out with --ignore-unknown-columns)}.
    """
    from data.imports import ImportRowsError
    from data.imports import import_ratings as run
    from data.store import Store, StoreError

    if not csv.exists():
        fail(f"no file at {csv}", 2)
    try:
        with Store(db) as store:
            result = run(store, csv, study, ignore_unknown=ignore_unknown_columns)
    except ImportRowsError as e:
        hint = ("\n  (remove the unknown columns, or pass --ignore-unknown-columns to import "
                "without them)") if e.unknown_columns else ""
        fail(f"{e}{hint}", 2, keep_lines=True)
    except (StoreError, ValueError) as e:
        fail(e, 2)
    ignored = (f"; ignored column(s): {', '.join(result.ignored_columns)}"
               if result.ignored_columns else "")
    emit(asdict(result), json_out=json_out, json_file=json_file, human=lambda: err.print(
        f"imported {result.ratings} ratings of {result.new_participants} new participants "
        f"into study {result.study_id!r} ({db}){ignored}", highlight=False))
