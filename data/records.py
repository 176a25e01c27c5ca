"""Named reads the study session needs (all SQL stays in ``data``).

Each function takes a ``Store`` (or a ``Transaction`` where it must see the transaction's
own writes) and returns plain dicts keyed by column name.
"""

from __future__ import annotations

from typing import Any

from data.store import Store, Transaction


def study_row(store: Store, study_id: str) -> dict[str, Any] | None:
    rows = store.query("SELECT * FROM studies WHERE study_id = ?", [study_id])
    return rows[0] if rows else None


def participant_by_token(store: Store, token_hash: str) -> dict[str, Any] | None:
    """(study_id, participant_id) holding a resume token (any token ever issued to them)."""
    rows = store.query(
        "SELECT study_id, participant_id FROM tokens WHERE token_hash = ?", [token_hash]
    )
    return rows[0] if rows else None


def participant_by_external(
    store: Store, study_id: str, external_hash: str
) -> dict[str, Any] | None:
    """(participant_id, session_hash) of the study's participant with this recruitment-id
    hash (the first, should there be several)."""
    rows = store.query(
        "SELECT participant_id, session_hash FROM participants WHERE study_id = ? AND "
        "external_id_hash = ? ORDER BY seq LIMIT 1",
        [study_id, external_hash],
    )
    return rows[0] if rows else None


def next_seq(tx: Transaction, study_id: str) -> int:
    """The next free sequence number of a study (call under ``Store.lock``)."""
    rows = tx.query(
        "SELECT coalesce(max(seq) + 1, 0) AS n FROM participants WHERE study_id = ?", [study_id]
    )
    return int(rows[0]["n"])


def next_consent_seq(tx: Transaction, study_id: str) -> int:
    """The next free consent number of a study (the unique index on (study_id,
    consent_seq) turns a concurrent taker into a write conflict)."""
    rows = tx.query(
        "SELECT coalesce(max(consent_seq) + 1, 0) AS n FROM participants WHERE study_id = ?",
        [study_id],
    )
    return int(rows[0]["n"])


def participants_bundle(
    store: Store, study_id: str, participant_ids: list[str]
) -> dict[str, dict[str, Any]]:
    """Per participant: its ``participant`` row, ``profile``, ``elicitation`` and ``plans``."""
    if not participant_ids:
        return {}
    where = "study_id = ? AND participant_id IN (SELECT unnest(?::VARCHAR[]))"
    params = [study_id, list(participant_ids)]
    out: dict[str, dict[str, Any]] = {}
    for row in store.query(f"SELECT * FROM participants WHERE {where}", params):
        out[row["participant_id"]] = {
            "participant": row, "profile": None, "elicitation": None, "plans": []
        }
    for row in store.query(f"SELECT * FROM profiles WHERE {where}", params):
        out[row["participant_id"]]["profile"] = row
    for row in store.query(f"SELECT * FROM elicitations WHERE {where}", params):
        out[row["participant_id"]]["elicitation"] = row
    for row in store.query(f"SELECT * FROM plans WHERE {where} ORDER BY position", params):
        out[row["participant_id"]]["plans"].append(row)
    return out


def participant_index(store: Store, study_id: str) -> list[dict[str, Any]]:
    """(participant_id, seq, status, source) of every participant of a study, by seq."""
    return store.query(
        "SELECT participant_id, seq, status, source FROM participants WHERE study_id = ? "
        "ORDER BY seq",
        [study_id],
    )


def study_counts(store: Store, study_id: str) -> dict[str, Any]:
    """participants, complete, plans, ratings, comparisons (counts) and mean_acceptance,
    mean_action (None without ratings) of a study."""
    row = store.query(
        """SELECT
             (SELECT count(*) FROM participants WHERE study_id = ?) AS participants,
             (SELECT count(*) FROM participants WHERE study_id = ? AND status = 'complete')
               AS complete,
             (SELECT count(*) FROM plans WHERE study_id = ?) AS plans,
             (SELECT count(*) FROM ratings WHERE study_id = ?) AS ratings,
             (SELECT count(*) FROM comparisons WHERE study_id = ?) AS comparisons,
             (SELECT avg(acceptance) FROM ratings WHERE study_id = ?) AS mean_acceptance,
             (SELECT avg(action) FROM ratings WHERE study_id = ?) AS mean_action""",
        [study_id] * 7,
    )[0]
    return {k: (None if v is None else float(v) if k.startswith("mean_") else int(v))
            for k, v in row.items()}
