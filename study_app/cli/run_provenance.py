"""Where a stored result came from: the commit and command that made it, the machine and
its load while it ran, its wall and processor time, and the library versions.

``RunClock`` starts when a run starts (before any training it does first) and
``provenance`` reads it when the run ends, so the times cover everything the command did.
Processor time is this process's and its waited-for children's, user plus system.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

from engine.artifact_provenance import ROOT, library_versions, training_code_hash


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                             timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


@dataclass
class RunClock:
    """The wall clock, processor time and load average at a run's start."""

    wall: float = field(default_factory=time.perf_counter)
    cpu: float = field(default_factory=_cpu_seconds)
    load: tuple[float, ...] = field(default_factory=os.getloadavg)
    started: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                               time.gmtime()))


def provenance(command: str, clock: RunClock) -> dict[str, Any]:
    """The run's provenance, read now: ``commit`` (HEAD; ``dirty`` counts the files that
    differ from it), ``command`` as given, ``machine`` (cores, load average at the start
    and the end), ``wall_seconds`` and ``cpu_seconds`` since ``clock`` started, the
    libraries' versions and the SHA-256 of the code that trains the models."""
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "commit": _git("rev-parse", "HEAD"),
        "dirty": None if status is None else len(status.splitlines()),
        "command": command,
        "started": clock.started,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "wall_seconds": round(time.perf_counter() - clock.wall, 1),
        "cpu_seconds": round(_cpu_seconds() - clock.cpu, 1),
        "machine": {"cores": os.cpu_count(),
                    "load_start": [round(v, 2) for v in clock.load],
                    "load_end": [round(v, 2) for v in os.getloadavg()]},
        "libraries": library_versions(),
        "training_code_sha256": training_code_hash(),
    }
