"""A signed, expiring dashboard session token, kept in a browser cookie so that a reload (a
new Streamlit session) keeps the researcher signed in until it expires.

    token = "<expires>.<nonce>.<signature>"
    signature = base64url(HMAC-SHA256(key, "<expires>.<nonce>"))
    key = HMAC-SHA256(server secret, "recourse-study dashboard session" NUL password)

``expires`` is a Unix time (``SESSION_HOURS`` after the sign-in), ``nonce`` 16 random bytes.
The server secret is ``RECOURSE_STUDY_DASHBOARD_SECRET`` (at least 32 characters; the same
for every process of a study) or, without it, 32 random bytes drawn when the process
starts (a restart then signs every researcher out). Mixing the password into the key means
a new password invalidates every token. The token carries no password and nothing of the
study; signing out revokes its nonce in this process and deletes the cookie.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import threading
import time

SECRET_ENV = "RECOURSE_STUDY_DASHBOARD_SECRET"
HOURS_ENV = "RECOURSE_STUDY_DASHBOARD_SESSION_HOURS"
SESSION_HOURS = 8.0
COOKIE = "rs_dashboard_session"
MIN_SECRET_CHARS = 32
_PROCESS_SECRET = secrets.token_bytes(32)
_REVOKED: set[str] = set()
_LOCK = threading.Lock()


class SecretError(ValueError):
    """The configured server secret is too short."""


def server_secret() -> bytes:
    """``RECOURSE_STUDY_DASHBOARD_SECRET`` or this process' random secret."""
    env = os.environ.get(SECRET_ENV, "")
    if not env:
        return _PROCESS_SECRET
    if len(env) < MIN_SECRET_CHARS:
        raise SecretError(f"{SECRET_ENV} has {len(env)} characters; it needs at least "
                          f"{MIN_SECRET_CHARS}")
    return env.encode("utf-8")


def session_hours() -> float:
    """How long a token stays valid (``RECOURSE_STUDY_DASHBOARD_SESSION_HOURS``)."""
    try:
        value = float(os.environ.get(HOURS_ENV, "") or SESSION_HOURS)
    except ValueError:
        return SESSION_HOURS
    return value if value > 0 else SESSION_HOURS


def _key(password: str) -> bytes:
    return hmac.new(server_secret(), b"recourse-study dashboard session\0"
                    + password.encode("utf-8"), hashlib.sha256).digest()


def _sign(password: str, body: str) -> str:
    mac = hmac.new(_key(password), body.encode("ascii"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")


def issue(password: str, now: float | None = None) -> str:
    """A new token valid for ``session_hours()`` from ``now`` (Unix time)."""
    expires = int((time.time() if now is None else now) + 3600 * session_hours())
    body = f"{expires}.{secrets.token_urlsafe(16)}"
    return f"{body}.{_sign(password, body)}"


def verify(token: str | None, password: str, now: float | None = None) -> bool:
    """The token was signed by this server with this password, has not expired and was not
    revoked (signature compared in constant time)."""
    if not token or token.count(".") != 2 or len(token) > 200:
        return False
    expires, nonce, signature = token.split(".")
    if not expires.isdigit():
        return False
    if not hmac.compare_digest(signature.encode(), _sign(password, f"{expires}.{nonce}")
                               .encode()):
        return False
    with _LOCK:
        if nonce in _REVOKED:
            return False
    return int(expires) > (time.time() if now is None else now)


def expires_at(token: str) -> int:
    """The Unix time a (verified) token expires."""
    return int(token.split(".")[0])


def revoke(token: str | None) -> None:
    """Refuse this token from now on (in this process; the cookie is deleted too)."""
    if token and token.count(".") == 2:
        with _LOCK:
            _REVOKED.add(token.split(".")[1])


def cookie_script(token: str | None, account: str | None = None) -> str:
    """The script that stores ``token`` in the session cookie (SameSite=Strict, Secure on
    https, expiring with it), or deletes the cookie for None. With a researcher ``account``
    the cookie holds ``<account>!<token>`` (study_app.web.auth)."""
    if token is None:
        value, age = "", 0
    else:
        value = f"{account}!{token}" if account else token
        age = max(0, expires_at(token) - int(time.time()))
    cookie = json.dumps(f"{COOKIE}={value}; Max-Age={age}; Path=/; SameSite=Strict")
    return (f"<script>document.cookie = {cookie} + (location.protocol === 'https:' ? "
            "'; Secure' : '');</script>")
