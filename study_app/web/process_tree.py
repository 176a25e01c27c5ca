"""The processes a server started, read from Linux's /proc: who descends from whom, what
they hold in memory, and how a child is tied to its parent's life.

Memory is reported two ways. RSS (``VmRSS``) counts every page a process maps, so pages
shared between processes (the same shared libraries, a forked child's copy-on-write pages
not yet written) are counted once per process: a sum of RSS over-counts. PSS
(``/proc/PID/smaps_rollup``) divides each page by the number of processes mapping it, so
the PSS of a group of processes sums to what the group really occupies.
"""

from __future__ import annotations

import ctypes
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def proc_stats() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, user + system CPU ticks) of every live process (/proc)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        out[int(entry.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    return out


def process_tree(root: int, stats: dict[int, tuple[int, int]] | None = None) -> list[int]:
    """``root`` and every live process descending from it (children before grandchildren);
    empty when ``root`` is gone."""
    stats = proc_stats() if stats is None else stats
    if root not in stats:
        return []
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    tree, i = [root], 0
    while i < len(tree):
        tree += sorted(children.get(tree[i], []))
        i += 1
    return tree


def alive(pids: list[int]) -> list[int]:
    """Those of ``pids`` that still run (a zombie, dead but not yet reaped, does not)."""
    out = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            out.append(pid)
    return out


@dataclass(frozen=True)
class Memory:
    """Resident memory of a group of processes, in MiB (module docstring)."""

    processes: int
    rss_mb: float
    pss_mb: float

    def as_dict(self) -> dict[str, float | int]:
        return {"processes": self.processes, "rss_mb": round(self.rss_mb, 1),
                "pss_mb": round(self.pss_mb, 1)}


def _kib(path: Path, field: str) -> int:
    for line in path.read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    return 0


def memory(pids: list[int]) -> Memory:
    """The summed RSS and PSS of ``pids`` (processes gone meanwhile count nothing)."""
    rss = pss = n = 0
    for pid in pids:
        try:
            rss += _kib(Path(f"/proc/{pid}/status"), "VmRSS:")
            pss += _kib(Path(f"/proc/{pid}/smaps_rollup"), "Pss:")
        except OSError:
            continue
        n += 1
    return Memory(n, rss / 1024, pss / 1024)


class PeakMemory:
    """The largest ``memory`` of the process trees of some roots, sampled on a thread
    every ``interval`` seconds between ``start`` and ``stop``."""

    def __init__(self, roots: list[int], interval: float = 0.5) -> None:
        self.roots, self.interval = roots, interval
        self.peak = Memory(0, 0.0, 0.0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> Memory:
        stats = proc_stats()
        now = memory([p for r in self.roots for p in process_tree(r, stats)])
        if now.pss_mb > self.peak.pss_mb:
            self.peak = now
        return now

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def start(self) -> PeakMemory:
        self._thread.start()
        return self

    def stop(self) -> Memory:
        self._stop.set()
        self._thread.join()
        return self.peak


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Ask the kernel to send this process ``sig`` when the thread that started it exits
    (Linux's parent-death signal; nothing elsewhere)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        return
    libc.prctl(_PR_SET_PDEATHSIG, sig)


def exit_with_parent(parent: int, interval: float = 0.5) -> None:
    """End this process at once when ``parent`` is no longer its parent (it died and the
    process was handed to init or a subreaper), checked on a daemon thread every
    ``interval`` seconds. Unlike the parent-death signal it does not fire when only the
    thread that started the process ends, and it also catches a parent that died before
    this call."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
