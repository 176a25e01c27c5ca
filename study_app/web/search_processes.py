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
(``HareSession.take_state``). The worker builds the study's resources once (the protocol,
the decision model and the method's artifacts from the same files), with one torch thread
as the server has, so a session gets the same candidates as searched in the server (floats
round-trip exactly through JSON; ``tests/web/test_search_processes.py``).

``serve`` starts two: one for the pages' searches and one for the prefetches' (speculative:
protocols.running.prefetch), so a page's search never queues behind a speculative one.

A method that is not an arm's own (a test's injected one) and a worker that died are
searched in the server's process as before.

The worker is started when the runner is built, from a bare ``__main__``: a spawned process
runs its parent's ``__main__`` file again, and in a server that can be a page script
(Streamlit runs each page as ``__main__``), which must not run in the worker.
"""

from __future__ import annotations

import multiprocessing
import sys
import threading
import types
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any

from protocols.definition.schema import Protocol
from protocols.running.resources import StudyResources

# The worker's study (built by ``_start_worker`` in the worker process).
_WORKER: tuple[Protocol, StudyResources] | None = None


def _start_worker(protocol_file: str, decision_model: str | None) -> None:
    import torch

    from protocols.definition.schema import load_protocol
    from protocols.running.resources import study_resources

    global _WORKER
    torch.set_num_threads(1)  # as serve: tiny tensors, one core per process
    protocol = load_protocol(protocol_file)
    _WORKER = (protocol, study_resources(protocol, decision_model=decision_model))


def _search(arm_id: str, states: list[str]) -> list[tuple[str, Any]]:
    """In the worker: the sessions ``states`` (pending) with their searches done, and the
    next question of each (its options evaluated here too)."""
    assert _WORKER is not None, "the worker's study is built by its initializer"
    protocol, resources = _WORKER
    method: Any = resources.method(protocol.arm(arm_id))
    sessions = [method.resume_session(s, defer=True) for s in states]
    method.complete_sessions(sessions)
    return [(s.to_json(), s.next_query()) for s in sessions]


@contextmanager
def _bare_main() -> Iterator[None]:
    """``__main__`` replaced by an empty module while a process is spawned (module
    docstring)."""
    saved = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = saved


class SearchProcesses:
    """The search runner of a served study (module docstring); thread-safe."""

    def __init__(self, protocol_file: str, protocol: Protocol, resources: StudyResources,
                 decision_model: str | None = None) -> None:
        self.protocol = protocol
        self.resources = resources
        # One process: the batcher runs one batch at a time, and a batch of ten costs about
        # what one costs (protocols.running.batching); the server's process has the other core.
        self._pool = ProcessPoolExecutor(
            max_workers=1, mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker, initargs=(protocol_file, decision_model))
        with _bare_main():
            self._pool.submit(int)  # spawns the worker now (module docstring)
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
