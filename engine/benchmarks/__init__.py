"""Benchmarks: every recourse method measured the same way (``recourse``), HARE with
simulated people (``hare``), the fairness case study (``fairness``, ``disparities``), the
paper's iCARMA seeds trained one by one against together (``training``) and the papers'
tables beside ours (``reproduce``: ``recourse-study reproduce TARGET``)."""

from __future__ import annotations

from engine.exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "engine.benchmarks.recourse": ("BenchmarkConfig", "run_benchmark", "rejected_population"),
    "engine.benchmarks.hare": ("HareBenchmarkConfig", "run_hare_benchmark"),
    "engine.benchmarks.fairness": ("ASSIGNMENTS", "fairness_population", "run_fairness"),
    "engine.benchmarks.disparities": ("fairness_summary",),
    "engine.benchmarks.training": ("compare_training",),
    "engine.benchmarks.reproduce": ("TARGETS", "TARGET_NAMES", "ReproduceConfig", "run_target"),
})
