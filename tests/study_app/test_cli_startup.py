"""The command line starts without its heavy dependencies.

Registering the commands (importing ``study_app.cli``) imports none of torch, PyMC, pandas,
pyarrow, Streamlit or PyTensor: each command imports what it needs inside its function, so
``recourse-study --help`` or ``validate`` does not wait seconds for libraries it never uses
(docs/architecture.md, "Command start-up"). A top-level heavy import in a command module fails
the first test; an option type that no longer resolves (typer reads every command's
signature when it builds the app) fails the second.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import typer.main

from study_app.cli import app
from tests.cli_process import CLI

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "pymc", "pandas", "pyarrow", "streamlit", "pytensor")


def _env() -> dict[str, str]:
    """This checkout first on the path (the subprocess imports the code under test), a wide
    terminal (no command name is cut)."""
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "COLUMNS": "200"}


def test_registering_the_commands_imports_no_heavy_library() -> None:
    code = ("import study_app.cli, sys; "
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=_env(), cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def _listed(help_text: str) -> set[str]:
    """The command names of a help screen's command table (a row starts with the name)."""
    return set(re.findall(r"^\W?\s?([a-z][a-z-]*)\s{2,}", help_text, re.M))


def test_help_lists_every_command() -> None:
    root = typer.main.get_command(app)
    groups = {"": root} | {name: cmd for name, cmd in root.commands.items()
                           if getattr(cmd, "commands", None)}
    assert {"validate", "reproduce", "analyze", "serve", "benchmark", "docs"} <= set(root.commands)
    for group, cmd in groups.items():
        done = subprocess.run([CLI, *group.split(), "--help"], capture_output=True, text=True,
                              env=_env(), cwd=REPO, timeout=120)
        assert done.returncode == 0, done.stderr
        assert set(cmd.commands) <= _listed(done.stdout), (group, done.stdout)


def _commands(cmd: typer.main.TyperGroup, path: str = "") -> dict[str, object]:
    """Every command and group under ``cmd``, by its full name."""
    out: dict[str, object] = {}
    for name, sub in getattr(cmd, "commands", {}).items():
        out[f"{path} {name}".strip()] = sub
        out |= _commands(sub, f"{path} {name}")
    return out


def test_every_command_has_a_one_line_summary() -> None:
    # The command table shows the help's first paragraph: one line, short enough that the name
    # and it fit an 80-column terminal (the detail is in the command's own --help).
    long = {name: first for name, cmd in _commands(typer.main.get_command(app)).items()
            if len(first := (cmd.help or "").strip().split("\n\n")[0]) > 60 or "\n" in first}
    assert long == {}


def test_help_shows_one_line_per_command_in_80_columns() -> None:
    root = typer.main.get_command(app)
    groups = {"": root} | {name: cmd for name, cmd in root.commands.items()
                           if getattr(cmd, "commands", None)}
    for group, cmd in groups.items():
        done = subprocess.run([CLI, *group.split(), "--help"], capture_output=True, text=True,
                              env={**_env(), "COLUMNS": "80"}, cwd=REPO, timeout=120)
        assert done.returncode == 0, done.stderr
        table = done.stdout.split("Commands")[1].split("╰")[0].splitlines()[1:]
        assert len(table) == len(cmd.commands), (group, done.stdout)
        assert max(len(row) for row in table) <= 80
