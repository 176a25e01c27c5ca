"""Work computed in the background while a participant reads a page (a few workers per process).

An interactive method's next question can be expensive (HARE's next iteration: a candidate
search of ``steps`` gradient steps and a boundary search per candidate), and which one comes
next is known as soon as a page is shown: an accept question answered "keep looking"
starts the next iteration from the state the page was built from. ``Prefetcher.schedule``
starts such a computation on a background thread keyed by what it depends on (the saved
session state and the answer); ``take`` hands over its result when that answer arrives,
waiting for it when it is still running. A computation still queued (or still waiting
for its ``delay``) when its answer arrives is cancelled and ``take`` returns None (the caller
computes it itself, as without prefetching); so does one that failed, or one never
scheduled. A ``delay`` keeps speculative work off the server while the answer may still come
at once: a page answered within it costs what it costs without prefetching, and one read for
longer finds its work done.

Speculative work yields to real requests: a computation due to start while ``busy()`` (the web
server: a page's answer is being processed) waits, still cancellable, until nothing is, so it
never takes the process from a participant who waits for a page (with participants who answer
at once it never runs; with readers it runs in the gaps between their pages).

A computation can belong to a ``group`` (a participant's drafts of one answer): scheduling
another one of the group cancels the group's earlier computation when it has not started
(a participant who changed their mind makes the work for the earlier draft useless).

The prefetched work is the same deterministic code on the same saved state (every random
draw of a HARE session is seeded by (seed, iteration)), so a session asks the same questions
and reaches the same plans with and without prefetching.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

# Results kept for answers not given yet (a participant who accepts or leaves never takes
# theirs): the oldest is dropped beyond this.
CAPACITY = 256
# Computations running at once (their searches run together in protocols.running.batching's
# worker). Few, so that speculative work sheds itself when the server is busy: a computation
# still queued when its answer arrives is cancelled, not run twice.
WORKERS = 2
# Seconds between two looks at ``busy`` of a computation waiting for the server to be idle.
YIELD_S = 0.05


def prefetch_key(*parts: str) -> str:
    """The key of a computation that depends on exactly ``parts`` (state JSON, answer)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


class Prefetcher:
    """Background computations by key (module docstring); thread-safe."""

    def __init__(self, capacity: int = CAPACITY, workers: int = WORKERS,
                 busy: Callable[[], bool] = lambda: False) -> None:
        self.busy = busy  # the server is serving a real request (module docstring)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="prefetch")
        self._futures: OrderedDict[str, Future[Any]] = OrderedDict()
        self._latest: OrderedDict[str, str] = OrderedDict()  # group -> its latest key
        self._lock = threading.Lock()
        self._capacity = capacity
        self.hits = 0  # results handed over (tests and load reports)

    def schedule(self, key: str, work: Callable[[], Any], delay: float = 0.0,
                 group: str | None = None) -> None:
        """Start ``work`` in the background (after ``delay`` seconds) unless ``key`` is
        scheduled already; in a ``group``, the group's earlier computation is dropped when it
        has not started (module docstring)."""
        future: Future[Any] = Future()
        with self._lock:
            if group is not None:
                self._supersede(group, key)
            if key in self._futures:
                return
            self._futures[key] = future
            while len(self._futures) > self._capacity:
                _, old = self._futures.popitem(last=False)
                old.cancel()

        def run() -> None:
            while self.busy() and not future.cancelled():  # real requests first
                time.sleep(YIELD_S)
            if not future.set_running_or_notify_cancel():
                return  # taken (or dropped) before it started
            try:
                future.set_result(work())
            except BaseException as e:  # noqa: BLE001 - handed to take(), which falls back
                future.set_exception(e)

        if delay > 0:
            timer = threading.Timer(delay, self._pool.submit, args=(run,))
            timer.daemon = True
            timer.start()
        else:
            self._pool.submit(run)

    def _supersede(self, group: str, key: str) -> None:
        """``key`` is now ``group``'s latest: its earlier one is cancelled unless it started
        (under ``_lock``)."""
        earlier = self._latest.pop(group, None)
        if earlier is not None and earlier != key:
            future = self._futures.get(earlier)
            if future is not None and future.cancel():
                del self._futures[earlier]
        self._latest[group] = key
        while len(self._latest) > self._capacity:
            self._latest.popitem(last=False)

    def take(self, key: str) -> Any | None:
        """The result of ``key``'s computation (waiting while it runs), or None when it was
        not scheduled, had not started yet (cancelled) or failed."""
        with self._lock:
            future = self._futures.pop(key, None)
        if future is None or future.cancel():
            return None
        try:
            result = future.result()
        except Exception:  # noqa: BLE001 - the caller computes it again and sees the error
            return None
        with self._lock:
            self.hits += 1
        return result
