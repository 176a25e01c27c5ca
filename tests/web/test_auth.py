"""The dashboard's password gate (AppTest, in-process)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from study_app.web.auth import PASSWORD_ENV, password_matches


def _gate_app() -> None:
    import streamlit as st

    from study_app.web.auth import require_password

    if require_password():
        st.markdown("SECRET DASHBOARD CONTENT")


def _texts(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown) + " ".join(e.value for e in at.error)


def test_refused_without_configured_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PASSWORD_ENV, raising=False)
    at = AppTest.from_function(_gate_app).run()
    assert not at.exception
    assert "locked" in at.error[0].value
    assert "SECRET" not in _texts(at)
    assert len(at.text_input) == 0


def test_wrong_password_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PASSWORD_ENV, "correct horse")
    at = AppTest.from_function(_gate_app).run()
    at.text_input[0].input("wrong")
    at.button[0].click().run()
    assert "Wrong password." in [e.value for e in at.error]
    assert "SECRET" not in _texts(at)
    # An empty password is wrong too.
    at.text_input[0].input("")
    at.button[0].click().run()
    assert "SECRET" not in _texts(at)


def test_right_password_admits_and_persists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PASSWORD_ENV, "correct horse")
    at = AppTest.from_function(_gate_app).run()
    at.text_input[0].input("correct horse")
    at.button[0].click().run()
    assert "SECRET DASHBOARD CONTENT" in _texts(at)
    at.run()  # a rerun in the same browser session stays signed in
    assert "SECRET DASHBOARD CONTENT" in _texts(at)


def test_password_matches_is_exact() -> None:
    assert password_matches("abc", "abc")
    assert not password_matches("abc ", "abc")
    assert not password_matches("ABC", "abc")
    assert password_matches("ünïcode", "ünïcode")
