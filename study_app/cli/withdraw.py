"""`recourse-study withdraw`: delete one participant's answers, with an audit record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from study_app.cli.apps import app
from study_app.cli.output import emit, err, fail, json_file_option, json_option

RETRIES = 3


@app.command()
def withdraw(
    db: str = typer.Option(..., help="The study database: a DuckDB file or postgresql://..."),
    participant: str = typer.Option(
        ..., help="The participant's id (participants.participant_id) or their resume token "
        "(the p=... of their study link)."),
    study: str | None = typer.Option(None, help="Study id (needed only when the id is in "
                                     "several studies)."),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Withdraw a participant at the researcher's hand: delete every answer they gave (and
    what it made: profile, plans, ratings, events, simulation truth) and write an audit
    record (who asked: researcher, when, rows deleted per table), in one transaction. Their
    study link then shows that they withdrew; exports and analyses leave them out.

    A DuckDB file can be changed by one process at a time: run this while the study's
    server is stopped (a participant can withdraw themselves from any study page while it
    runs), or use PostgreSQL. An unknown participant or a second withdrawal changes nothing
    (exit 2 / exit 1). A participant in the middle of a page is withdrawn; whatever they
    submit next is refused and stored nowhere.

    JSON: withdrawal_id, study_id, participant_id, requested_by (researcher), requested_at,
    status_before, page_before, rows {table: rows deleted}, rows_deleted, was_active
    (they were still answering); on an error: {error, ...}.
    """
    from data import withdrawal
    from data.store import Store, StoreError, WriteConflictError, is_postgres
    from protocols.running.participation import hash_token

    if not is_postgres(db) and not Path(db).exists():
        fail(f"no database at {db}", 2, json_out=json_out)
    try:
        store = Store(db)
    except StoreError as e:
        fail(f"{e}; a running study server holds a DuckDB file: stop it first, or let the "
             "participant withdraw from the study page", 2, json_out=json_out)
    try:
        found = withdrawal.find_participant(store, participant.strip(), study,
                                            token_hash=hash_token(participant.strip()))
        for attempt in range(RETRIES):
            try:
                record = withdrawal.withdraw(store, found["study_id"],
                                             found["participant_id"], "researcher")
                break
            except WriteConflictError:  # an answer was committed meanwhile: read again
                if attempt == RETRIES - 1:
                    raise
    except withdrawal.AlreadyWithdrawnError as e:
        fail(e, 1, json_out=json_out, details={"withdrawal": _plain(e.record)})
    except (withdrawal.WithdrawalError, WriteConflictError) as e:
        fail(e, 2 if isinstance(e, withdrawal.WithdrawalError) else 1, json_out=json_out)
    except StoreError as e:
        fail(e, 2, json_out=json_out)
    finally:
        store.close()
    doc = {**_plain(record), "was_active": record["status_before"] == "active"}
    emit(doc, json_out=json_out, json_file=json_file, human=lambda: _report(doc))


def _plain(record: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in record.items()}


def _report(doc: dict[str, Any]) -> None:
    rows = ", ".join(f"{t} {n}" for t, n in doc["rows"].items() if n)
    err.print(f"withdrew {doc['participant_id']} from {doc['study_id']}: {doc['rows_deleted']} "
              f"row(s) deleted ({rows or 'none'}); audit record {doc['withdrawal_id']} at "
              f"{doc['requested_at']}", highlight=False, markup=False)
    if doc["was_active"]:
        err.print(f"note: they were answering page {doc['page_before']}; whatever they submit "
                  "next is refused and stored nowhere", highlight=False, markup=False)
