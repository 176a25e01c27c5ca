"""A HARE `serve` killed with SIGKILL leaves no process behind, and a restart resumes.

A real server (hare-interactive, quick artifacts) with its two HARE search workers; a load
participant walks it over Streamlit's websocket protocol and is on HARE's questions when the
server process alone (not its process group: a crash or the kernel's OOM killer) is killed.
Every process the server started must be gone within 5 s; the server started again on the
same port takes the participant back to their page, and the database holds each answer
once (study_app.web.load.audit)."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time

import pytest
from browser_harness import StudyServer

from data.store import Store
from protocols.definition.schema import load_protocol
from study_app.web.load.audit import check
from study_app.web.load.participant import LoadParticipant
from study_app.web.process_tree import alive, process_tree

PROTOCOL = "hare-interactive"


def _wait(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


@pytest.mark.e2e  # two server starts and a HARE walk
def test_a_killed_hare_server_leaves_no_process_and_resumes(trained_home, tmp_path) -> None:
    server = StudyServer(PROTOCOL, tmp_path / "study.duckdb", tmp_path / "serve.log")
    server.start()
    try:
        assert server.proc is not None
        root = server.proc.pid
        started = process_tree(root)[1:]
        assert len(started) >= 2, f"the two search workers at least: {started}"
        # one action a second: still walking when the server dies. Load participant 1: its
        # ranking leaves plans within the rules, so HARE asks it questions (0's does not)
        person = LoadParticipant(1, load_protocol(PROTOCOL), server.url, act=0.5,
                                 reconnects_allowed=200)
        failed: list[BaseException] = []

        def walk() -> None:
            try:
                asyncio.run(person.run())
            except BaseException as e:  # reported by the assertion below
                failed.append(e)

        walker = threading.Thread(target=walk, daemon=True)
        walker.start()
        _wait(lambda: any(s.kind.startswith("hare_") for s in person.steps) or failed,
              240, "the participant reached HARE's questions")
        assert not failed, failed
        tree = process_tree(root)
        assert set(started) <= set(tree), tree
        os.kill(root, signal.SIGKILL)  # the server alone: its children are left to themselves
        server.proc.wait(timeout=10)
        time.sleep(5)
        assert alive(tree) == [], "processes the killed server started still run"
        answered = len(person.steps)
        assert person.end_kind is None, "killed mid-study"
        server.start(same_port=True)
        walker.join(timeout=600)
        assert not walker.is_alive() and not failed, failed
        assert person.end_kind == "debrief" and person.reconnects >= 1
        assert len(person.steps) > answered
    finally:
        server.stop()
    with Store(server.db, read_only=True) as store:
        audit = check(store, PROTOCOL, [person])
    assert audit["exact"], audit["problems"]
