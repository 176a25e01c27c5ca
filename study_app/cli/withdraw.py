"""`recourse-study withdraw`: delete one participant's answers, with an audit record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from study_app.cli.apps import app
from study_app.cli.output import emit, err, fail, json_file_option, json_option
from study_app.cli.researcher import account_option, run_action


@app.command()
def withdraw(
    db: str = typer.Option(..., help="The study database: a DuckDB file or postgresql://..."),
    participant: str | None = typer.Option(
        None, help="The participant's id (participants.participant_id) or their resume token "
        "(the p=... of their study link)."),
    recruitment_id: str | None = typer.Option(
        None, "--recruitment-id", help="Instead: the recruitment platform's id of the "
        "participant (e.g. the PROLIFIC_PID of an e-mailed request), found by its salted "
        "hash; while `serve` runs the study."),
    study: str | None = typer.Option(None, help="Study id (needed only when the id is in "
                                     "several studies)."),
    account: str | None = account_option(),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Withdraw a participant and delete their answers.

    Withdraw a participant at the researcher's hand: delete every answer they gave (and
    what it made: profile, plans, ratings, events, simulation truth) and write an audit
    record (who asked: researcher, which account, when, rows deleted per table), in one
    transaction. Their study link then shows that they withdrew; exports and analyses leave
    them out. Needs an admin account when the database has accounts.

    While `recourse-study serve` runs the study on a DuckDB file, the request goes through
    the server (it owns the file; docs/deploy.md): the study keeps running. An
    unknown participant or a second withdrawal changes nothing (exit 2 / exit 1). A
    participant in the middle of a page is withdrawn; whatever they submit next is refused
    and stored nowhere.

    JSON: withdrawal_id, study_id, participant_id, requested_by (researcher), requested_at,
    status_before, page_before, rows {table: rows deleted}, rows_deleted, account, via (cli:
    a stopped study, server: through the running server), was_active (they were still
    answering); on an error: {error, ...}.
    """
    if (participant is None) == (recruitment_id is None):
        fail("name the participant with --participant (id or resume token) or "
             "--recruitment-id", 2, json_out=json_out)
    doc = run_action(db, "withdraw", {"participant": participant, "study": study,
                                      "recruitment_id": recruitment_id}, account, json_out)
    emit(doc, json_out=json_out, json_file=json_file, human=lambda: _report(doc))


def _report(doc: dict[str, Any]) -> None:
    rows = ", ".join(f"{t} {n}" for t, n in doc["rows"].items() if n)
    err.print(f"withdrew {doc['participant_id']} from {doc['study_id']}: {doc['rows_deleted']} "
              f"row(s) deleted ({rows or 'none'}); audit record {doc['withdrawal_id']} at "
              f"{doc['requested_at']} by {doc['account']} ({doc['via']})", highlight=False,
              markup=False)
    if doc["was_active"]:
        err.print(f"note: they were answering page {doc['page_before']}; whatever they submit "
                  "next is refused and stored nowhere", highlight=False, markup=False)
