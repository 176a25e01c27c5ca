"""The researcher dashboard's password gate: throttled, logged, idle-limited.

Two modes. With researcher accounts in the study database (data.accounts, ``recourse-study
accounts``), the dashboard asks for an account name and its password, and what the
researcher sees follows the account's role (``current_account``): viewer the progress,
exporter also the export, admin also the withdraw control. Without accounts (a one-person
pilot), one password, below, signs in as the account ``dashboard`` with every role. Every
sign-in is audited in ``researcher_actions`` with the account.

The password comes from the environment variable ``RECOURSE_STUDY_DASHBOARD_PASSWORD`` or,
failing that, from Streamlit secrets (``dashboard_password`` in .streamlit/secrets.toml). With
neither configured, or with one shorter than ``MIN_PASSWORD_CHARS``, the dashboard stays
locked for everyone (``serve`` refuses to start with a short one): there is no default.

Guessing is slowed and seen:

- every attempt waits ``delay(n)`` = min(``MAX_DELAY``, ``DELAY_STEP`` x n) seconds before
  it is checked, n being the failed attempts of the last ``FAILURE_WINDOW`` since the last
  success. The count comes from the sign-in log in the study database (data.logins), so it
  is shared by every browser tab and every server process on the store; within a process
  attempts are checked one at a time, so parallel tabs do not multiply the rate. 20 wrong
  passwords in a row wait 0 + 0.1 + ... + 1.9 = 19 s in all; from the 100th on, ``MAX_DELAY`` each.
- every attempt is logged: a row in ``dashboard_logins`` (time, right or wrong, the client
  address as the server saw it, the delay) and, for a failure, a warning in the server log.
  The dashboard shows the failures since the researcher's previous sign-in.
"""

from __future__ import annotations

import hmac
import logging
import os
import threading
import time
from datetime import UTC, datetime, timedelta

import streamlit as st

from data import accounts, logins
from data.store import Store
from study_app.web import auth_token

PASSWORD_ENV = "RECOURSE_STUDY_DASHBOARD_PASSWORD"
IDLE_ENV = "RECOURSE_STUDY_DASHBOARD_IDLE_MINUTES"
SECRET_KEY = "dashboard_password"
MIN_PASSWORD_CHARS = 12
DELAY_STEP = 0.1  # seconds per recent failure
MAX_DELAY = 10.0
FAILURE_WINDOW = timedelta(hours=1)
IDLE_MINUTES = 30.0
_SESSION_FLAG = "rs_dashboard_authenticated"
_ACTIVE_AT = "rs_dashboard_active_at"  # monotonic time of the last dashboard run
_SIGNED_IN_AT = "rs_dashboard_signed_in_at"
_TOKEN = "rs_dashboard_token"  # this session's signed token (auth_token)
_COOKIE_PENDING = "rs_dashboard_cookie"  # a cookie script to send on the next run
_CLEAR_COOKIE = "rs_dashboard_clear_cookie"  # set after a sign-out: delete the cookie
_ACCOUNT = "rs_dashboard_account"  # the signed-in account (``dashboard`` without accounts)
_ROLE = "rs_dashboard_role"
_SINGLE = "dashboard"
_ATTEMPT_LOCK = threading.Lock()  # one password check at a time in this process

log = logging.getLogger("study_app.web.auth")


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def configured_password() -> str | None:
    """The configured dashboard password, or None when none is set (empty counts as unset)."""
    env = os.environ.get(PASSWORD_ENV, "")
    if env:
        return env
    try:
        secret = st.secrets.get(SECRET_KEY)
    except (FileNotFoundError, st.errors.StreamlitSecretNotFoundError):
        return None
    return str(secret) if secret else None


def password_problem(password: str | None = None) -> str | None:
    """Why the configured password (or ``password``) is not acceptable; None when it is, or
    when none is configured (the dashboard is then simply locked)."""
    pw = configured_password() if password is None else password
    if pw is not None and len(pw) < MIN_PASSWORD_CHARS:
        return (f"the dashboard password ({PASSWORD_ENV}) has {len(pw)} characters; it needs "
                f"at least {MIN_PASSWORD_CHARS}")
    return None


