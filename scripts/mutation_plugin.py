"""pytest plugin of the mutation runs (scripts/mutation.py loads it with ``-p``; not used by
``make test``).

mutmut's fork server imports pytest and collects the tests once, then forks one process per
mutant, which runs pytest on the tests that reach the mutated function and stops at the first
failure (``-x``). Two things make those runs cheaper without changing any verdict:

- ``gc.freeze()`` at the end of every pytest run, so in the fork server after its warm-up:
  the forked runs' garbage collections (pytest's own at exit included) no longer walk, and
  copy, the whole inherited heap of torch, pandas, ... (about 0.35 s of CPU per mutant);
- the selected tests run fastest first (their durations from mutmut's stats run,
  ``mutmut-stats.json``): a mutant is killed by its first failing test, so a cheap test that
  fails saves running the slow ones. The set of tests is the same, so is the verdict.
"""

from __future__ import annotations

import gc
import json
import math
from pathlib import Path

import pytest

_durations: dict[str, float] | None = None


def _test_durations() -> dict[str, float]:
    """Durations of mutmut's stats run (read once: in the fork server, before the forks)."""
    global _durations
    if _durations is None:
        path = Path("mutmut-stats.json")  # the runs' working directory is mutants/
        try:
            _durations = dict(json.loads(path.read_text())["duration_by_test"])
        except (OSError, ValueError, KeyError):
            return {}  # the stats run itself: nothing measured yet
    return _durations


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    durations = _test_durations()
    if durations:
        items.sort(key=lambda item: durations.get(item.nodeid, math.inf))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure() -> None:
    gc.freeze()
