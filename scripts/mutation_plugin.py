"""pytest plugin of the mutation runs (scripts/mutation.py loads it with ``-p``; not used by
``make test``).

mutmut's fork server imports pytest and collects the tests once, then forks one process per
mutant, which runs pytest on the tests that reach the mutated function and stops at the first
failure (``-x``). Two things make those runs cheaper without changing any verdict:

- ``gc.freeze()`` at the end of every pytest run, so in the fork server after its warm-up:
  the forked runs' garbage collections (pytest's own at exit included) no longer walk, and
  copy, the whole inherited heap of torch, pandas, ... (docs/mutation.md);
- the selected tests run fastest first (their durations from mutmut's stats run,
  ``mutmut-stats.json``): a mutant is killed by its first failing test, so a cheap test that
  fails saves running the slow ones. The set of tests is the same, so is the verdict;
- values a test module lists in ``MUTATION_WARM_UP`` (cached functions without arguments, its
  module fixtures' inputs) are computed once in the fork server, so the forked runs inherit
  them instead of computing them per mutant: only when computing them reached no function
  of the mutated module (mutmut's trampolines report every such call in their "stats" mode),
  so that the value cannot depend on the mutant. Otherwise the cache is cleared and every
  forked run computes the value itself, with the mutant.
"""

from __future__ import annotations

import gc
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
import torch

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


def pytest_collection_finish(session: pytest.Session) -> None:
    """In the fork server's warm-up (collection only, no mutant active): MUTATION_WARM_UP."""
    from mutmut.mutation.trampoline import get_mutant_under_test, set_mutant_under_test
    from mutmut.state import state

    if not session.config.option.collectonly or get_mutant_under_test() != "":
        return
    modules = {item.getparent(pytest.Module) for item in session.items}
    for module in sorted((m for m in modules if m is not None), key=lambda m: m.nodeid):
        for warm in getattr(module.obj, "MUTATION_WARM_UP", ()):
            rng = random.getstate(), np.random.get_state(), torch.random.get_rng_state()
            state()._stats.clear()
            set_mutant_under_test("stats")
            try:
                warm()
            finally:
                set_mutant_under_test("")
                random.setstate(rng[0])
                np.random.set_state(rng[1])
                torch.random.set_rng_state(rng[2])
            if state()._stats:  # a mutated function was reached: every run computes it
                warm.cache_clear()
            state()._stats.clear()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure() -> None:
    gc.freeze()
