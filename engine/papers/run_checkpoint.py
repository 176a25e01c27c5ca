"""The finished parts of a long ``reproduce`` run, kept on disk so an interrupted run resumes.

A run is split into units (a HARE benchmark's seed and base method: its base plans and every
HARE variant over them). Each unit's result is appended to a JSON-lines file as soon as it
finishes, under a key naming everything the result depends on: the caller's configuration
and the SHA-256 of the engine's source (``engine_code_hash``), so a run of other code or
another configuration never reuses it. A rerun with the same key skips the finished units.
A line cut short by a kill is ignored (its unit runs again); JSON keeps floats exactly, so a
reused unit gives the numbers it gave.

Files live under ``$RECOURSE_STUDY_HOME/reproduce-runs/`` (``checkpoint_path``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from engine.artifact_store import home

ENGINE = Path(__file__).resolve().parents[1]


@functools.cache
def engine_code_hash() -> str:
    """SHA-256 of every module of the engine package (paths and contents)."""
    h = hashlib.sha256()
    for path in sorted(ENGINE.rglob("*.py")):
        h.update(str(path.relative_to(ENGINE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def checkpoint_path(*parts: str) -> Path:
    """``$RECOURSE_STUDY_HOME/reproduce-runs/<part>/.../<last part>.jsonl``."""
    return home().joinpath("reproduce-runs", *parts[:-1], parts[-1] + ".jsonl")


class Checkpoint:
    """A run's finished units under ``key`` (module docstring), read from and appended to
    the file at ``path``."""

    def __init__(self, path: Path, key: dict[str, Any]) -> None:
        self.path = path
        self.key = hashlib.sha256(json.dumps({**key, "engine": engine_code_hash()},
                                             sort_keys=True, default=str).encode()).hexdigest()
        self.done: dict[str, Any] = {}
        self.reused = 0
        if path.exists():
            for line in path.read_text().splitlines():
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:  # cut short by a kill: its unit runs again
                    continue
                if isinstance(entry, dict) and entry.get("key") == self.key:
                    self.done[entry["unit"]] = entry["value"]

    def get(self, unit: str) -> Any | None:
        """The stored result of ``unit`` (None: not finished in an earlier run)."""
        if unit in self.done:
            self.reused += 1
            return self.done[unit]
        return None

    def put(self, unit: str, value: Any) -> None:
        """Append ``unit``'s result, on disk before this returns."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"key": self.key, "unit": unit, "value": value})
        with self.path.open("a") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        self.done[unit] = value
