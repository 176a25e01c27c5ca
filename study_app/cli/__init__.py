"""The ``recourse-study`` command.

Each subcommand lives in its own module of this package and attaches itself to the apps of
``study_app.cli.apps``; importing the modules listed here registers them.
"""

from __future__ import annotations

import importlib
import os

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
    exports, reports) is readable by this user only."""
    os.umask(0o077)
    app()
