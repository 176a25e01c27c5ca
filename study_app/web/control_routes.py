"""The server's control endpoint: ``POST /_rs/control/<action>`` (study_app.live_server).

The command line's withdraw, export and backup reach a running DuckDB study here: the
request must carry the token of this process' control file (``Authorization: Bearer``,
compared in constant time), its JSON body names the action's arguments and the researcher
account; the action runs on the server's own connection to the database (a worker thread,
so participants' pages keep being served) through study_app.operations, the same function
and audit as on a stopped study. The answer is JSON: ``{"ok": true, "result": ...}`` or
``{"ok": false, "error": ..., "code": ..., "details": ...}``.
"""

from __future__ import annotations

import hmac
import json
import logging

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse
from starlette.routing import Route

from study_app.live_server import ROUTE
from study_app.operations import OperationError, Request, perform

MAX_BODY = 64 * 1024
_TOKEN: list[str] = []  # this process' control token (set by ``serve``)
log = logging.getLogger("study_app.web.control_routes")


def set_token(token: str) -> None:
    _TOKEN[:] = [token]


def _authorized(request: HttpRequest) -> bool:
    given = request.headers.get("authorization", "")
    return bool(_TOKEN) and hmac.compare_digest(given.encode(), f"Bearer {_TOKEN[0]}".encode())


def _perform(body: dict) -> dict:
    from study_app.web import runtime

    study = runtime.build_study(runtime.from_env())
    return perform(study.store, Request(**body), "server", study=study)


def _refused(message: str, code: int, status: int, details: dict | None = None
             ) -> JSONResponse:
    return JSONResponse({"ok": False, "error": message, "code": code,
                         "details": details or {}}, status_code=status)


async def control(request: HttpRequest) -> JSONResponse:
    if not _authorized(request):
        return _refused("not authorized", 2, 403)
    raw = await request.body()
    if len(raw) > MAX_BODY:
        return _refused("request too large", 2, 413)
    try:
        body = json.loads(raw)
        if not isinstance(body, dict) or body.get("op") != request.path_params["op"]:
            raise ValueError("the action in the body differs from the address")
        body = {k: body.get(k) for k in ("op", "args", "account", "password")}
        body["args"] = body["args"] or {}
    except ValueError as e:
        return _refused(f"bad request: {e}", 2, 400)
    try:
        result = await run_in_threadpool(_perform, body)
    except OperationError as e:
        return _refused(str(e), e.code, 409 if e.code == 1 else 400, e.details)
    except Exception:  # logged with its traceback; the caller sees no internals
        log.exception("control action %s failed", body["op"])
        return _refused(f"the {body['op']} failed on the server (see its log)", 1, 500)
    log.info("control action %s by %s done", body["op"], result.get("account"))
    return JSONResponse({"ok": True, "result": json.loads(json.dumps(result, default=str))})


ROUTES = [Route(ROUTE + "/{op}", control, methods=["POST"])]
