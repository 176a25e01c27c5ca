"""A study's row in the store: registered once, and reopened only with the same protocol.

A study id in a database stands for one protocol (its SHA-256 fingerprint) and, for a
simulated study, one set of simulation settings; reopening it with another raises
``StudyMismatchError`` before anything is written. The study's random salt (for hashing
external ids and completion codes) is stored with it.
"""

from __future__ import annotations

import json
import os
import secrets
from typing import Any

from data import records
from data.store import Store
from protocols.context import now
from protocols.schema import Protocol

SALT_ENV = "RECOURSE_STUDY_SALT"


class StudyMismatchError(ValueError):
    """The store holds a study of this id run with a different protocol."""


def register_study(
    store: Store, study_id: str, protocol: Protocol, simulation: dict[str, Any] | None
) -> str:
    """Register the study in the store, or check that the stored one ran this protocol
    (and these simulation settings); the study's salt (``RECOURSE_STUDY_SALT`` overrides)."""
    fp = protocol.fingerprint()
    with store.lock:
        row = records.study_row(store, study_id)
        if row is None:
            salt = secrets.token_hex(16)
            with store.transaction() as tx:
                tx.insert("studies", [{
                    "study_id": study_id, "protocol_id": protocol.id,
                    "title": protocol.title, "scenario": protocol.scenario,
                    "source": "protocol", "protocol_json": protocol.canonical_json(),
                    "protocol_hash": fp, "seed": protocol.seed, "salt": salt,
                    "simulation_json": json.dumps(simulation) if simulation else None,
                    "created_at": now(),
                }])
            return os.environ.get(SALT_ENV) or salt
    if row["protocol_hash"] != fp:
        raise StudyMismatchError(
            f"study {study_id!r} in {store.path} was run with a different "
            f"protocol (hash {str(row['protocol_hash'])[:12]}, this one {fp[:12]}); use "
            "another study id or database"
        )
    if simulation is not None and row["simulation_json"] is not None:
        stored = json.loads(row["simulation_json"])
        if stored != json.loads(json.dumps(simulation)):
            raise StudyMismatchError(
                f"study {study_id!r} was simulated with other settings "
                f"({stored}); use another study id or database to change them"
            )
    return os.environ.get(SALT_ENV) or row["salt"]