def password_matches(given: str, expected: str) -> bool:
    """Constant-time comparison of the typed password with the configured one."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def delay(failures: int) -> float:
    """Seconds an attempt waits after ``failures`` recent failed ones (module docstring)."""
    return min(MAX_DELAY, DELAY_STEP * max(0, failures))


def idle_limit() -> float:
    """Minutes without activity after which a dashboard session is signed out."""
    value = os.environ.get(IDLE_ENV, "")
    try:
        return float(value) if value else IDLE_MINUTES
    except ValueError:
        return IDLE_MINUTES


def _client() -> str | None:
    """The client's address as the server saw it, loopback included (``st.context
    .ip_address`` hides 127.0.0.1 and ::1); None without a request (AppTest)."""
    try:
        address = st.context.ip_address
        if address is None:
            from streamlit.runtime.context import _get_client_context

            context = _get_client_context()
            address = context.remote_ip if context is not None else None
    except Exception:
        return None
    return address if isinstance(address, str) and address else None


def check_password(store: Store, given: str, expected: str, account: str | None = None
                   ) -> bool:
    """Wait the throttle's delay, check, log the attempt (module docstring). With
    ``account``, ``expected`` is that account's stored scrypt hash (data.accounts)."""
    with _ATTEMPT_LOCK:
        recent = logins.failures_since(store, now() - FAILURE_WINDOW)["failures"]
        wait = delay(recent)
        time.sleep(wait)
        ok = (accounts.check_password(given, expected) if account is not None
              else password_matches(given, expected))
        client = _client()
        logins.record_login(store, now(), ok, client, wait, account)
    if not ok:
        log.warning("dashboard sign-in failed (client %s; %d failures in the last %s, this "
                    "one waited %.1f s)", client or "unknown", recent + 1, FAILURE_WINDOW, wait)
    return ok


def idle_expired() -> bool:
    """The signed-in session has been idle longer than the limit."""
    last = st.session_state.get(_ACTIVE_AT)
    return last is not None and time.monotonic() - last > 60.0 * idle_limit()


def current_account() -> tuple[str, str]:
    """(account, role) of the signed-in researcher (module docstring)."""
    return (st.session_state.get(_ACCOUNT, _SINGLE), st.session_state.get(_ROLE, "admin"))


def require_password(store: Store) -> bool:
    """Render the login form unless this browser session is authenticated; True when it is
    (and it counts as activity).

    A sign-in stores a signed, expiring token in a cookie (study_app.web.auth_token), so a
    reload of the page keeps the researcher signed in until the token expires
    (``RECOURSE_STUDY_DASHBOARD_SESSION_HOURS``, default 8). A signed-in session ends on "Sign
    out", which clears everything the browser session held (and drops its download links),
    revokes the token and deletes the cookie, and after ``IDLE_MINUTES`` without activity (the
    same).
    """
    if accounts.has_accounts(store):
        return _require_account(store)
    expected = configured_password()
    problem = password_problem(expected) if expected is not None else None
    if expected is None or problem:
        st.error(
            "The researcher dashboard is locked: "
            + (problem if problem else "no password is configured")
            + f". Set the environment variable {PASSWORD_ENV} (or `{SECRET_KEY}` in Streamlit "
            f"secrets; at least {MIN_PASSWORD_CHARS} characters) and restart the server."
        )
        return False
    if st.session_state.get(_SESSION_FLAG):
        if _session_holds(expected):
            return True
    elif _resume(expected):
        return True
    _clear_cookie_if_asked()
    with st.form("rs_dashboard_login"):
        given = st.text_input("Dashboard password", type="password", max_chars=256)
        submitted = st.form_submit_button("Sign in")
    if submitted:
        if check_password(store, given, expected):
            token = auth_token.issue(expected)
            _signed_in(token, now())
            accounts.record_action(store, _SINGLE, "sign_in", "dashboard")
            st.session_state[_COOKIE_PENDING] = auth_token.cookie_script(token)
            st.rerun()
        st.error("Wrong password.")
    return False


def _stored_hash(store: Store, account: str | None) -> str | None:
    rows = store.query("SELECT password_hash FROM researcher_accounts WHERE account = ?",
                       [account or ""])
    return rows[0]["password_hash"] if rows else None


