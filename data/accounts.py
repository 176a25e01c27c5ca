"""Researcher accounts with roles, and the audit of what researchers did.

Roles are ordered: ``viewer`` (the dashboard's progress) < ``exporter`` (also export) <
``admin`` (also withdraw participants, back up and restore). ``require(role, needed)``
refuses an action above an account's role with ``RoleError`` (naming both roles).

Passwords are stored as scrypt hashes (RFC 7914, ``hashlib.scrypt``):

    password_hash = "scrypt$<n>$<r>$<p>$<salt, base64>$<key, base64>"
    key = scrypt(password, salt, n, r, p, dklen=32), salt = 16 random bytes

with n = 2**14, r = 8, p = 1 (about 16 MB of memory per check). ``check_password`` recomputes
the key with the stored parameters and compares in constant time.

Every sign-in, export, withdrawal, backup, restore and account change is one
``researcher_actions`` row (``record_action``): when, which account, what, how (dashboard, the
command line on a stopped study, or the command line through the running server) and a
JSON detail without any participant answer. Both tables are private (never exported).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from datetime import UTC, datetime
from typing import Any

from data.columns import RESEARCHER_ACCOUNTS, RESEARCHER_ACTIONS
from data.store import Store, StoreError

ROLES: tuple[str, ...] = ("viewer", "exporter", "admin")
ACTIONS: tuple[str, ...] = ("sign_in", "export", "withdraw", "backup", "restore", "accounts")
VIAS: tuple[str, ...] = ("dashboard", "cli", "server")
MIN_PASSWORD_CHARS = 12
SCRYPT_N, SCRYPT_R, SCRYPT_P, KEY_BYTES = 2**14, 8, 1, 32


class AccountError(StoreError):
    """An account that does not exist, exists already, or a bad role or password."""


class RoleError(AccountError):
    """The account's role does not allow the action."""


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def hash_password(password: str) -> str:
    """The stored form of ``password`` (module docstring)."""
    salt = secrets.token_bytes(16)
    key = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=SCRYPT_N, r=SCRYPT_R,
                         p=SCRYPT_P, dklen=KEY_BYTES)
    b64 = base64.b64encode
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${b64(salt).decode()}${b64(key).decode()}"


def check_password(password: str, stored: str) -> bool:
    """``password`` matches the stored hash (constant-time comparison)."""
    try:
        scheme, n, r, p, salt, key = stored.split("$")
        if scheme != "scrypt":
            return False
        want = base64.b64decode(key)
        got = hashlib.scrypt(password.encode("utf-8"), salt=base64.b64decode(salt), n=int(n),
                             r=int(r), p=int(p), dklen=len(want))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, want)


def check_role(role: str) -> str:
    if role not in ROLES:
        raise AccountError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    return role


def require(account: str, role: str, needed: str) -> None:
    """RoleError unless ``role`` is ``needed`` or above (module docstring)."""
    if ROLES.index(check_role(role)) < ROLES.index(check_role(needed)):
        raise RoleError(f"account {account!r} has the role {role}; this needs {needed} "
                        f"(recourse-study accounts set-role --account {account} --role "
                        f"{needed})")


def _check_name(account: str) -> str:
    name = account.strip()
    if not name or len(name) > 64 or not all(c.isalnum() or c in "._-@" for c in name):
        raise AccountError(f"account name {account!r}: 1-64 letters, digits or . _ - @")
    if name.startswith("local:") or name == "dashboard":
        raise AccountError(f"account name {account!r} is reserved")
    return name


def _check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_CHARS:
        raise AccountError(f"the password has {len(password)} characters; it needs at least "
                           f"{MIN_PASSWORD_CHARS}")


def has_accounts(store: Store) -> bool:
    """Any researcher account exists (else the single-password mode)."""
    return int(store.query("SELECT count(*) AS n FROM researcher_accounts")[0]["n"]) > 0


def list_accounts(store: Store) -> list[dict[str, Any]]:
    """account, role, created_at, updated_at of every account (never the hash)."""
    return store.query("SELECT account, role, created_at, updated_at FROM researcher_accounts "
                       "ORDER BY account")


def get_account(store: Store, account: str) -> dict[str, Any]:
    rows = store.query("SELECT * FROM researcher_accounts WHERE account = ?", [account])
    if not rows:
        raise AccountError(f"no researcher account {account!r}")
    return rows[0]


def add_account(store: Store, account: str, role: str, password: str) -> dict[str, Any]:
    """A new account; AccountError for a taken name, an unknown role or a short password."""
    name = _check_name(account)
    check_role(role)
    _check_password(password)
    at = _now()
    with store.transaction() as tx:
        if tx.query("SELECT account FROM researcher_accounts WHERE account = ?", [name]):
            raise AccountError(f"the account {name!r} exists already (set-role or password "
                               "change it)")
        tx.insert(RESEARCHER_ACCOUNTS.name, [RESEARCHER_ACCOUNTS.row(
            account=name, role=role, password_hash=hash_password(password), created_at=at,
            updated_at=at)])
    return {"account": name, "role": role}


def set_role(store: Store, account: str, role: str) -> dict[str, Any]:
    check_role(role)
    get_account(store, account)
    with store.transaction() as tx:
        tx.execute("UPDATE researcher_accounts SET role = ?, updated_at = ? WHERE account = ?",
                   [role, _now(), account])
    return {"account": account, "role": role}


def set_password(store: Store, account: str, password: str) -> dict[str, Any]:
    _check_password(password)
    get_account(store, account)
    with store.transaction() as tx:
        tx.execute("UPDATE researcher_accounts SET password_hash = ?, updated_at = ? "
                   "WHERE account = ?", [hash_password(password), _now(), account])
    return {"account": account}


def remove_account(store: Store, account: str) -> dict[str, Any]:
    row = get_account(store, account)
    with store.transaction() as tx:
        tx.execute("DELETE FROM researcher_accounts WHERE account = ?", [account])
    return {"account": account, "role": row["role"]}


def authenticate(store: Store, account: str, password: str) -> dict[str, Any]:
    """The account (account, role) when ``password`` is its password; AccountError (the
    same message for an unknown account and a wrong password)."""
    rows = store.query("SELECT account, role, password_hash FROM researcher_accounts "
                       "WHERE account = ?", [account])
    if not rows or not check_password(password, rows[0]["password_hash"]):
        raise AccountError(f"wrong account name or password for {account!r}")
    return {"account": rows[0]["account"], "role": rows[0]["role"]}


def record_action(store: Any, account: str, action: str, via: str,
                  detail: dict[str, Any] | None = None) -> None:
    """Append one audit row (module docstring); ``store``: a Store or an open Transaction."""
    if action not in ACTIONS or via not in VIAS:
        raise ValueError(f"unknown action {action!r} or via {via!r}")
    row = RESEARCHER_ACTIONS.row(acted_at=_now(), account=account, action=action, via=via,
                                 detail_json=json.dumps(detail or {}, default=str))
    if hasattr(store, "transaction"):
        with store.transaction() as tx:
            tx.insert(RESEARCHER_ACTIONS.name, [row])
    else:
        store.insert(RESEARCHER_ACTIONS.name, [row])


def actions(store: Store, limit: int = 100) -> list[dict[str, Any]]:
    """The latest audit rows, newest first."""
    rows = store.query("SELECT action_id, acted_at, account, action, via, detail_json FROM "
                       "researcher_actions ORDER BY action_id DESC LIMIT ?", [int(limit)])
    return [{**{k: v for k, v in r.items() if k != "detail_json"},
             "detail": json.loads(r["detail_json"] or "{}")} for r in rows]
