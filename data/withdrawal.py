"""A participant's withdrawal: their answers deleted, the deletion audited, in one transaction.

``withdraw(store, study_id, participant_id, requested_by)`` deletes every row the
participant's answers made (``ANSWER_TABLES``: responses, profile, stated constraints,
plans, ratings, HARE comparisons, their events and, for a synthetic participant, the
simulation truth), keeps a minimal participant row with status ``withdrawn`` and writes one
``withdrawals`` row: who asked (``participant`` from the study page, ``researcher`` from
``recourse-study withdraw``), when, the status and page the participant was on, and how
many rows of each table were deleted. All of it commits together or not at all.

What stays, and why: the participant row without its answers (state emptied, ``step`` -1)
keeps the arrival and consent numbers, so nobody else's assignment moves, and the hashed
recruitment id and session, so the same recruitment link shows "you have withdrawn" instead
of starting the study again; their resume tokens stay private (never exported). Exports
leave withdrawn participants out (data.export); analyses never see them (their ratings are
gone).

Concurrency: the participant row is updated under a guard on the ``step`` read at the
start, so an answer committed meanwhile (another process) makes the withdrawal fail with
``WriteConflictError`` before anything is deleted (the caller retries), and an answer
computed before the withdrawal can no longer be written (its own guard sees step -1).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from data.columns import (
    COMPARISONS,
    ELICITATIONS,
    EVENTS,
    PARTICIPANTS,
    PLANS,
    PROFILES,
    RATINGS,
    RESPONSES,
    SIM_PARTICIPANTS,
    SIM_RATINGS,
    WITHDRAWALS,
)
from data.store import Store, StoreError

ANSWER_TABLES: tuple[str, ...] = tuple(t.name for t in (
    RESPONSES, PROFILES, ELICITATIONS, PLANS, RATINGS, COMPARISONS, EVENTS, SIM_PARTICIPANTS,
    SIM_RATINGS))
REQUESTERS = ("participant", "researcher")
WITHDRAWN = "withdrawn"
WITHDRAWN_STEP = -1


class WithdrawalError(StoreError):
    """A withdrawal that cannot be done as asked (nothing was changed)."""


class UnknownParticipantError(WithdrawalError):
    """No participant has this id or resume token."""


class AlreadyWithdrawnError(WithdrawalError):
    """The participant withdrew before; ``record`` is the audit row of that withdrawal."""

    def __init__(self, message: str, record: dict[str, Any]) -> None:
        super().__init__(message)
        self.record = record


def find_participant(store: Store, who: str, study_id: str | None = None,
                     token_hash: str | None = None) -> dict[str, Any]:
    """(study_id, participant_id, status, current_page) of the participant with id ``who``,
    or holding the resume token whose SHA-256 is ``token_hash`` (the caller hashes ``who``);
    ``study_id`` narrows the search. UnknownParticipantError names what was looked for; a
    participant id found in several studies asks for the study."""
    where = " AND p.study_id = ?" if study_id is not None else ""
    extra = [study_id] if study_id is not None else []
    rows = store.query(
        "SELECT p.study_id, p.participant_id, p.status, p.current_page FROM participants p "
        f"WHERE p.participant_id = ?{where}", [who, *extra])
    if not rows and token_hash is not None:
        rows = store.query(
            "SELECT p.study_id, p.participant_id, p.status, p.current_page FROM tokens t "
            "JOIN participants p ON p.study_id = t.study_id AND p.participant_id = "
            f"t.participant_id WHERE t.token_hash = ?{where}", [token_hash, *extra])
    if not rows:
        scope = f" in study {study_id!r}" if study_id is not None else ""
        raise UnknownParticipantError(
            f"no participant with id or resume token {who!r}{scope}; nothing was deleted")
    if len(rows) > 1:
        studies = ", ".join(sorted(r["study_id"] for r in rows))
        raise WithdrawalError(f"participant id {who!r} is in several studies ({studies}); "
                              "name one with --study; nothing was deleted")
    return rows[0]


def withdrawal_record(store: Any, study_id: str, participant_id: str) -> dict[str, Any] | None:
    """The audit row of the participant's withdrawal (``rows``: table -> rows deleted), or
    None. ``store``: a Store or an open Transaction."""
    rows = store.query("SELECT * FROM withdrawals WHERE study_id = ? AND participant_id = ?",
                       [study_id, participant_id])
    if not rows:
        return None
    out = dict(rows[0])
    out["rows"] = json.loads(out.pop("rows_json"))
    return out


def withdraw(store: Store, study_id: str, participant_id: str, requested_by: str
             ) -> dict[str, Any]:
    """Delete the participant's answers and audit it, in one transaction (module
    docstring); the audit row as ``withdrawal_record`` returns it. UnknownParticipantError,
    AlreadyWithdrawnError (the first withdrawal's record attached), WriteConflictError
    (an answer was committed meanwhile: nothing changed, try again)."""
    if requested_by not in REQUESTERS:
        raise ValueError(f"requested_by must be one of {', '.join(REQUESTERS)}, "
                         f"got {requested_by!r}")
    key = [study_id, participant_id]
    at = datetime.now(UTC).replace(tzinfo=None)
    with store.transaction() as tx:
        found = tx.query("SELECT status, step, current_page FROM participants "
                         "WHERE study_id = ? AND participant_id = ?", key)
        if not found:
            raise UnknownParticipantError(f"no participant {participant_id!r} in study "
                                          f"{study_id!r}; nothing was deleted")
        before = found[0]
        if before["status"] == WITHDRAWN:
            first = withdrawal_record(tx, study_id, participant_id)
            when = first["requested_at"] if first else "earlier"
            raise AlreadyWithdrawnError(
                f"participant {participant_id!r} already withdrew ({when}); their answers "
                "were deleted then; nothing was changed", first or {})
        counts: dict[str, int] = {}
        where = "WHERE study_id = ? AND participant_id = ?"
        for table in ANSWER_TABLES:
            counts[table] = int(tx.query(f"SELECT count(*) AS n FROM {table} {where}",
                                         key)[0]["n"])
            if counts[table]:
                tx.execute(f"DELETE FROM {table} {where}", key)
        tx.update(PARTICIPANTS.name, ["study_id", "participant_id"], [PARTICIPANTS.row(
            study_id=study_id, participant_id=participant_id, status=WITHDRAWN,
            current_page="end", step=WITHDRAWN_STEP, state_json="{}", completion_code=None,
            updated_at=at)],
            guard="step", expected=[before["step"]])
        tx.insert(WITHDRAWALS.name, [WITHDRAWALS.row(
            study_id=study_id, participant_id=participant_id, requested_by=requested_by,
            requested_at=at, status_before=before["status"],
            page_before=before["current_page"], rows_json=json.dumps(counts),
            rows_deleted=sum(counts.values()))])
        record = withdrawal_record(tx, study_id, participant_id)
    assert record is not None
    return record
