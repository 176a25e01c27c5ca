"""Reaching a running study: the researcher's actions go through the server that owns the
database.

DuckDB lets one process write a file, and while a study runs that is ``serve``. So ``serve``
writes a control file beside the database, ``<database>.serve.json`` (mode 0600, removed
when it stops):

    {"pid": ..., "url": "http://127.0.0.1:PORT", "token": <32 random bytes, hex>, "db": ...}

and answers ``POST /_rs/control/<action>`` (study_app.web.control_routes) when the request
carries ``Authorization: Bearer <token>``. Only the file's owner can read the token, so
only the user who runs the study (or root) can act through it; the researcher account and
password in the request are checked by the server like anywhere else.

``run(db, request)`` is what the command line calls: a DuckDB file with a live server ->
the request goes to the server, which performs the same function on its own connection
(study_app.operations) and writes the same audit row (``via`` = server); otherwise the
command opens the store itself (``via`` = cli). A control file whose process is gone (a
crash) is ignored. A file held by a process that is not a study server gets a message that
says what to do.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from data.store import Store, StoreError, is_postgres
from study_app.operations import OperationError, Request, perform

SUFFIX = ".serve.json"
ROUTE = "/_rs/control"
TIMEOUT = 1800.0  # an export of a large study


@dataclass(frozen=True)
class ControlFile:
    pid: int
    url: str
    token: str
    db: str


def control_path(db: str | Path) -> Path:
    return Path(f"{Path(db).expanduser().resolve()}{SUFFIX}")


def write_control(db: str | Path, address: str, port: int) -> ControlFile:
    """Write this process' control file (module docstring); it replaces a stale one."""
    host = "127.0.0.1" if address in ("0.0.0.0", "", "localhost") else address
    host = "[::1]" if host == "::" else (f"[{host}]" if ":" in host else host)
    control = ControlFile(os.getpid(), f"http://{host}:{port}", secrets.token_hex(32),
                          str(Path(db).expanduser().resolve()))
    path = control_path(db)
    tmp = path.with_name(path.name + f".{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(asdict(control), f)
    os.replace(tmp, path)
    return control


def remove_control(db: str | Path) -> None:
    """Remove the control file if it is this process' own."""
    found = read_control(db)
    if found is not None and found.pid == os.getpid():
        control_path(db).unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_control(db: str | Path) -> ControlFile | None:
    """The live server's control file, or None (none, or its process is gone).
    OperationError for a file others could read or write (it is not trusted)."""
    path = control_path(db)
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    if info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
        raise OperationError(f"{path} is not private to you (owner and mode 0600 expected); "
                             "it is not used", 2)
    try:
        control = ControlFile(**json.loads(path.read_text()))
    except (ValueError, TypeError):
        return None
    return control if _alive(control.pid) else None


def call(control: ControlFile, request: Request) -> dict[str, Any]:
    """Send ``request`` to the server; its result, or its OperationError raised here."""
    body = json.dumps(asdict(request)).encode("utf-8")
    req = urllib.request.Request(
        f"{control.url}{ROUTE}/{request.op}", data=body, method="POST",
        headers={"Authorization": f"Bearer {control.token}",
                 "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            doc = json.loads(r.read())
    except urllib.error.HTTPError as e:
        try:
            doc = json.loads(e.read())
        except ValueError:
            raise OperationError(f"the study server at {control.url} answered {e.code} "
                                 f"{e.reason}", 1) from None
    except (urllib.error.URLError, OSError) as e:
        raise OperationError(f"the study server (pid {control.pid}) holds {control.db} but "
                             f"does not answer at {control.url} ({e}); try again, or stop it "
                             "and run the command on the stopped study", 1) from None
    if not doc.get("ok"):
        raise OperationError(doc.get("error", "the server refused"), int(doc.get("code", 1)),
                             doc.get("details") or {})
    return doc["result"]


def run(db: str, request: Request) -> dict[str, Any]:
    """Perform ``request`` on the study database ``db`` (module docstring)."""
    if not is_postgres(db):
        if not Path(db).exists():
            raise OperationError(f"no database at {db}", 2)
        control = read_control(db)
        if control is not None:
            return call(control, request)
    try:
        store = Store(db)
    except StoreError as e:
        raise OperationError(
            f"{e}; another process holds the file and it is not a running `recourse-study "
            "serve` (no live control file beside it): stop that process, or run the study "
            "with `recourse-study serve`, which takes this command's requests while it runs",
            2) from None
    try:
        return perform(store, request, "cli")
    finally:
        store.close()
