"""The dashboard's password gate (AppTest, in-process): locked without a (long enough)
password, every attempt logged in the store, a growing delay, idle timeout, sign-out."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from data.store import Store
from study_app.web import auth
from study_app.web.auth import PASSWORD_ENV, password_matches

PASSWORD = "correct horse battery"


def _gate_app(db: str) -> None:
    import streamlit as st

    from data.store import Store
    from study_app.web.auth import require_password, sign_out

    with Store(db) as store:
        if require_password(store):
            st.markdown("SECRET DASHBOARD CONTENT")
            st.session_state["rs_secret"] = "held by the signed-in session"
            if st.button("Sign out"):
                sign_out()
                st.rerun()


def _texts(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown) + " ".join(e.value for e in at.error)


def _app(tmp_path: Path) -> AppTest:
    return AppTest.from_function(_gate_app, args=(str(tmp_path / "auth.duckdb"),),
                                 default_timeout=30).run()


def _attempt(at: AppTest, password: str) -> AppTest:
    at.text_input[0].input(password)
    return at.button[0].click().run()


def _logins(tmp_path: Path) -> list[dict]:
    with Store(tmp_path / "auth.duckdb") as store:
        return store.query("SELECT ok, delay_seconds FROM dashboard_logins ORDER BY login_id")


@pytest.mark.parametrize("password", [None, "short pass"])
def test_locked_without_a_long_enough_password(monkeypatch, tmp_path, password) -> None:
    if password is None:
        monkeypatch.delenv(PASSWORD_ENV, raising=False)
    else:
        monkeypatch.setenv(PASSWORD_ENV, password)
    at = _app(tmp_path)
    assert not at.exception
    assert "locked" in at.error[0].value
    if password is not None:
        assert "at least 12" in at.error[0].value
        assert auth.password_problem() is not None
    assert "SECRET" not in _texts(at)
    assert len(at.text_input) == 0


def test_wrong_passwords_are_refused_logged_and_slowed(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
    at = _app(tmp_path)
    for given in ("wrong", "", PASSWORD + " "):
        _attempt(at, given)
        assert "Wrong password." in [e.value for e in at.error]
        assert "SECRET" not in _texts(at)
    rows = _logins(tmp_path)
    assert [r["ok"] for r in rows] == [False, False, False]
    # the n-th attempt waited for the n-1 failures before it
    assert [r["delay_seconds"] for r in rows] == pytest.approx([0.0, 0.1, 0.2])
    _attempt(at, PASSWORD)  # the right one waits too (3 failures), then resets the count
    assert "SECRET DASHBOARD CONTENT" in _texts(at)
    assert _logins(tmp_path)[-1] == {"ok": True, "delay_seconds": pytest.approx(0.3)}
    with Store(tmp_path / "auth.duckdb") as store:
        from data.logins import failures_before, failures_since

        assert failures_since(store, auth.now() - auth.FAILURE_WINDOW)["failures"] == 0
        assert failures_before(store, auth.now()) == 3


def test_delay_grows_to_a_cap() -> None:
    assert [auth.delay(n) for n in (0, 1, 5)] == pytest.approx([0.0, 0.1, 0.5])
    assert auth.delay(10_000) == auth.MAX_DELAY
    assert sum(auth.delay(n) for n in range(20)) >= 10.0  # 20 wrong passwords: >= 10 s


def test_right_password_admits_persists_and_signs_out(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
    at = _attempt(_app(tmp_path), PASSWORD)
    assert "SECRET DASHBOARD CONTENT" in _texts(at)
    at.run()  # a rerun in the same browser session stays signed in
    assert "SECRET DASHBOARD CONTENT" in _texts(at)
    assert at.session_state["rs_secret"]
    next(b for b in at.button if b.label == "Sign out").click().run()
    assert "SECRET" not in _texts(at) and len(at.text_input) == 1
    assert "rs_secret" not in at.session_state  # sign-out clears everything


def test_idle_session_is_signed_out(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
    monkeypatch.setenv(auth.IDLE_ENV, "0.05")  # 3 s
    at = _attempt(_app(tmp_path), PASSWORD)
    assert "SECRET DASHBOARD CONTENT" in _texts(at)
    time.sleep(3.5)
    at.run()
    assert "SECRET" not in _texts(at)
    assert any("without activity" in i.value for i in at.info)
    assert "rs_secret" not in at.session_state


def test_password_matches_is_exact() -> None:
    assert password_matches("abc", "abc")
    assert not password_matches("abc ", "abc")
    assert not password_matches("ABC", "abc")
    assert password_matches("ünïcode", "ünïcode")
