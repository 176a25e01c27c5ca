"""What the study server adds to Streamlit's defaults: safe options, headers, closed routes.

``server_options(allowed_hosts)`` are the Streamlit options ``serve`` runs with:

- ``client.showErrorDetails = none``: an uncaught exception never reaches the browser with
  its type, message or traceback (the app itself shows an error id: study_app.web.errors);
- ``server.allowedHosts``: the host names the WebSocket accepts (DNS-rebinding protection);
- ``server.maxMessageSize`` 32 MB (Streamlit's default is 200 MB), widget state from a
  browser at most 2 MB, uploads 1 MB (the app has no upload);
- XSRF and CORS protection stay on, static serving and the agent API off.

``SecurityHeaders`` is ASGI middleware (st.App's ``middleware``) for every HTTP response:

- ``X-Frame-Options: SAMEORIGIN`` and ``Content-Security-Policy: frame-ancestors 'self'``:
  no other site can frame the study or the dashboard (clickjacking);
- ``Referrer-Policy: no-referrer``: a participant's address holds their resume token, which
  must not travel to the completion URL or any other site in a Referer header;
- ``X-Content-Type-Options: nosniff``; ``Cache-Control: no-store`` on downloads (exports,
  reports);
- 404 for routes the study never uses and that only widen what a stranger can reach:
  ``/_stcore/metrics`` (server internals), the file-upload and agent endpoints.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Message]],
                    Callable[[Message], Awaitable[None]]], Awaitable[None]]

CLOSED_PREFIXES = ("/_stcore/metrics", "/_stcore/upload_file", "/_stcore/agent")
HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-frame-options", b"SAMEORIGIN"),
    (b"content-security-policy", b"frame-ancestors 'self'"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
)
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


def server_options(allowed_hosts: list[str]) -> dict[str, Any]:
    """The hardening part of the Streamlit configuration (module docstring)."""
    return {
        "client.showErrorDetails": "none",
        "client.toolbarMode": "minimal",
        "server.allowedHosts": list(allowed_hosts),
        "server.maxMessageSize": 32,
        "server.maxWidgetStateSize": 2,
        "server.maxUploadSize": 1,
        "server.enableXsrfProtection": True,
        "server.enableCORS": True,
        "server.enableStaticServing": False,
        "server.enableAgentApi": False,
        "browser.gatherUsageStats": False,
    }


def allowed_hosts(address: str, extra: list[str]) -> list[str]:
    """The Host names to accept: ``extra`` (``serve --allowed-host``), plus the listening
    address and, on a loopback address, every loopback name. Listening on every interface
    (0.0.0.0, ::) needs ``extra``: only the operator knows the names participants use.
    ``*`` accepts any host."""
    if "*" in extra:
        return ["*"]
    hosts = list(extra)
    if address in ("0.0.0.0", "::", ""):
        if not hosts:
            raise ValueError("listening on every interface needs --allowed-host NAME (the host "
                             "name in participants' links; '*' accepts any host)")
        return hosts
    hosts.append(address)
    if address in LOOPBACK_HOSTS:
        hosts += LOOPBACK_HOSTS
    return list(dict.fromkeys(hosts))


def closed(path: str) -> bool:
    """A route the study server answers with 404 (module docstring)."""
    return any(path == p or path.startswith(p + "/") for p in CLOSED_PREFIXES)


class SecurityHeaders:
    """ASGI middleware: closed routes and security headers (module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Message]],
                       send: Callable[[Message], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        if closed(path):
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-type", b"text/plain"), *HEADERS]})
            await send({"type": "http.response.body", "body": b"Not found"})
            return
        download = "/media/" in path

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", [])
                           if h[0].lower() not in {k for k, _ in HEADERS}]
                headers += list(HEADERS)
                if download:
                    headers = [h for h in headers if h[0].lower() != b"cache-control"]
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_secured)
