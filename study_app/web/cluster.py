"""Several `serve` processes behind HAProxy, all on one store: what `serve --workers K` and
`loadtest --workers K` start.

A worker is a `recourse-study serve` process of its own (its own Python, so its own GIL and
core) on an internal port of 127.0.0.1; HAProxy (Debian's package, config
``deploy/haproxy.cfg``) listens on the public address, keeps each browser on one worker
(a cookie; a Streamlit tab is one long-lived websocket) and sends browsers of a dead
worker to a live one, where their resume link brings them back to their page. Several
workers need a store several processes can write: PostgreSQL (DuckDB allows one writing
process per file).

Every process started here dies with the process that started it (Linux parent-death
signal), so nothing is left listening when a test or a load test is killed.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from study_app.web.process_tree import die_with_parent, proc_stats, process_tree

HAPROXY_TEMPLATE = Path(__file__).resolve().parents[2] / "deploy" / "haproxy.cfg"


class ClusterError(RuntimeError):
    """A worker or the proxy could not be started."""


def _die_with_parent() -> None:  # runs in the child between fork and exec
    os.setsid()
    die_with_parent(signal.SIGTERM)


def free_port(address: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((address, 0))
        return int(s.getsockname()[1])


def healthy(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


class Process:
    """A child process in its own process group that dies with its parent."""

    def __init__(self, cmd: Sequence[str], log: Path, env: dict[str, str] | None = None) -> None:
        self.cmd = list(cmd)
        self.log = log
        self.env = {**os.environ, **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(self.cmd, stdout=out, stderr=subprocess.STDOUT,
                                         env=self.env, preexec_fn=_die_with_parent)

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL the process group (a crash: no clean shutdown)."""
        if self.alive():
            assert self.proc is not None
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self, timeout: float = 15.0) -> None:
        if self.alive():
            assert self.proc is not None
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()

    def cpu_seconds(self) -> float:
        """CPU time (user + system, every thread) the process and its live child processes
        (the search worker: study_app.web.search_processes) used so far; 0 when gone."""
        if self.proc is None:
            return 0.0
        stats = proc_stats()
        ticks = sum(stats[pid][1] for pid in process_tree(self.proc.pid, stats))
        return ticks / os.sysconf("SC_CLK_TCK")

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class Worker(Process):
    """One `recourse-study serve` on 127.0.0.1:port."""

    def __init__(self, serve_args: Sequence[str], port: int, log: Path,
                 env: dict[str, str] | None = None) -> None:
        exe = Path(sys.executable).with_name("recourse-study")
        super().__init__([str(exe), "serve", *serve_args, "--port", str(port),
                          "--address", "127.0.0.1"], log, env)
        self.port = port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise ClusterError(f"serve on port {self.port} exited:\n{self.tail()}")
            if healthy(self.url):
                return
            time.sleep(0.25)
        raise ClusterError(f"serve on port {self.port} not healthy after {timeout:.0f}s:\n"
                           f"{self.tail()}")


def haproxy_config(address: str, port: int, backends: Sequence[int],
                   pidfile: Path | None = None) -> str:
    """``deploy/haproxy.cfg`` with the public address and the workers' ports filled in."""
    servers = "\n".join(f"    server w{i} 127.0.0.1:{p} cookie w{i}"
                        for i, p in enumerate(backends))
    return (HAPROXY_TEMPLATE.read_text()
            .replace("{{ADDRESS}}", address).replace("{{PORT}}", str(port))
            .replace("{{SERVERS}}", servers)
            .replace("{{PIDFILE}}", f"    pidfile {pidfile}" if pidfile else ""))


class Cluster:
    """K workers (and HAProxy in front when K > 1); ``url`` is where participants go."""

    def __init__(self, serve_args: Sequence[str], workers: int, workdir: Path, *,
                 address: str = "127.0.0.1", port: int | None = None,
                 env: dict[str, str] | None = None) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.workdir = Path(workdir)
        self.address, self.env = address, env
        self.workers = [Worker(serve_args, free_port(), self.workdir / f"worker{i}.log", env)
                        for i in range(workers)]
        self.port = port or free_port(address)
        self.proxy: Process | None = None
        if workers > 1:
            if shutil.which("haproxy") is None:
                raise ClusterError("several workers need HAProxy: run scripts/install_proxy.sh "
                                   "(Debian's haproxy package)")
            cfg = self.workdir / "haproxy.cfg"
            cfg.write_text(haproxy_config(address, self.port, [w.port for w in self.workers]))
            self.proxy = Process(["haproxy", "-db", "-f", str(cfg)],
                                 self.workdir / "haproxy.log")
        else:
            self.workers[0].port = self.port
            self.workers[0].cmd[self.workers[0].cmd.index("--port") + 1] = str(self.port)

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.address in ("0.0.0.0", "") else self.address
        return f"http://{host}:{self.port}"

    def start(self, timeout: float = 600.0) -> None:
        """Start every worker at once (each loads its models), then the proxy."""
        try:
            for w in self.workers:
                w.start()
            for w in self.workers:
                w.wait_healthy(timeout)
            if self.proxy is not None:
                self.proxy.start()
                deadline = time.monotonic() + 30
                while not healthy(self.url):
                    if not self.proxy.alive() or time.monotonic() > deadline:
                        raise ClusterError(f"haproxy did not start:\n{self.proxy.tail()}")
                    time.sleep(0.1)
        except BaseException:
            self.stop()
            raise

    def restart_dead(self, timeout: float = 600.0) -> list[int]:
        """Start again every worker that died; the ports restarted."""
        dead = [w for w in self.workers if not w.alive()]
        for w in dead:
            w.start()
        for w in dead:
            w.wait_healthy(timeout)
        return [w.port for w in dead]

    def stop(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
        for w in self.workers:
            w.stop()


def temporary_workdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="rs-cluster-"))
