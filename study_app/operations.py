"""The researcher's actions on a study database: withdraw, export, back up.

One function per action serves every way of reaching it: the command line on a stopped
study (``via="cli"``), the command line through the running server (``via="server"``: the
server calls the same function on its own connection, study_app.live_server) and the
dashboard (``via="dashboard"``). Each checks the account's role (data.accounts: export needs
exporter, withdraw and backup need admin), does the work and writes one
``researcher_actions`` audit row with the account.

Managing the accounts themselves (``accounts``: add, remove, set a role or a password,
list) is the database owner's: the operating-system user who can open the file (or, on a
served study, read the server's control file), audited as ``local:<user>``.

Who acts (``actor``): with researcher accounts in the database, an account name and its
password; without any (a one-person pilot), the command line acts as ``local:<user>`` (the
operating-system user, who owns the database file) and the dashboard as ``dashboard`` (its
single password), both with every role.

Errors are ``OperationError`` (message, exit code, details) so every caller reports them
the same way: 2 for bad input (an unknown participant, a wrong role or password), 1 for a
refusal of a valid request (already withdrawn, a conflicting answer).
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from data import accounts
from data.store import Store, StoreError, WriteConflictError

if TYPE_CHECKING:
    from protocols.running.session import Study

RETRIES = 3
NEEDS: dict[str, str] = {"withdraw": "admin", "export": "exporter", "backup": "admin",
                         "accounts": "owner"}


class OperationError(Exception):
    """An action refused or failed; nothing was changed."""

    def __init__(self, message: str, code: int = 2, details: dict[str, Any] | None = None
                 ) -> None:
        super().__init__(message)
        self.code = code
        self.details = details or {}


@dataclass(frozen=True)
class Actor:
    account: str
    role: str


@dataclass
class Request:
    """An action with its arguments (plain JSON values: it travels to the server)."""

    op: str
    args: dict[str, Any] = field(default_factory=dict)
    account: str | None = None
    password: str | None = None


def local_account() -> str:
    return f"local:{getpass.getuser()}"


def actor(store: Store, account: str | None, password: str | None, via: str) -> Actor:
    """Who acts (module docstring); OperationError for a wrong name or password."""
    if not accounts.has_accounts(store):
        if account and account not in (local_account(), "dashboard"):
            raise OperationError(f"no researcher account {account!r}: this database has no "
                                 "accounts (recourse-study accounts add)", 2)
        return Actor(account or ("dashboard" if via == "dashboard" else local_account()),
                     "admin")
    if not account:
        raise OperationError("this database has researcher accounts: name yours with "
                             "--account (its password in RECOURSE_STUDY_PASSWORD, or typed "
                             "when asked)", 2)
    try:
        found = accounts.authenticate(store, account, password or "")
    except accounts.AccountError as e:
        raise OperationError(str(e), 2) from None
    return Actor(found["account"], found["role"])


def perform(store: Store, request: Request, via: str, who: Actor | None = None,
            study: Study | None = None) -> dict[str, Any]:
    """Check the role, do ``request`` on ``store``, audit it; the action's result.
    ``study``: the served study on ``store`` (the server, the dashboard): its participants
    are withdrawn through it (their cached sessions forgotten, serialized with their
    answers), and recruitment ids are looked up with its salt."""
    if request.op not in NEEDS:
        raise OperationError(f"unknown action {request.op!r}; expected one of "
                             f"{', '.join(NEEDS)}", 2)
    if NEEDS[request.op] == "owner":
        who = Actor(local_account(), "admin")
    who = who or actor(store, request.account, request.password, via)
    try:
        accounts.require(who.account, who.role, NEEDS[request.op].replace("owner", "admin"))
    except accounts.RoleError as e:
        raise OperationError(str(e), 2) from None
    result = _ACTIONS[request.op](store, request.args, who, study)
    detail = {k: v for k, v in result.items() if k in _AUDITED}
    accounts.record_action(store, who.account, request.op, via,
                           {**detail, **{k: request.args.get(k) for k in _ARGS[request.op]}})
    return {**result, "account": who.account, "via": via}


# what of a result and of the arguments goes into the audit row (never an answer)
_AUDITED = ("study_id", "participant_id", "rows_deleted", "tables", "sha256", "file")
# (never a resume token or a raw recruitment id: the withdrawal's result names the participant)
_ARGS = {"withdraw": (), "export": ("out", "format", "free_text", "linkage"),
         "backup": ("path",), "accounts": ("change", "name", "role")}


def _plain(record: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in record.items()}


def find(store: Store, args: dict[str, Any], study: Study | None) -> dict[str, Any]:
    """The participant named by ``args`` (``participant``: id or resume token; or
    ``recruitment_id``: the recruitment platform's id, found by its salted hash in the
    served study): study_id, participant_id, status, current_page."""
    from data import records, withdrawal
    from protocols.running.participation import hash_token

    recruited = str(args.get("recruitment_id") or "").strip()
    if recruited:
        if study is None:
            raise OperationError("a recruitment id is looked up by the running server or the "
                                 "dashboard (its hash needs the study's salt): give the "
                                 "participant id instead", 2)
        row = records.participant_by_external(store, study.study_id,
                                              study.hash_external(recruited))
        if row is None:
            raise OperationError(f"no participant with recruitment id {recruited!r} in study "
                                 f"{study.study_id!r}; nothing was deleted", 2)
        args = {**args, "participant": row["participant_id"], "study": study.study_id}
    who_text = str(args.get("participant") or "").strip()
    if not who_text:
        raise OperationError("name the participant: their id, resume token or recruitment "
                             "id", 2)
    try:
        return withdrawal.find_participant(store, who_text, args.get("study"),
                                           token_hash=hash_token(who_text))
    except withdrawal.WithdrawalError as e:
        raise OperationError(str(e), 2) from None


def _withdraw(store: Store, args: dict[str, Any], who: Actor,
              study: Study | None) -> dict[str, Any]:
    from data import withdrawal

    found = find(store, args, study)
    try:
        for attempt in range(RETRIES):
            try:
                if study is not None and found["study_id"] == study.study_id:
                    record = study.withdraw(found["participant_id"], "researcher",
                                            who.account)
                else:
                    record = withdrawal.withdraw(store, found["study_id"],
                                                 found["participant_id"], "researcher",
                                                 account=who.account)
                break
            except WriteConflictError:  # an answer was committed meanwhile: read again
                if attempt == RETRIES - 1:
                    raise
    except withdrawal.AlreadyWithdrawnError as e:
        raise OperationError(str(e), 1, {"withdrawal": _plain(e.record)}) from None
    except withdrawal.WithdrawalError as e:
        raise OperationError(str(e), 2) from None
    except WriteConflictError as e:
        raise OperationError(str(e), 1) from None
    doc = _plain(record)
    return {**doc, "was_active": doc["status_before"] == "active"}


def _export(store: Store, args: dict[str, Any], who: Actor,
            study: Study | None) -> dict[str, Any]:
    from data.export import FORMATS, export

    fmt = args.get("format", "parquet")
    if fmt not in FORMATS:
        raise OperationError(f"--format: expected {' or '.join(FORMATS)}, got {fmt!r}", 2)
    if args.get("coding") and not args.get("free_text"):
        raise OperationError("--coding-sheet holds what participants typed: add --free-text", 2)
    out = Path(str(args.get("out") or ""))
    if not out.is_absolute():
        raise OperationError(f"the export folder must be an absolute path, got {out}", 2)
    try:
        return export(store, out, fmt, free_text=bool(args.get("free_text")),
                      linkage=bool(args.get("linkage")), coding=bool(args.get("coding")))
    except (ValueError, OSError) as e:
        raise OperationError(str(e), 2) from None


def _backup(store: Store, args: dict[str, Any], who: Actor,
            study: Study | None) -> dict[str, Any]:
    from data.backup import backup

    path = Path(str(args.get("path") or ""))
    if not path.is_absolute():
        raise OperationError(f"the backup file must be an absolute path, got {path}", 2)
    try:
        return backup(store, path, source=args.get("source"))
    except StoreError as e:
        raise OperationError(str(e), 2) from None


def _accounts(store: Store, args: dict[str, Any], who: Actor,
              study: Study | None) -> dict[str, Any]:
    change, name = args.get("change"), str(args.get("name") or "")
    try:
        if change == "list":
            listed = [_plain(a) for a in accounts.list_accounts(store)]
            return {"accounts": listed}
        if change == "add":
            done = accounts.add_account(store, name, str(args.get("role")),
                                        str(args.get("new_password") or ""))
        elif change == "remove":
            done = accounts.remove_account(store, name)
        elif change == "set-role":
            done = accounts.set_role(store, name, str(args.get("role")))
        elif change == "set-password":
            done = accounts.set_password(store, name, str(args.get("new_password") or ""))
        else:
            raise OperationError(f"unknown accounts change {change!r}", 2)
    except accounts.AccountError as e:
        raise OperationError(str(e), 2) from None
    return {"name": done["account"], "role": done.get("role"), "change": change}


_ACTIONS = {"withdraw": _withdraw, "export": _export, "backup": _backup,
            "accounts": _accounts}
