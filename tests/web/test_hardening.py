"""The server's hardening (study_app.web.hardening): security headers on every response,
closed routes, allowed hosts, and the Streamlit options serve runs with."""

from __future__ import annotations

import asyncio

import pytest

from study_app.web.hardening import SecurityHeaders, allowed_hosts, closed, server_options


def _request(path: str, headers: list[tuple[bytes, bytes]] | None = None) -> list[dict]:
    """The messages the middleware sends for an HTTP GET of ``path`` to a dummy app."""
    sent: list[dict] = []

    async def app(scope, receive, send) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": headers or [(b"content-type", b"text/html")]})
        await send({"type": "http.response.body", "body": b"the app"})

    async def receive() -> dict:
        return {"type": "http.request"}

    async def send(message) -> None:
        sent.append(message)

    asyncio.run(SecurityHeaders(app)({"type": "http", "path": path}, receive, send))
    return sent


def test_headers_on_every_response() -> None:
    start, body = _request("/")
    headers = dict(start["headers"])
    assert start["status"] == 200 and body["body"] == b"the app"
    assert headers[b"x-frame-options"] == b"SAMEORIGIN"
    assert headers[b"content-security-policy"] == b"frame-ancestors 'self'"
    assert headers[b"referrer-policy"] == b"no-referrer"  # tokens stay in our address bar
    assert headers[b"x-content-type-options"] == b"nosniff"
    media = dict(_request("/media/abc.zip", [(b"cache-control", b"max-age=3600")])[0]["headers"])
    assert media[b"cache-control"] == b"no-store"


@pytest.mark.parametrize("path", ["/_stcore/metrics", "/_stcore/metrics/", "/_stcore/upload_file/x",
                                  "/_stcore/agent/interact"])
def test_closed_routes_answer_404(path) -> None:
    start, body = _request(path)
    assert start["status"] == 404 and b"the app" not in body["body"]
    assert closed(path)


@pytest.mark.parametrize("path", ["/", "/dashboard", "/_stcore/health", "/media/x.zip",
                                  "/_stcore/metricsX"])
def test_other_routes_pass(path) -> None:
    assert not closed(path)
    assert _request(path)[0]["status"] == 200


def test_allowed_hosts() -> None:
    assert set(allowed_hosts("127.0.0.1", [])) == {"127.0.0.1", "localhost", "::1"}
    assert allowed_hosts("10.0.0.5", ["study.example.org"]) == ["study.example.org", "10.0.0.5"]
    assert allowed_hosts("0.0.0.0", ["*"]) == ["*"]
    with pytest.raises(ValueError, match="--allowed-host"):
        allowed_hosts("0.0.0.0", [])


def test_server_options() -> None:
    options = server_options(["localhost"])
    assert options["client.showErrorDetails"] == "none"
    assert options["server.allowedHosts"] == ["localhost"]
    assert options["server.maxMessageSize"] <= 32 and options["server.maxUploadSize"] == 1
    assert options["server.enableXsrfProtection"] and options["server.enableCORS"]
