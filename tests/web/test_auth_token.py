"""The dashboard's signed session token (study_app.web.auth_token): it verifies only as
signed, with the same password and server secret, before it expires, until revoked."""

from __future__ import annotations

import time

import pytest

from study_app.web import auth_token as at

PASSWORD = "a long pass phrase"


def test_a_token_verifies_until_it_expires_or_is_revoked(monkeypatch) -> None:
    monkeypatch.setenv(at.HOURS_ENV, "2")
    now = 1_800_000_000.0
    token = at.issue(PASSWORD, now=now)
    assert at.expires_at(token) == int(now) + 7200
    assert at.verify(token, PASSWORD, now=now + 7199)
    assert not at.verify(token, PASSWORD, now=now + 7200)  # expired
    assert not at.verify(token, "another long pass phrase", now=now)  # new password
    expires, nonce, sig = token.split(".")
    assert not at.verify(f"{int(expires) + 3600}.{nonce}.{sig}", PASSWORD, now=now)
    flipped = sig[:-1] + ("B" if sig[-1] == "A" else "A")
    assert not at.verify(f"{expires}.{nonce}.{flipped}", PASSWORD, now=now)
    for junk in (None, "", "a.b", "x.y.z", token + ".x", "9" * 300):
        assert not at.verify(junk, PASSWORD, now=now)
    other = at.issue(PASSWORD, now=now)
    assert other != token and at.verify(other, PASSWORD, now=now)
    at.revoke(token)
    assert not at.verify(token, PASSWORD, now=now) and at.verify(other, PASSWORD, now=now)


def test_the_server_secret_signs_and_must_be_long(monkeypatch) -> None:
    monkeypatch.delenv(at.SECRET_ENV, raising=False)
    token = at.issue(PASSWORD)
    monkeypatch.setenv(at.SECRET_ENV, "s" * 32)
    assert not at.verify(token, PASSWORD)  # signed with the process' random secret
    token = at.issue(PASSWORD)
    assert at.verify(token, PASSWORD)
    monkeypatch.setenv(at.SECRET_ENV, "t" * 32)
    assert not at.verify(token, PASSWORD)
    monkeypatch.setenv(at.SECRET_ENV, "short")
    with pytest.raises(at.SecretError, match="at least 32"):
        at.issue(PASSWORD)


def test_the_cookie_script_sets_and_deletes_a_strict_cookie() -> None:
    token = at.issue(PASSWORD)
    script = at.cookie_script(token)
    assert f"{at.COOKIE}={token}; Max-Age=" in script and "SameSite=Strict" in script
    age = int(script.split("Max-Age=")[1].split(";")[0])
    assert abs(age - 3600 * at.SESSION_HOURS) < 5
    assert "'; Secure'" in script and "</script>" in script
    assert f"{at.COOKIE}=; Max-Age=0;" in at.cookie_script(None)
    assert time.time() < at.expires_at(token)
