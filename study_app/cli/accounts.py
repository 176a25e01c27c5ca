"""`recourse-study accounts`: researcher accounts with roles (data.accounts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from study_app.cli.apps import app
from study_app.cli.choices import Role
from study_app.cli.output import emit, err, fail, json_file_option, json_option
from study_app.cli.researcher import PASSWORD_ENV, run_action

accounts_app = typer.Typer(
    help="Researcher accounts and their roles.\n\nRoles: viewer (dashboard progress), "
    "exporter (also export), admin (also withdraw participants, back up). Without accounts "
    "the dashboard uses its single password (a one-person pilot).", no_args_is_help=True)
app.add_typer(accounts_app, name="accounts")

_DB = typer.Option(..., help="The study database: a DuckDB file or postgresql://...")
_NAME = typer.Option(..., "--account", help="The account name.")
_ROLE = typer.Option(..., help="What the account may do (the roles above).")


def _new_password(json_out: bool) -> str:
    import os
    import sys

    given = os.environ.get(PASSWORD_ENV)
    if given is None:
        if not sys.stdin.isatty():
            fail(f"set the new password in {PASSWORD_ENV} (or run on a terminal to type it)",
                 2, json_out=json_out)
        given = typer.prompt("new password", hide_input=True, confirmation_prompt=True,
                             err=True)
    return given


def _change(db: str, args: dict[str, Any], json_out: bool, json_file: Path | None) -> None:
    doc = run_action(db, "accounts", args, None, json_out)
    emit(doc, json_out=json_out, json_file=json_file, human=lambda: err.print(
        f"{doc['change']}: {doc.get('name')} "
        f"{('(' + doc['role'] + ')') if doc.get('role') else ''}", highlight=False,
        markup=False))


@accounts_app.command("add")
def add(db: str = _DB, account: str = _NAME, role: Role = _ROLE,
        json_out: bool = json_option(), json_file: Path | None = json_file_option()) -> None:
    """Add a researcher account.

    The password: at least 12 characters, from RECOURSE_STUDY_PASSWORD or typed twice;
    stored as a scrypt hash. JSON: name, role, change, account (who acted:
    local:<user>), via."""
    _change(db, {"change": "add", "name": account, "role": role,
                 "new_password": _new_password(json_out)}, json_out, json_file)


@accounts_app.command("remove")
def remove(db: str = _DB, account: str = _NAME, json_out: bool = json_option(),
           json_file: Path | None = json_file_option()) -> None:
    """Remove an account.

    JSON: name, role (it had), change, account, via."""
    _change(db, {"change": "remove", "name": account}, json_out, json_file)


@accounts_app.command("set-role")
def set_role(db: str = _DB, account: str = _NAME, role: Role = _ROLE,
             json_out: bool = json_option(), json_file: Path | None = json_file_option()
             ) -> None:
    """Change an account's role.

    JSON: name, role, change, account, via."""
    _change(db, {"change": "set-role", "name": account, "role": role}, json_out, json_file)


@accounts_app.command("set-password")
def set_password(db: str = _DB, account: str = _NAME, json_out: bool = json_option(),
                 json_file: Path | None = json_file_option()) -> None:
    """Change an account's password.

    From RECOURSE_STUDY_PASSWORD or typed twice. JSON: name, change, account, via."""
    _change(db, {"change": "set-password", "name": account,
                 "new_password": _new_password(json_out)}, json_out, json_file)


@accounts_app.command("list")
def list_(db: str = _DB, json_out: bool = json_option(),
          json_file: Path | None = json_file_option()) -> None:
    """List the accounts (never their password hashes).

    JSON: accounts [{account, role,
    created_at, updated_at}], change (list)."""
    doc = run_action(db, "accounts", {"change": "list"}, None, json_out)
    emit(doc, json_out=json_out, json_file=json_file, human=lambda: [
        err.print(f"{a['account']}: {a['role']}", highlight=False, markup=False)
        for a in doc["accounts"]] or err.print("no accounts (single-password mode)"))
