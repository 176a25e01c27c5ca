"""Real-browser test harness: `recourse-study serve` on a free port, Debian Chromium via Playwright.

Never lets Playwright download a browser: it is pointed at /usr/bin/chromium
(scripts/install_chromium.sh, run by `make test` and .ci/run, installs it).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.cli_process import CLI

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-quic",
    "--disable-sync",
]
REPO = Path(__file__).resolve().parents[2]
ARTIFACT_DIR = REPO / ".recourse-study" / "test-artifacts"


def launch_chromium(playwright: Any, extra_args: tuple[str, ...] = ()) -> Any:
    """Debian's Chromium (never a downloaded browser), headless; ``extra_args``: more
    command-line switches (e.g. ``--log-net-log=PATH``)."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM),
                                      args=[*CHROMIUM_ARGS, *extra_args], headless=True)


def free_port() -> int:
    """A TCP port on localhost that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class StudyServer:
    """One `recourse-study serve` process (started in its own process group)."""

    def __init__(
        self, protocol: str, db: Path, log: Path, env: dict[str, str] | None = None,
        *, quick: bool = True, extra_args: tuple[str, ...] = (),
        launcher: tuple[str, ...] | None = None,
    ) -> None:
        """``launcher``: the command before ``serve`` (default: the ``recourse-study``
        console script next to this Python)."""
        self.protocol = protocol
        self.launcher = launcher
        self.db = db
        self.log_path = log
        self.env = {**os.environ, **(env or {})}
        self.quick = quick
        self.extra_args = extra_args
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 180.0, *, same_port: bool = False) -> None:
        """Start the server (on a fresh free port unless ``same_port``) and wait until
        Streamlit reports healthy."""
        if not same_port or not self.port:
            self.port = free_port()
        cmd = [
            *(self.launcher or (CLI,)),
            "serve",
            "--protocol",
            self.protocol,
            "--db",
            str(self.db),
            "--port",
            str(self.port),
            "--address",
            "127.0.0.1",
            *(["--quick"] if self.quick else []),
            *self.extra_args,
        ]
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"serve exited with {self.proc.returncode}:\n{self.log_path.read_text()}"
                )
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.25)
        self.stop()
        raise TimeoutError(f"serve not healthy after {timeout}s:\n{self.log_path.read_text()}")

    def __enter__(self) -> StudyServer:
        """Started (``with StudyServer(...) as srv``: stopped when the block ends)."""
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def kill(self) -> None:
        """SIGKILL the server's process group (a crash: no clean shutdown)."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.proc = None
