"""Trained artifacts shipped with the code: a new home starts from them instead of training.

``engine/shipped_artifacts/<scenario>/`` holds ``<name>.pt`` and ``<name>.json`` as a home holds
them (engine.artifact_store) and ``PROVENANCE.json``: the command that built them, the hash of
the training code (engine.artifact_provenance), the library versions, and each artifact's
training time, size and SHA-256. When a home lacks an artifact, or holds a stale one,
engine.artifacts copies the shipped one into the home if its fingerprint is the one needed
(the same data, configuration and dependencies, as for any cache hit) and its weights match
their SHA-256; otherwise it trains as before. ``train --force`` always trains.

scripts/ship_artifacts.py builds them (the scenario's full artifacts, trained in an empty home
with shipping off); tests/engine/test_shipped_artifacts.py checks that their fingerprints are
the current ones and, in the slow suite, that retraining reproduces them.

``$RECOURSE_STUDY_SHIPPED``: ``off`` never uses shipped artifacts; a folder path uses that
folder instead of the package's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from engine.artifact_cache import forget
from engine.artifact_store import metadata_path, sha256_hex, weights_path, write_atomic

SHIPPED_ENV = "RECOURSE_STUDY_SHIPPED"
PACKAGE_DIR = Path(__file__).resolve().parent / "shipped_artifacts"
PROVENANCE = "PROVENANCE.json"


def shipped_root() -> Path | None:
    """The folder of shipped artifacts (None: shipping is off)."""
    chosen = os.environ.get(SHIPPED_ENV, "")
    if chosen.lower() == "off":
        return None
    return Path(chosen).expanduser() if chosen else PACKAGE_DIR


def shipped_metadata(scenario_name: str, name: str) -> dict[str, Any] | None:
    """A shipped artifact's metadata when both its files exist and agree (SHA-256)."""
    root = shipped_root()
    if root is None:
        return None
    meta_file, weights = root / scenario_name / f"{name}.json", root / scenario_name / f"{name}.pt"
    try:
        meta = json.loads(meta_file.read_text())
        ok = meta.get("sha256") == sha256_hex(weights.read_bytes())
    except (OSError, json.JSONDecodeError):
        return None
    return meta if ok else None


def install_shipped(scenario_name: str, name: str, fingerprint: str) -> dict[str, Any] | None:
    """Copy the shipped artifact ``name`` into the home if its fingerprint is ``fingerprint``
    (the caller holds the artifact's lock); its metadata, or None when none fits."""
    meta = shipped_metadata(scenario_name, name)
    if meta is None or meta.get("fingerprint") != fingerprint:
        return None
    root = shipped_root()
    assert root is not None
    source = root / scenario_name
    write_atomic(weights_path(scenario_name, name), (source / f"{name}.pt").read_bytes())
    write_atomic(metadata_path(scenario_name, name), (source / f"{name}.json").read_bytes())
    forget(scenario_name, name)
    return meta


def shipped_seconds(scenario_name: str, name: str) -> float | None:
    """How long the shipped artifact took to train when it was built (an estimate of what
    training it again takes), or None."""
    meta = shipped_metadata(scenario_name, name)
    return None if meta is None else meta.get("seconds")
