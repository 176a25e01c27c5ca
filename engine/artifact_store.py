"""Where trained artifacts live and how their files are written: the home folder, one folder
per scenario, ``<name>.pt`` + ``<name>.json`` with the weights' SHA-256, atomic writes and a
lock file per artifact (engine.artifacts builds and loads on top of these)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

HOME_ENV = "RECOURSE_STUDY_HOME"


def home() -> Path:
    """``$RECOURSE_STUDY_HOME`` or ``./.recourse-study``, as an absolute path."""
    return Path(os.environ.get(HOME_ENV) or ".recourse-study").expanduser().resolve()


def artifact_dir(scenario_name: str) -> Path:
    return home() / "artifacts" / scenario_name


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def metadata_path(scenario_name: str, name: str) -> Path:
    return artifact_dir(scenario_name) / f"{name}.json"


def weights_path(scenario_name: str, name: str) -> Path:
    return artifact_dir(scenario_name) / f"{name}.pt"


def read_metadata(scenario_name: str, name: str) -> dict[str, Any] | None:
    """The artifact's metadata if its files exist and agree (SHA-256), else None."""
    meta_path = metadata_path(scenario_name, name)
    weights = weights_path(scenario_name, name)
    if not meta_path.exists() or not weights.exists():
        return None
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if meta.get("sha256") != sha256_hex(weights.read_bytes()):
        return None
    return meta


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the block with ``n`` torch threads, then restore the previous number."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextmanager
def artifact_lock(scenario_name: str, name: str) -> Iterator[None]:
    """An exclusive lock on one artifact (builds of different artifacts run in parallel)."""
    d = artifact_dir(scenario_name)
    d.mkdir(parents=True, exist_ok=True)
    with open(d / f".lock-{name}", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
