"""The researcher dashboard's password gate.

The password comes from the environment variable ``RECOURSE_STUDY_DASHBOARD_PASSWORD`` or,
failing that, from Streamlit secrets (``dashboard_password`` in .streamlit/secrets.toml). With
neither configured the dashboard stays locked for everyone: there is no default password.
"""

from __future__ import annotations

import hmac
import os

import streamlit as st

PASSWORD_ENV = "RECOURSE_STUDY_DASHBOARD_PASSWORD"
SECRET_KEY = "dashboard_password"
_SESSION_FLAG = "rs_dashboard_authenticated"


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


def password_matches(given: str, expected: str) -> bool:
    """Constant-time comparison of the typed password with the configured one."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def require_password() -> bool:
    """Render the login form unless this browser session is authenticated; True when it is."""
    expected = configured_password()
    if expected is None:
        st.error(
            "The researcher dashboard is locked: no password is configured. Set the "
            f"environment variable {PASSWORD_ENV} (or `{SECRET_KEY}` in Streamlit secrets) "
            "and restart the server."
        )
        return False
    if st.session_state.get(_SESSION_FLAG):
        return True
    with st.form("rs_dashboard_login"):
        given = st.text_input("Dashboard password", type="password", max_chars=256)
        submitted = st.form_submit_button("Sign in")
    if submitted:
        if password_matches(given, expected):
            st.session_state[_SESSION_FLAG] = True
            st.rerun()
        st.error("Wrong password.")
    return False


def sign_out() -> None:
    st.session_state.pop(_SESSION_FLAG, None)
