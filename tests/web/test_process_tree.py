"""The process helpers of the server (study_app.web.process_tree): the tree of a process,
its memory, and a child that ends when its parent is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from study_app.web.process_tree import alive, memory, process_tree

# A parent that forks a child: the child watches the parent (exit_with_parent) and sleeps;
# the parent prints the child's pid and sleeps too.
PARENT = """
import os, sys, time
from study_app.web.process_tree import exit_with_parent
parent = os.getpid()
child = os.fork()
if child == 0:
    exit_with_parent(parent, interval=0.1)
    time.sleep(60)
    os._exit(3)
print(child, flush=True)
time.sleep(60)
"""


def _start(code: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env=env)


def test_a_watching_child_ends_when_its_parent_is_killed() -> None:
    parent = _start(PARENT)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert process_tree(parent.pid) == [parent.pid, child]
        assert process_tree(os.getpid())[:1] == [os.getpid()]
        assert parent.pid in process_tree(os.getpid())
        os.kill(parent.pid, signal.SIGKILL)  # the parent alone
        parent.wait(timeout=10)
        deadline = time.monotonic() + 5
        while alive([child]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert alive([child]) == []
    finally:
        parent.kill()
        parent.wait(timeout=10)
    assert process_tree(parent.pid) == []


def test_a_child_without_the_watch_outlives_its_killed_parent() -> None:
    """What the watch is for: the same child without it is left running."""
    parent = _start(PARENT.replace("exit_with_parent(parent, interval=0.1)", "pass"))
    child = None
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        time.sleep(1)
        assert alive([child]) == [child]
    finally:
        parent.kill()
        parent.wait(timeout=10)
        if child is not None and alive([child]):
            os.kill(child, signal.SIGKILL)


def test_memory_counts_shared_pages_once_in_pss() -> None:
    mine = memory([os.getpid()])
    assert mine.processes == 1 and 0 < mine.pss_mb <= mine.rss_mb
    assert memory([os.getpid(), 2**22 + 7]).processes == 1  # a pid that is gone counts nothing
    parent = _start(PARENT.replace("exit_with_parent(parent, interval=0.1)", "pass"))
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        both = memory([parent.pid, child])
        one = memory([parent.pid])
        # the forked child shares the parent's pages: RSS counts them twice, PSS once
        assert both.rss_mb > 1.5 * one.rss_mb
        assert both.pss_mb < 1.5 * one.rss_mb
    finally:
        parent.kill()
        parent.wait(timeout=10)
        os.kill(child, signal.SIGKILL)
