"""The study server's connections run without Nagle's algorithm (study_app.web.nodelay):
with it, the last small frame of every page waited for the client's delayed ACK."""

from __future__ import annotations

import signal
import socket

import pytest
from streamlit.web.server.starlette import starlette_server

from study_app.web import nodelay, runtime


def _accepted_nodelay(bind) -> int:
    """TCP_NODELAY of a connection accepted on a socket bound by ``bind``."""
    listener = bind("127.0.0.1", 0, 8)
    try:
        client = socket.create_connection(listener.getsockname()[:2], timeout=5)
        listener.setblocking(True)
        accepted, _ = listener.accept()
        try:
            return accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        finally:
            accepted.close()
            client.close()
    finally:
        listener.close()


@pytest.fixture
def streamlit_bind(monkeypatch: pytest.MonkeyPatch):
    """Streamlit's own binding function, restored after the test."""
    original = starlette_server._bind_socket
    monkeypatch.setattr(starlette_server, "_bind_socket", original)
    return original


def test_streamlit_alone_leaves_nagle_on_and_install_turns_it_off(streamlit_bind):
    assert _accepted_nodelay(streamlit_bind) == 0  # the reason for the module
    assert nodelay.install() is True
    assert _accepted_nodelay(starlette_server._bind_socket) == 1
    wrapped = starlette_server._bind_socket
    assert nodelay.install() is True and starlette_server._bind_socket is wrapped  # once


def test_a_unix_socket_is_returned_unchanged():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        assert nodelay.with_nodelay(a) is a
    finally:
        a.close()
        b.close()


def test_run_server_installs_it(streamlit_bind, monkeypatch: pytest.MonkeyPatch):
    """The served app gets it: run_server wraps Streamlit's binding before the server runs."""
    ran: dict[str, object] = {}

    class App:
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def run(self, config: dict) -> None:
            ran["bind"] = starlette_server._bind_socket

    monkeypatch.setattr(runtime.st, "App", App)
    monkeypatch.setattr(signal, "signal", lambda *a: None)
    runtime.run_server("127.0.0.1", 0, ["127.0.0.1"])
    assert ran["bind"] is not streamlit_bind
    assert _accepted_nodelay(ran["bind"]) == 1
