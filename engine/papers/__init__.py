"""The papers' harness: benchmarks and reproductions of the published tables.

Nothing of a study imports this package; it imports the engine's computations. Every
recourse method measured the same way (``recourse_benchmark``, with ``learned_world`` for
data scenarios), the papers' tables beside ours (``reproduce``: ``recourse-study reproduce
TARGET``; ``reproduce_core`` its configuration and records, ``paper_values`` the published
values, ``cell_judging`` how a cell is judged, ``stored_runs`` whether a stored run is
current) and one subpackage per paper: ``hare`` and ``icarma`` (its models, training and
the fairness case study)."""

from __future__ import annotations

from engine.exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "engine.papers.recourse_benchmark": ("BenchmarkConfig", "run_benchmark", "rejected_population"),
    "engine.papers.hare.benchmark": ("HareBenchmarkConfig", "run_hare_benchmark"),
    "engine.papers.icarma.fairness": ("ASSIGNMENTS", "fairness_population", "run_fairness"),
    "engine.papers.icarma.disparities": ("fairness_summary",),
    "engine.papers.icarma.training": ("compare_training",),
    "engine.papers.reproduce": ("TARGETS", "TARGET_NAMES", "ReproduceConfig", "run_target"),
})
