"""TCP_NODELAY on every connection of the study server.

Streamlit's Starlette server binds its listening socket itself with
``socket.socket(family=...)``, whose protocol number is 0, and asyncio switches Nagle's
algorithm off (TCP_NODELAY) only on sockets whose protocol is ``IPPROTO_TCP``; so every
participant's connection ran with Nagle's algorithm on. A page transition ends in a few small
websocket frames (the script's "finished" message among them); with Nagle's algorithm the
last of them waits in the server's send buffer until the browser acknowledges the previous
segment, and browsers (like the load generator's client) delay that acknowledgement (the
stall, as server-side timestamps showed it: docs/benchmarks.md, "Findings behind the code").
(Tornado, Streamlit's earlier server, set TCP_NODELAY on its websockets itself.)

On Linux an accepted socket inherits TCP_NODELAY from the listening socket, so setting it once
where Streamlit binds covers every connection. ``install`` wraps Streamlit's binding function
to do that; if a Streamlit release no longer has that function, it says so on stderr and the
server runs as before (the test of this module fails on such a release).
"""

from __future__ import annotations

import socket
import sys
from typing import Any

_MARK = "_recourse_study_nodelay"


def with_nodelay(sock: socket.socket) -> socket.socket:
    """``sock`` with Nagle's algorithm off (TCP sockets only; others are returned as they
    are)."""
    if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def install() -> bool:
    """Make Streamlit's server bind its listening socket with TCP_NODELAY (idempotent).
    False when this Streamlit has no binding function to wrap."""
    from streamlit.web.server.starlette import starlette_server

    bind: Any = getattr(starlette_server, "_bind_socket", None)
    if bind is None:
        print("recourse-study: this Streamlit has no starlette_server._bind_socket; "
              "connections keep Nagle's algorithm (~40 ms more per page)", file=sys.stderr)
        return False
    if getattr(bind, _MARK, False):
        return True

    def bind_socket(address: str, port: int, backlog: int) -> socket.socket:
        return with_nodelay(bind(address, port, backlog))

    setattr(bind_socket, _MARK, True)
    starlette_server._bind_socket = bind_socket
    return True
