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

The withdrawal journal: a DuckDB store also appends each withdrawal (study, participant,
who asked, when, account; no answers) to ``<database>.withdrawals.jsonl`` beside the file
(``journal_path``), outside the database. A backup restored later (data.backup) re-applies
every withdrawal of the journal and of the database it replaces, so a person who withdrew
after the backup was taken stays withdrawn. A PostgreSQL store journals to the file named by
``RECOURSE_STUDY_WITHDRAWAL_JOURNAL`` when it is set (its restore also reads the
``withdrawals`` table it replaces).

Concurrency: the participant row is updated under a guard on the ``step`` read at the
start, so an answer committed meanwhile (another process) makes the withdrawal fail with
``WriteConflictError`` before anything is deleted (the caller retries), and an answer
computed before the withdrawal can no longer be written (its own guard sees step -1).
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
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
JOURNAL_ENV = "RECOURSE_STUDY_WITHDRAWAL_JOURNAL"
JOURNAL_SUFFIX = ".withdrawals.jsonl"


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


def answer_rows(store: Any, study_id: str, participant_id: str) -> dict[str, int]:
    """Rows of each table in ``ANSWER_TABLES`` the participant's answers made (what a
    withdrawal deletes); ``store``: a Store or an open Transaction."""
    return {table: int(store.query(f"SELECT count(*) AS n FROM {table} WHERE study_id = ? "
                                   "AND participant_id = ?", [study_id, participant_id]
                                   )[0]["n"]) for table in ANSWER_TABLES}


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


def journal_path(store: Store) -> Path | None:
    """Where the store's withdrawals are journaled (module docstring), or None."""
    path = getattr(store, "path", None)
    if store.backend == "duckdb" and path is not None and str(path) != ":memory:":
        return Path(f"{path}{JOURNAL_SUFFIX}")
    named = os.environ.get(JOURNAL_ENV, "")
    return Path(named) if named else None


def _journal(path: Path | None, record: dict[str, Any]) -> None:
    if path is None:
        return
    entry = {k: record[k] for k in ("study_id", "participant_id", "requested_by", "account")}
    entry["requested_at"] = record["requested_at"].isoformat()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")
        f.flush()
        os.fsync(f.fileno())


def read_journal(path: Path) -> list[dict[str, Any]]:
    """The journal's entries (module docstring), oldest first; [] without a journal. A torn
    last line (a crash while appending) is skipped."""
    if not path.is_file():
        return []
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return entries


def withdraw(store: Store, study_id: str, participant_id: str, requested_by: str,
             account: str | None = None, at: datetime | None = None) -> dict[str, Any]:
    """Delete the participant's answers and audit it, in one transaction (module
    docstring); the audit row as ``withdrawal_record`` returns it. ``account``: the
    researcher account that asked; ``at``: when it was asked (default now; a restore
    re-applying an earlier withdrawal passes its time). UnknownParticipantError,
    AlreadyWithdrawnError (the first withdrawal's record attached), WriteConflictError
    (an answer was committed meanwhile: nothing changed, try again)."""
    if requested_by not in REQUESTERS:
        raise ValueError(f"requested_by must be one of {', '.join(REQUESTERS)}, "
                         f"got {requested_by!r}")
    key = [study_id, participant_id]
    at = at or datetime.now(UTC).replace(tzinfo=None)
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
        counts = answer_rows(tx, study_id, participant_id)
        where = "WHERE study_id = ? AND participant_id = ?"
        for table in ANSWER_TABLES:
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
            rows_deleted=sum(counts.values()), account=account)])
        record = withdrawal_record(tx, study_id, participant_id)
    assert record is not None
    _journal(journal_path(store), record)
    return record


def reapply(store: Store, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Withdraw again everyone in ``entries`` (journal entries or ``withdrawals`` rows) who
    is not withdrawn in ``store``: the (study_id, participant_id, rows_deleted) of each one
    re-applied. Participants the store never had are skipped (nothing of them to delete)."""
    done = []
    seen: set[tuple[str, str]] = set()
    for e in entries:
        key = (e["study_id"], e["participant_id"])
        if key in seen:
            continue
        seen.add(key)
        at = e["requested_at"]
        at = datetime.fromisoformat(at) if isinstance(at, str) else at
        try:
            record = withdraw(store, *key, e["requested_by"], e.get("account"), at)
        except (UnknownParticipantError, AlreadyWithdrawnError):
            continue
        done.append({"study_id": key[0], "participant_id": key[1],
                     "rows_deleted": record["rows_deleted"]})
    return done
