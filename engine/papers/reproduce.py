"""Paper reproduction: ``run_target`` runs one of ``TARGETS`` (engine.papers.reproduce_core
says what a result holds; icarma.reproduce and hare.reproduce say how each target is run).

A target is one published table or finding: the iCARMA paper's Tables 1-3 and fairness case
study, the HARE paper's budget, iteration, calibration and scale studies on Loan (ratios) and
its Tables 1-4 on its own data sets (hare.reproduce_tables). Every method
runs as published by default: the Oracle's grid around each factual, iCARMA without repair,
trained per cost profile with the paper's hyper-parameters and seeds 1000, 2000, ..., Likert
scores sampled i.i.d., HARE within its query budget. ``fast`` trades fidelity for time (one
seed, a fraction of the epochs, fewer simulated people) so that a target finishes in
minutes; the result says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from engine.artifacts import torch_threads
from engine.papers.hare import reproduce as reproduce_hare
from engine.papers.hare import reproduce_tables as reproduce_hare_tables
from engine.papers.icarma import reproduce as reproduce_icarma
from engine.papers.reproduce_core import (
    TARGET_NAMES,
    Progress,
    ReproduceConfig,
    TargetResult,
)

TARGETS: dict[str, Callable[[ReproduceConfig, Progress], TargetResult]] = {
    **reproduce_icarma.TARGETS,
    **reproduce_hare.TARGETS,
    **reproduce_hare_tables.TARGETS,
}
assert tuple(TARGETS) == TARGET_NAMES, "every target name needs its runner"


def run_target(config: ReproduceConfig, progress: Progress | None = None) -> TargetResult:
    """Run one target; ``progress`` receives short status lines.

    Single-threaded torch: the Oracle's tensors are small, so a second thread only adds
    synchronization (docs/benchmarks.md, "Findings behind the code")."""
    note = progress or (lambda _m: None)
    start = time.perf_counter()
    with torch_threads(1):
        result = TARGETS[config.target](config, note)
    result.seconds = time.perf_counter() - start
    return result


__all__ = ["TARGETS", "TARGET_NAMES", "ReproduceConfig", "TargetResult", "run_target"]
