"""The reproduction pages say where each stored run came from (its provenance block)."""

from __future__ import annotations

import json
from pathlib import Path

from study_app.cli.reproduction_pages import index_markdown, provenance_line, run_markdown

DATA = Path(__file__).parents[2] / "docs" / "reproductions" / "data"
PROVENANCE = {"commit": "0123456789abcdef0123", "dirty": 0, "command": "recourse-study x",
              "started": "2026-01-02T03:04:05Z", "finished": "2026-01-02T04:04:05Z",
              "wall_seconds": 3600.4, "cpu_seconds": 6100.2,
              "machine": {"cores": 2, "load_start": [0.5, 0.4, 0.3],
                          "load_end": [1.5, 1.25, 1.0]},
              "libraries": {"python": "3.11.7", "torch": "2.13.0+cpu", "scipy": "1.17.1"},
              "training_code_sha256": "f" * 64}


def _stored(name: str) -> dict:
    run = json.loads((DATA / name).read_text())
    run["_file"] = name
    return run


def test_a_run_with_provenance_names_its_commit_times_machine_and_libraries():
    run = {**_stored("hare-budget.json"), "provenance": PROVENANCE}
    line = provenance_line(run)
    assert "commit `0123456789ab`" in line and "3600 s wall and 6100 s processor" in line
    assert "2 cores" in line and "0.50, 0.40, 0.30 at the start" in line
    assert "torch 2.13.0+cpu" in line and "scipy" not in line
    assert line in run_markdown(run)
    assert "| 0123456789ab |" in index_markdown([run])


def test_a_run_without_provenance_says_so():
    run = _stored("hare-budget.json")
    run.pop("provenance", None)
    assert "none recorded" in provenance_line(run) and "none recorded" in run_markdown(run)
    assert index_markdown([run]).rstrip().endswith("| - |")
    dirty = {**run, "provenance": {**PROVENANCE, "dirty": 3}}
    assert "with 3 file(s) changed" in provenance_line(dirty)
