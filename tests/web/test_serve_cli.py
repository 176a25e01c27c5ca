"""`recourse-study serve`: refuses bad arguments with clear messages before starting anything
(the server itself is exercised by the browser tests)."""

from __future__ import annotations

import socket

from typer.testing import CliRunner

from study_app.cli import app

runner = CliRunner()


def test_unknown_protocol_is_refused(tmp_path) -> None:
    r = runner.invoke(app, ["serve", "--protocol", "no-such-protocol", "--db",
                            str(tmp_path / "x.duckdb")])
    assert r.exit_code == 2
    assert "not a file and not a shipped protocol" in r.output
    assert not (tmp_path / "x.duckdb").exists()


def test_bad_completion_url_is_refused(tmp_path) -> None:
    r = runner.invoke(app, ["serve", "--protocol", "icarma-personalization", "--db",
                            str(tmp_path / "x.duckdb"), "--completion-url", "javascript:alert(1)"])
    assert r.exit_code != 0 and "https://" in r.output


def test_port_in_use_is_refused(tmp_path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = runner.invoke(app, ["serve", "--protocol", "icarma-personalization", "--db",
                                str(tmp_path / "x.duckdb"), "--port", str(port),
                                "--address", "127.0.0.1"])
    assert r.exit_code == 1 and f"port {port}" in r.output and "in use" in r.output
    assert not (tmp_path / "x.duckdb").exists()


def test_serve_is_registered_with_documented_options() -> None:
    r = runner.invoke(app, ["serve", "--help"])
    assert r.exit_code == 0
    for option in ("--protocol", "--db", "--port", "--completion-url", "--quick",
                   "--require-id", "--session-param", "--allowed-host"):
        assert option in r.output


def test_short_dashboard_password_is_refused_at_start(tmp_path, monkeypatch) -> None:
    from study_app.web.auth import PASSWORD_ENV

    monkeypatch.setenv(PASSWORD_ENV, "too short")
    r = runner.invoke(app, ["serve", "--protocol", "icarma-personalization", "--db",
                            str(tmp_path / "x.duckdb")])
    assert r.exit_code == 2 and "at least 12" in r.output
    assert not (tmp_path / "x.duckdb").exists()


def test_every_interface_needs_allowed_hosts(tmp_path) -> None:
    r = runner.invoke(app, ["serve", "--protocol", "icarma-personalization", "--db",
                            str(tmp_path / "x.duckdb"), "--address", "0.0.0.0"])
    assert r.exit_code == 2 and "--allowed-host" in r.output
    assert not (tmp_path / "x.duckdb").exists()


def test_require_id_defaults_on_with_a_completion_url(tmp_path, monkeypatch) -> None:
    from study_app.web.runtime import from_env, make_config

    plain = make_config("icarma-personalization", tmp_path / "x.duckdb")
    paid = make_config("icarma-personalization", tmp_path / "x.duckdb",
                       completion_url="https://app.example.org/done?cc={code}")
    assert (plain.require_id, paid.require_id) == (False, True)
    off = make_config("icarma-personalization", tmp_path / "x.duckdb", require_id=False,
                      completion_url="https://app.example.org/done?cc={code}")
    assert off.require_id is False
    for name, value in paid.env().items():
        monkeypatch.setenv(name, value)
    assert from_env() == paid  # the server process sees the same configuration
