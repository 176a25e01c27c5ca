"""The output convention (study_app.cli.output), checked on every registered command.

The walk introspects the typer app, so a new command is covered as soon as it exists:
it must either take ``--json`` and ``--json-file`` (and then gets run here, through the
console script's entry point with stdout and stderr captured at the file descriptors, so
even output that bypasses Python's sys.stdout would be caught) or be listed in
NO_MACHINE_OUTPUT with the reason. ``CHEAP`` holds the small arguments each command runs
with; a command with --json missing there fails the test. One command also runs as the real
console script in a subprocess: the installed entry point keeps the same convention.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import typer.main

from analysis.simdata import simulate_import
from data.accounts import add_account
from data.backup import backup
from data.imports import import_ratings
from data.store import Store
from study_app.cli import app
from tests.cli_process import CLI

NO_MACHINE_OUTPUT = {"serve": "runs the study server until stopped; it has no result"}


def leaf_commands() -> dict[str, object]:
    """Every runnable command of the app by its path ("benchmark analysis")."""
    out: dict[str, object] = {}

    def walk(cmd, prefix: str) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, f"{prefix} {name}".strip())
        else:
            out[prefix] = cmd

    walk(typer.main.get_command(app), "")
    return out


def _options(cmd) -> set[str]:
    return {o for p in cmd.params for o in getattr(p, "opts", [])}


def _cheap(tmp: Path) -> dict[str, list[str]]:
    """Small arguments per command (files under ``tmp``)."""
    db = str(tmp / "imported.duckdb")
    accounts = str(tmp / "accounts.duckdb")  # its own: accounts would need --account above
    return {
        "scenarios": [],
        "fetch-data": ["gmsc"],  # make install fetched it: present and intact, no download
        "train": ["--quick", "--only", "decision"],
        "simulate": ["--protocol", "tominaga-replication", "--participants", "2", "--db",
                     str(tmp / "sim.duckdb"), "--decision-model", "bayes"],
        "export": ["--db", db, "--out", str(tmp / "export"), "--format", "csv"],
        "withdraw": ["--db", db, "--participant", "p0009"],  # an imported participant
        "backup": ["--db", db, "--out", str(tmp / "backup.duckdb")],
        "restore": ["--backup", str(tmp / "walk-backup.duckdb"), "--db",
                    str(tmp / "restored.duckdb")],
        "accounts add": ["--db", accounts, "--account", "walker", "--role", "viewer"],
        "accounts list": ["--db", accounts],
        "accounts remove": ["--db", accounts, "--account", "leaver"],
        "accounts set-role": ["--db", accounts, "--account", "stayer", "--role", "admin"],
        "accounts set-password": ["--db", accounts, "--account", "stayer"],
        "import-ratings": ["--csv", str(tmp / "r.csv"), "--db", str(tmp / "new.duckdb"),
                           "--study", "walk"],
        "analyze": ["--db", db, "--out", str(tmp / "analysis"), "--backend", "pymc",
                    "--draws", "50", "--tune", "50", "--chains", "1", "--no-gaussian",
                    "--trace", "none", "--mgcv", "off"],
        "benchmark analysis": ["--participants", "12", "--plans", "3", "--backend", "pymc",
                               "--draws", "50", "--tune", "50", "--chains", "1",
                               "--no-baseline"],
        "benchmark recourse": ["--decision-model", "bayes", "--n", "5", "--bins", "4",
                               "--constraints", "all", "--speedup-sample", "0"],
        "benchmark hare": ["--bases", "gs", "--scales", "far", "--n", "3", "--seeds", "1",
                           "--budgets", "4", "--budget", "4", "--iterations", "1", "--steps",
                           "2", "--no-calibration-ablation"],
        "benchmark fairness": ["--n", "40", "--bootstrap", "10", "--method", "oracle",
                               "--decision-model", "bayes"],
        "loadtest": ["--protocol", "tominaga-replication", "--participants", "2",
                     "--concurrency", "2", "--db", str(tmp / "load.duckdb"), "--quick"],
        "power": ["--protocol", "tominaga-replication", "--participants", "4", "--sims", "1",
                  "--backend", "pymc", "--draws", "30", "--tune", "30", "--chains", "1",
                  "--decision-model", "bayes", "--workers", "1", "--out", str(tmp / "power")],
        "reproduce": ["hare-calibration", "--scenario", "loan", "--quick", "--fast", "--n", "3",
                      "--seeds", "1"],
        "validate": ["tominaga-replication"],
        "prereg": ["--protocol", "tominaga-replication", "--out", str(tmp / "prereg")],
        "audit": ["--protocol", "tominaga-replication", "--participants", "2",
                  "--decision-model", "bayes", "--out", str(tmp / "audit"),
                  "--no-screenshots"],
        "protocol docs": ["--out", str(tmp / "reference" / "protocol.md")],
        "docs generate": ["--out", str(tmp)],
        "preview": ["tominaga-replication", "--out", str(tmp / "preview"),
                    "--decision-model", "bayes", "--kind", "consent"],
    }


COMMANDS = leaf_commands()
WITH_JSON = sorted(p for p, c in COMMANDS.items() if "--json" in _options(c))


def test_every_command_follows_the_convention_or_says_why_not():
    assert "analyze" in COMMANDS and "benchmark fairness" in COMMANDS  # the walk works
    for path, cmd in COMMANDS.items():
        opts = _options(cmd)
        if path in NO_MACHINE_OUTPUT:
            assert "--json" not in opts, f"{path} has --json: drop it from NO_MACHINE_OUTPUT"
            continue
        assert {"--json", "--json-file"} <= opts, f"{path}: --json and --json-file expected"
        assert path in _cheap(Path("/tmp")), f"{path}: add its small arguments to _cheap"


@pytest.fixture(scope="module")
def walk_dir(tmp_path_factory, trained_home):
    tmp = tmp_path_factory.mktemp("walk")
    simulate_import(10, 3, seed=0).to_csv(tmp / "r.csv", index=False)
    with Store(tmp / "imported.duckdb") as store:
        import_ratings(store, tmp / "r.csv", "walked")
        backup(store, tmp / "walk-backup.duckdb")
    with Store(tmp / "accounts.duckdb") as store:
        for name in ("leaver", "stayer"):
            add_account(store, name, "viewer", "a long enough pass phrase")
    return tmp


# Commands whose cheapest run still fits models or drives a server (each tens of seconds):
# their walk is in make test-slow; their own tests check their JSON in make test.
LONG = {"analyze", "power", "benchmark analysis", "loadtest", "reproduce"}


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.slow) if p in LONG else p
                                  for p in WITH_JSON])
def test_json_prints_exactly_one_object_on_stdout(path, walk_dir, run_cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("RECOURSE_STUDY_PASSWORD", "the walker's pass phrase")  # accounts
    file = walk_dir / f"{path.replace(' ', '-')}.json"
    r = run_cli(*path.split(), *_cheap(walk_dir)[path], "--json", "--json-file", str(file))
    _one_object(r.code, r.stdout, r.stderr, file)


def test_the_console_script_prints_one_object_and_logs_on_stderr(walk_dir):
    """The installed console script, in its own process (a cheap command)."""
    file = walk_dir / "script-validate.json"
    r = subprocess.run([CLI, "validate", "tominaga-replication", "--json", "--json-file",
                        str(file)], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "COLUMNS": "80"})
    _one_object(r.returncode, r.stdout, r.stderr, file)
    assert f"result written to {file}" in r.stderr


def _one_object(code: int, stdout: str, stderr: str, file: Path) -> None:
    assert code == 0, stderr
    doc = json.loads(stdout)  # the whole of stdout is one JSON document ...
    assert isinstance(doc, dict) and doc  # ... and it is an object
    assert stdout.strip().count("\n") == 0  # on one line: nothing printed around it
    assert json.loads(file.read_text()) == doc  # --json-file writes the same object


@pytest.mark.parametrize(("args", "message"), [
    (("export", "--db", "x.duckdb", "--out", "o", "--format", "xlsx"),
     "Invalid value for '--format': 'xlsx' is not one of 'parquet', 'csv', 'psych-ds'."),
    (("export", "--db", "x.duckdb", "--nonsuch"), "No such option: --nonsuch"),
    (("nonsuch-command",), "No such command 'nonsuch-command'."),
])
def test_an_argument_typer_refuses_is_one_json_error_with_json(tmp_path, args, message):
    """Refused before the command runs (a value outside an option's choices, an unknown
    option or command), the console script still prints one object under --json."""
    r = subprocess.run([CLI, *args, "--json"], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path)
    assert r.returncode == 2
    assert json.loads(r.stdout) == {"error": message}
    assert r.stderr.strip() == f"error: {message}"
    assert not (tmp_path / "o").exists()


def test_without_json_typer_still_shows_its_own_usage_error(tmp_path):
    r = subprocess.run([CLI, "export", "--db", "x.duckdb", "--out", "o", "--format", "xlsx"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert "Usage: recourse-study export" in r.stderr and "'xlsx' is not one of" in r.stderr
