"""The ``recourse-study`` console script run as its own process, for tests about the process
boundary (the in-process runner is conftest's ``run_cli``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

CLI = str(Path(sys.executable).with_name("recourse-study"))  # next to this Python


def cli_json(*args: str, env: dict[str, str] | None = None,
             timeout: float = 300) -> tuple[int, dict[str, Any]]:
    """``recourse-study ARGS --json`` in a new process (``env`` added to this one's, a value
    of None removes the variable; no stdin): its exit code and the one JSON object it
    printed. Fails with the command's stderr when stdout holds no JSON object."""
    full = {**os.environ}
    for name, value in (env or {}).items():
        if value is None:
            full.pop(name, None)
        else:
            full[name] = value
    done = subprocess.run([CLI, *args, "--json"], capture_output=True, text=True, env=full,
                          stdin=subprocess.DEVNULL, timeout=timeout)
    try:
        return done.returncode, json.loads(done.stdout)
    except json.JSONDecodeError as e:
        raise AssertionError(f"no JSON object from {args} (exit {done.returncode}):\n"
                             f"{done.stderr[-2000:]}") from e
