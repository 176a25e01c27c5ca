"""A study's row in the store: registered once, and reopened only with the same protocol.

A study id in a database stands for one protocol (its SHA-256 fingerprint) and, for a
simulated study, one set of simulation settings; reopening it with another raises
``StudyMismatchError`` before anything is written.

The salt (for hashing external ids and completion codes) is fixed when the study is
registered: a random one stored with the study, or - when ``RECOURSE_STUDY_SALT`` is set
then - that value, of which only a slow fingerprint (PBKDF2-SHA256) is stored, so the salt
itself stays out of the database. Reopening the study with another salt (the variable set
to a different value, set although the salt is stored, or missing although the study was
created with it) raises ``SaltMismatchError``: hashes made with two salts would never match,
and returning participants would silently become new ones.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from typing import Any

from data import records
from data.columns import STUDIES
from data.store import Store
from protocols.definition.schema import Protocol
from protocols.running.context import now

SALT_ENV = "RECOURSE_STUDY_SALT"
MIN_SALT_CHARS = 16
_CHECK_ROUNDS = 200_000


class StudyMismatchError(ValueError):
    """The store holds a study of this id run with a different protocol.

    >>> import tempfile
    >>> from pathlib import Path
    >>> from data import Store
    >>> from protocols import Study, load_protocol
    >>> store = Store(Path(tempfile.mkdtemp()) / "study.duckdb")
    >>> study = Study(load_protocol("tominaga-replication"), store)
    >>> from protocols import StudyMismatchError
    >>> other = load_protocol("tominaga-replication").model_copy(update={"seed": 99})
    >>> try:
    ...     Study(other, store)                # the same study id, another protocol
    ... except StudyMismatchError:
    ...     print("refused")
    refused
    """


class SaltMismatchError(StudyMismatchError):
    """The salt in use differs from the one the study was registered with."""


def salt_check(salt: str) -> str:
    """The stored fingerprint of an environment salt (slow to brute-force)."""
    return hashlib.pbkdf2_hmac("sha256", salt.encode(), b"recourse-study salt check",
                               _CHECK_ROUNDS).hex()


def _env_salt() -> str | None:
    salt = os.environ.get(SALT_ENV) or None
    if salt is not None and len(salt) < MIN_SALT_CHARS:
        raise SaltMismatchError(f"{SALT_ENV} must have at least {MIN_SALT_CHARS} characters "
                                f"(it has {len(salt)})")
    return salt


def _checked_salt(study_id: str, row: dict[str, Any], env: str | None) -> str:
    """The salt of a registered study; SaltMismatchError when ``env`` disagrees with it."""
    stored, check = row.get("salt"), row.get("salt_check")
    if stored:
        if env is not None and not hmac.compare_digest(env, stored):
            raise SaltMismatchError(
                f"study {study_id!r} has its own stored salt, but {SALT_ENV} is set to "
                f"another value; unset {SALT_ENV} to keep the study's salt")
        return str(stored)
    if check:
        if env is None:
            raise SaltMismatchError(
                f"study {study_id!r} was created with the salt in {SALT_ENV}; set it to the "
                "same value again")
        if not hmac.compare_digest(salt_check(env), str(check)):
            raise SaltMismatchError(
                f"{SALT_ENV} differs from the salt study {study_id!r} was created with; set "
                "it to the original value (hashes made with another salt would not match)")
        return env
    raise SaltMismatchError(f"study {study_id!r} has no salt; it cannot hash external ids")


def register_study(
    store: Store, study_id: str, protocol: Protocol, simulation: dict[str, Any] | None
) -> str:
    """Register the study in the store, or check that the stored one ran this protocol
    (and these simulation settings); the study's salt (module docstring)."""
    fp = protocol.fingerprint()
    env = _env_salt()
    with store.lock:
        row = records.study_row(store, study_id)
        if row is None:
            salt = env or secrets.token_hex(16)
            with store.transaction() as tx:
                tx.insert(STUDIES.name, [STUDIES.row(
                    study_id=study_id, protocol_id=protocol.id, title=protocol.title,
                    scenario=protocol.scenario, source="protocol",
                    protocol_json=protocol.canonical_json(), protocol_hash=fp,
                    seed=protocol.seed, salt=None if env else salt,
                    salt_check=salt_check(env) if env else None,
                    simulation_json=json.dumps(simulation) if simulation else None,
                    created_at=now(),
                )])
            return salt
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
    return _checked_salt(study_id, row, env)
