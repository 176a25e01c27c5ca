"""`recourse-study import-ratings`: load ratings collected elsewhere from a long CSV."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import typer
from rich.console import Console

from study_app.cli.apps import app

_console = Console(stderr=True)


@app.command("import-ratings")
def import_ratings(
    csv: Path = typer.Option(..., "--csv", help="The long CSV (one row per rated plan)."),
    db: Path = typer.Option(..., help="The study database (created if missing)."),
    study: str = typer.Option(..., help="Study name the ratings go into."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON on stdout."),
) -> None:
    """Import ratings so they can be analysed like a study run here (source 'imported').

    Columns (header line required): participant_id, plan_id, l0 (changed items, >= 0), l1
    (sum of range-normalized changes, >= 0), acceptance and action (integers 1..7); optional:
    satisfaction (0..1), violation (0/1), arm, impossible (0/1). l0/l1 fill both the action
    and the profile distance columns. Every bad row is reported with its line number and
    nothing is imported unless the whole file is good.

    --json prints: study_id, participants (in the study), new_participants, ratings (imported).
    """
    from data.imports import ImportRowsError
    from data.imports import import_ratings as run
    from data.store import Store, StoreError

    if not csv.exists():
        raise typer.BadParameter(f"no file at {csv}", param_hint="--csv")
    try:
        with Store(db) as store:
            result = run(store, csv, study)
    except (ImportRowsError, StoreError, ValueError) as e:
        _console.print(f"[bold red]error:[/] {e}", highlight=False)
        raise typer.Exit(1) from None
    if json_out:
        typer.echo(json.dumps(asdict(result), indent=2))
    else:
        _console.print(
            f"imported {result.ratings} ratings of {result.new_participants} new participants "
            f"into study {result.study_id!r} ({db})"
        )
