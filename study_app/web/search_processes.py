"""HARE's searches in a worker process beside the web server's (warm: models loaded once).

The web server answers every page on threads of one process, and Python runs one thread at
a time (the GIL): while a HARE search (a candidate search of ``steps`` gradient steps and a
boundary search per candidate, hundreds of milliseconds of CPU) runs on one of them, every
other participant's page waits for its turn, and the machine's second core idles.
``SearchProcesses`` is the server's search runner (protocols.running.batching): a batch of
pending sessions goes to a worker process as JSON (``HareSession.to_json(pending=True)``),
the worker resumes them with the study's own method, searches them together
(``Hare.complete_sessions``) and sends the searched states back with each one's next
question (its options evaluated: realized and measured plans), which the sessions take
(``HareSession.take_state``).

The workers are forked from the server once its study is loaded and warmed up (one
interaction searched in the server's own process, so torch's lazily imported parts are
loaded too: ``runtime.build_study``): a forked worker starts with the server's memory, the
same protocol and resources objects, shared copy-on-write with the server until either side
writes a page. Python's cyclic garbage collector would write to every object it inspects,
so everything alive at the fork is moved out of its reach first (``gc.freeze``) in the
server and thus in the workers. Torch runs one thread in each, as in the server. A study is
built before any participant can reach it (``serve`` builds it before it listens;
``streamlit run`` in the first session's script run), and prefetches wait while it is built,
so no other thread is inside the resources while they are copied. The worker searches with
the server's own objects, so a session gets the same candidates as searched in the server
(floats round-trip exactly through JSON; ``tests/web/test_search_processes.py``).

``serve`` starts two: one for the pages' searches and one for the prefetches' (speculative:
protocols.running.prefetch), so a page's search never queues behind a speculative one.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from protocols.definition.schema import Protocol
from protocols.running.resources import StudyResources
from study_app.web.process_tree import exit_with_parent

# The worker's study (set by ``_start_worker`` in the worker process).
_WORKER: tuple[Protocol, StudyResources] | None = None


def _start_worker(server: int, protocol: Protocol, resources: StudyResources) -> None:
    """In the forked worker: exit when the server ``server`` is gone, search with its study
    (passed through the fork, not pickled)."""
    import torch

    global _WORKER
    exit_with_parent(server)
    torch.set_num_threads(1)  # as serve: tiny tensors, one core per process
    _WORKER = (protocol, resources)


def _search(arm_id: str, states: list[str]) -> list[tuple[str, Any]]:
    """In the worker: the sessions ``states`` (pending) with their searches done, and the
    next question of each (its options evaluated here too)."""
    assert _WORKER is not None, "the worker's study is built by its initializer"
    protocol, resources = _WORKER
    method: Any = resources.method(protocol.arm(arm_id))
    sessions = [method.resume_session(s, defer=True) for s in states]
    method.complete_sessions(sessions)
    return [(s.to_json(), s.next_query()) for s in sessions]


class SearchProcesses:
    """The search runner of a served study (module docstring); thread-safe.

    A method that is not an arm's own (a test's injected one) and a worker that died are
    searched in the server's process as before.

    A worker ends with the server however the server ends: on a normal stop the pool is shut
    down; when the server is killed, the worker's watch (study_app.web.process_tree.
    exit_with_parent) sees it handed to another parent and exits. Forked workers need no
    multiprocessing resource tracker (their semaphores are unlinked at once), so none is left
    behind either.
    """

    def __init__(self, protocol: Protocol, resources: StudyResources) -> None:
        self.protocol = protocol
        self.resources = resources
        # what lives now is shared with the worker: kept out of the collector's reach
        # (module docstring)
        gc.collect()
        gc.freeze()
        # One process: the batcher runs one batch at a time, and a batch of ten costs about
        # what one costs (protocols.running.batching); the server's process has the other core.
        self._pool = ProcessPoolExecutor(
            max_workers=1, mp_context=multiprocessing.get_context("fork"),
            initializer=_start_worker, initargs=(os.getpid(), protocol, resources))
        self._pool.submit(int).result()  # forks the worker now (module docstring)
        self._lock = threading.Lock()
        self.broken: str | None = None  # why the worker is not used any more
        self.batches = 0  # batches searched in the worker (tests and load reports)

    def _arm_of(self, method: Any) -> str | None:
        for arm in self.protocol.arms:
            if arm.interactive and self.resources.methods.get(arm.id) is method:
                return arm.id
        return None

    def __call__(self, method: Any, sessions: list[Any]) -> None:
        """Search ``sessions`` (pending, all of ``method``) in the worker; in this process
        when the method is not an arm's own or the worker died."""
        arm = self._arm_of(method)
        if arm is None or self.broken is not None:
            method.complete_sessions(sessions)
            return
        states = [s.to_json(pending=True) for s in sessions]
        try:
            searched = self._pool.submit(_search, arm, states).result()
        except BrokenProcessPool as e:
            with self._lock:
                self.broken = f"the search worker died: {e}"
            method.complete_sessions(sessions)
            return
        for session, (state, query) in zip(sessions, searched, strict=True):
            session.take_state(state, query)
        with self._lock:
            self.batches += 1

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
