"""One output convention for every command (README, "Output convention").

- ``--json``: stdout carries exactly one JSON object, the command's documented result, and
  nothing else; progress, tables and notes go to stderr.
- ``--json-file PATH``: the same object written to PATH (parent folders created), with or
  without ``--json``.
- Without ``--json``, a command prints its human-readable result (tables on stdout, notes
  on stderr).
- Failure: a one-line ``error: ...`` on stderr and a non-zero exit code: 2 for bad input
  (arguments, files, databases), 1 when the work itself failed. A command that still
  produced a result (``analyze`` with a failed model) prints it as usual before exiting 1.

JSON is strict (data.jsonio): NaN and infinities are null. data.jsonio is imported when a
result is written, not with this module: registering the commands imports no data layer
(it brings pandas and DuckDB).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console

JSON_HELP = "Print one JSON object (the result; shape below) on stdout and nothing else there."
JSON_FILE_HELP = "Also write the JSON object to this file."

err = Console(stderr=True, soft_wrap=True)  # progress, notes and errors: never re-wrapped


def json_option() -> Any:
    """The ``--json`` flag of every command with a machine-readable result."""
    return typer.Option(False, "--json", help=JSON_HELP)


def json_file_option() -> Any:
    """The ``--json-file PATH`` option of every command with a machine-readable result."""
    return typer.Option(None, "--json-file", help=JSON_FILE_HELP, dir_okay=False)


def result_console(json_out: bool, min_width: int = 0) -> Console:
    """Where a human-readable result goes: stdout, or stderr when stdout carries JSON; at
    least ``min_width`` columns wide (wide tables are never squeezed)."""
    console = Console(stderr=json_out)
    console.width = max(console.width, min_width)
    return console


def emit(doc: dict[str, Any], *, json_out: bool, json_file: Path | None,
         human: Callable[[], None] | None = None) -> None:
    """Deliver a command's result by the convention of the module docstring; ``human``
    prints the readable form (to ``result_console(json_out)``)."""
    if not isinstance(doc, dict):
        raise TypeError(f"a command's JSON result must be an object, got {type(doc).__name__}")
    if json_file is not None:
        from data.jsonio import write_json

        write_json(json_file, doc)
    if human is not None:
        human()
    if json_file is not None:
        err.print(f"result written to {json_file}", highlight=False)
    if json_out:
        from data.jsonio import dumps

        sys.stdout.write(dumps(doc) + "\n")
        sys.stdout.flush()


def fail(message: object, code: int = 1, *, keep_lines: bool = False,
         json_out: bool = False, details: dict[str, Any] | None = None) -> NoReturn:
    """Print ``error: message`` on stderr (as one line unless ``keep_lines``: a list of
    problems, one per line) and exit with ``code``; with ``json_out`` stdout also carries
    one object ``{"error": message, **details}``."""
    text = str(message).strip() if keep_lines else " ".join(str(message).split())
    typer.echo(f"error: {text}", err=True)
    if json_out:
        from data.jsonio import dumps

        sys.stdout.write(dumps({"error": text, **(details or {})}) + "\n")
        sys.stdout.flush()
    raise typer.Exit(code)
