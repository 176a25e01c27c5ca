"""What the researcher's commands share: who acts (``--account``; its password from
``RECOURSE_STUDY_PASSWORD`` or typed when asked) and running an action on a study database,
stopped or served (study_app.live_server), with its errors reported the CLI's way."""

from __future__ import annotations

import os
import sys
from typing import Any

import typer

from study_app.cli.output import fail

PASSWORD_ENV = "RECOURSE_STUDY_PASSWORD"


def account_option() -> Any:
    return typer.Option(
        None, "--account", help="Your researcher account (recourse-study accounts), audited "
        f"with the action; its password from {PASSWORD_ENV} or typed when asked. Without "
        "accounts in the database: local:<your user name>.")


def password_for(account: str | None) -> str | None:
    """The account's password: the environment, else a hidden prompt on a terminal."""
    if account is None:
        return None
    given = os.environ.get(PASSWORD_ENV)
    if given is None and sys.stdin.isatty():
        given = typer.prompt(f"password of {account}", hide_input=True, err=True)
    return given


def run_action(db: str, op: str, args: dict[str, Any], account: str | None,
               json_out: bool) -> dict[str, Any]:
    """Run ``op`` on ``db`` (study_app.live_server.run); an OperationError exits with its
    code and message (and its details in the JSON)."""
    from study_app.live_server import run
    from study_app.operations import OperationError, Request

    try:
        return run(db, Request(op, args, account, password_for(account)))
    except OperationError as e:
        fail(e, e.code, json_out=json_out, details=e.details)
