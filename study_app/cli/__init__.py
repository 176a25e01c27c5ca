"""The ``recourse-study`` command.

Each subcommand lives in its own module of this package and attaches itself to the apps of
``study_app.cli.apps``; importing the modules listed here registers them.
"""

from __future__ import annotations

import importlib
import os
import sys

import typer

from study_app.cli.apps import app

__all__ = ["app", "main"]

_COMMAND_MODULES: tuple[str, ...] = (
    "scenarios",
    "fetch_data",
    "train",
    "bench_fairness",
    "bench_recourse",
    "bench_hare",
    "simulate",
    "export",
    "withdraw",
    "backup",
    "accounts",
    "import_ratings",
    "analyze",
    "bench_analysis",
    "power",
    "prereg",
    "serve",
    "loadtest",
    "reproduce",
    "validate",
    "protocol_docs",
    "preview",
    "audit",
    "docs_site",
)

for _name in _COMMAND_MODULES:
    importlib.import_module(f"study_app.cli.{_name}")


def main() -> None:
    """Entry point of the console script. Everything it writes (databases and their WAL,
    exports, reports) is readable by this user only. With ``--json``, an option typer
    refuses before the command runs (a value outside its choices, a missing option) is
    reported as the commands report their own errors: ``{"error": ...}`` on stdout, the
    message on stderr, exit 2."""
    os.umask(0o077)
    if "--json" not in sys.argv[1:]:
        app()
        return
    _run_with_json_usage_errors()


def _run_with_json_usage_errors() -> None:
    # typer vendors click and re-exports only BadParameter of its errors; their base
    # ClickException also covers an unknown option or command and a file click cannot open.
    from typer._click.exceptions import ClickException

    from study_app.cli.output import fail

    try:
        code = app(standalone_mode=False)
    except ClickException as refused:
        # pydantic's prefix on a refused Literal value says nothing to a reader
        message = refused.format_message().replace("Value error, ", "")
        try:
            fail(message, refused.exit_code, json_out=True)
        except typer.Exit as done:
            code = done.exit_code
    except typer.Abort:
        code = 1
    sys.exit(code if isinstance(code, int) else 0)