def _require_account(store: Store) -> bool:
    """``require_password`` in account mode: the token is signed with the account's stored
    hash (a new password signs every session of it out), the role is read on every run (a
    changed role counts at once), a removed account is signed out."""
    if st.session_state.get(_SESSION_FLAG) and st.session_state.get(_ACCOUNT) != _SINGLE:
        account = st.session_state.get(_ACCOUNT)
        if _session_holds(_stored_hash(store, account)):
            st.session_state[_ROLE] = accounts.get_account(store, account)["role"]
            return True
    elif _resume_account(store):
        return True
    _clear_cookie_if_asked()
    with st.form("rs_dashboard_login"):
        name = st.text_input("Account", max_chars=64)
        given = st.text_input("Password", type="password", max_chars=256)
        submitted = st.form_submit_button("Sign in")
    if submitted:
        stored = _stored_hash(store, name.strip())
        # an unknown account is checked against a dummy hash: it costs the same time
        if check_password(store, given, stored or _DUMMY_HASH, name.strip()) and stored:
            token = auth_token.issue(stored)
            _signed_in(token, now())
            found = accounts.get_account(store, name.strip())
            st.session_state[_ACCOUNT], st.session_state[_ROLE] = found["account"], found["role"]
            accounts.record_action(store, found["account"], "sign_in", "dashboard")
            st.session_state[_COOKIE_PENDING] = auth_token.cookie_script(token,
                                                                         found["account"])
            st.rerun()
        st.error("Wrong account name or password.")
    return False


_DUMMY_HASH = accounts.hash_password("no account has this password")


def _resume_account(store: Store) -> bool:
    """Sign this new browser session in from a valid ``account!token`` cookie."""
    try:
        value = st.context.cookies.get(auth_token.COOKIE)
    except Exception:  # no request (AppTest)
        return False
    if not isinstance(value, str):
        return False
    account, _, token = value.partition("!")
    if not _resume_with(token, _stored_hash(store, account)):
        return False
    st.session_state[_ACCOUNT] = account
    st.session_state[_ROLE] = accounts.get_account(store, account)["role"]
    return True


def _signed_in(token: str, at: datetime) -> None:
    st.session_state[_SESSION_FLAG] = True
    st.session_state[_TOKEN] = token
    st.session_state[_ACTIVE_AT] = time.monotonic()
    st.session_state[_SIGNED_IN_AT] = at


def _send_cookie() -> None:
    """Store the token in the browser's cookie (once, on the run after the sign-in)."""
    script = st.session_state.pop(_COOKIE_PENDING, None)
    if script:
        st.html(script, unsafe_allow_javascript=True)


def _resume(expected: str) -> bool:
    """Sign this new browser session in from a valid token cookie (a reload)."""
    try:
        token = st.context.cookies.get(auth_token.COOKIE)
    except Exception:  # no request (AppTest)
        return False
    return _resume_with(token, expected)


def _resume_with(token: str | None, secret: str | None) -> bool:
    """Sign in with a cookie's ``token`` when it is valid for ``secret`` (the password, or
    the account's stored hash; None: no such account), dated from when it was issued."""
    if secret is None or not auth_token.verify(token, secret):
        return False
    issued = auth_token.expires_at(token) - 3600 * auth_token.session_hours()
    _signed_in(token, datetime.fromtimestamp(issued, UTC).replace(tzinfo=None))
    return True


def _session_holds(secret: str | None) -> bool:
    """Whether a signed-in session still holds (then it counts as activity): not idle past
    the limit, its token valid for ``secret`` (None: the account is gone); otherwise it is
    signed out with a notice saying why."""
    if idle_expired():
        sign_out()
        st.info(f"You were signed out after {idle_limit():g} minutes without activity.")
        return False
    if secret is None or not auth_token.verify(st.session_state.get(_TOKEN), secret):
        sign_out()
        st.info("Your sign-in expired; please sign in again.")
        return False
    st.session_state[_ACTIVE_AT] = time.monotonic()
    _send_cookie()
    return True


def _clear_cookie_if_asked() -> None:
    """Delete the browser's sign-in cookie once after a sign-out asked for it."""
    if st.session_state.pop(_CLEAR_COOKIE, False):
        st.html(auth_token.cookie_script(None), unsafe_allow_javascript=True)


def signed_in_at() -> datetime | None:
    """When this session signed in (UTC)."""
    return st.session_state.get(_SIGNED_IN_AT)


def sign_out() -> None:
    """End the session: clear everything it held, drop its download links now, revoke its
    token and delete the cookie (on the next run of the page)."""
    auth_token.revoke(st.session_state.get(_TOKEN))
    for key in list(st.session_state.keys()):
        del st.session_state[key]
    st.session_state[_CLEAR_COOKIE] = True
    drop_downloads()


def drop_downloads() -> None:
    """Forget this browser session's download files (export zips, reports) at once, so their
    addresses stop working (Streamlit would drop them only after two more script runs)."""
    from streamlit.runtime import exists, get_instance
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not exists():
        return
    manager = get_instance().media_file_mgr
    manager.clear_session_refs(ctx.session_id)
    manager.remove_orphaned_files()  # marks this session's downloads ...
    manager.remove_orphaned_files()  # ... and deletes them
