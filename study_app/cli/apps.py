"""The typer applications every command module attaches to.

Kept apart from ``study_app.cli.__init__`` so command modules can import the apps without
importing each other.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="recourse-study",
    help="Human-centered algorithmic recourse research: train, benchmark, simulate, serve, "
    "analyze and export studies.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
benchmark_app = typer.Typer(
    help="Benchmarks: recourse methods, HARE, analysis backends, fairness.",
    no_args_is_help=True,
)
app.add_typer(benchmark_app, name="benchmark")


def split_list(value: str, option: str) -> tuple[str, ...]:
    """A comma-separated option value as a tuple (BadParameter when it names nothing)."""
    items = tuple(v.strip() for v in value.split(",") if v.strip())
    if not items:
        raise typer.BadParameter(f"{option} needs at least one comma-separated value")
    return items
