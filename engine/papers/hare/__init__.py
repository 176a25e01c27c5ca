"""The HARE paper's harness: HARE measured with simulated people and its tables reproduced.

``benchmark`` (HARE after a base method, with simulated people answering its questions),
``metrics`` (the paper's per-plan measures), ``reproduce`` (the budget, rounds and
ground-truth targets), ``reproduce_tables`` (Tables 1-3 over data sets, classifiers and
bases), ``table_specs`` and ``table_checks`` (what each table holds and the claims checked
on it).
"""

from __future__ import annotations

from engine.exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "engine.papers.hare.benchmark": ("HareBenchmarkConfig", "run_hare_benchmark"),
    "engine.papers.hare.metrics": ("FAILED_PLANS", "plan_metrics"),
})
