"""Interactive searches of people who wait at the same moment, run as one (one worker per process).

HARE's expensive step (a candidate search of ``steps`` gradient steps and a boundary search
per candidate) costs about the same for ten people as for one: per gradient step the world
model, the backward pass and Adam are a few hundred small torch operations whatever the batch
size. The web server answers each participant's page on a thread of its own, so participants
who reach HARE's start (or answer "keep looking") together would otherwise run their searches
one after another behind Python's GIL.

``SearchBatcher.complete(method, session)`` hands a session whose next candidates are still to
be searched (``session.pending``: started or resumed with ``defer=True``) to the batcher's
worker thread and waits. The worker takes every session queued so far (after a short
``gather`` window, so that people arriving within it share the search), groups them by method
and runs ``method.complete_sessions(sessions)`` once per group. The method gives every session
exactly the candidates it finds alone (engine.recourse.hare.state, "proposing together"), so
questions and plans do not depend on who else was waiting.

A ``runner`` replaces ``method.complete_sessions`` for a group: the web server's runs the
search in a worker process (study_app.web.search_processes), so the server's own process
(its GIL) stays free for pages while a search runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

# Completes one method's pending sessions (default: ``method.complete_sessions(sessions)``).
Runner = Callable[[Any, list[Any]], None]

# Seconds the worker waits after the first request of a batch for others to join it.
GATHER_S = 0.02


class SearchBatcher:
    """Pending interactive sessions completed in batches (module docstring); thread-safe."""

    def __init__(self, gather: float = GATHER_S, runner: Runner | None = None) -> None:
        self.gather = gather
        self.runner: Runner = runner or (lambda method, sessions:
                                         method.complete_sessions(sessions))
        self._queue: list[tuple[Any, Any, Future[None]]] = []
        self._ready = threading.Condition()
        self._worker: threading.Thread | None = None
        self.batches: list[int] = []  # sessions per batch run (tests and load reports)

    def complete(self, method: Any, session: Any) -> None:
        """Search ``session``'s pending candidates (with whoever else waits); returns when
        done, raising what the search raised."""
        if not getattr(session, "pending", False):
            return
        done: Future[None] = Future()
        with self._ready:
            self._queue.append((method, session, done))
            if self._worker is None:
                self._worker = threading.Thread(target=self._serve, name="search-batcher",
                                                daemon=True)
                self._worker.start()
            self._ready.notify()
        done.result()

    def _serve(self) -> None:
        while True:
            with self._ready:
                while not self._queue:
                    self._ready.wait()
            time.sleep(self.gather)
            with self._ready:
                batch, self._queue = self._queue, []
            self._run(batch)

    def _run(self, batch: list[tuple[Any, Any, Future[None]]]) -> None:
        groups: dict[int, list[tuple[Any, Any, Future[None]]]] = {}
        for item in batch:
            groups.setdefault(id(item[0]), []).append(item)
        for items in groups.values():
            try:
                self.runner(items[0][0], [session for _, session, _ in items])
            except Exception as e:  # noqa: BLE001 - the waiting pages see the error
                if len(items) == 1:
                    items[0][2].set_exception(e)
                else:  # one broken session must not fail the others: each alone
                    for item in items:
                        self._run([item])
                continue
            self.batches.append(len(items))
            for _, _, done in items:
                done.set_result(None)
