"""Benchmarks: every recourse method measured the same way (``recourse``), HARE with
simulated people (``hare``), and the fairness case study (``fairness``, ``disparities``)."""

from __future__ import annotations

from engine.exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "engine.benchmarks.recourse": ("BenchmarkConfig", "run_benchmark", "rejected_population"),
    "engine.benchmarks.hare": ("HareBenchmarkConfig", "run_hare_benchmark"),
    "engine.benchmarks.fairness": ("ASSIGNMENTS", "fairness_population", "run_fairness"),
    "engine.benchmarks.disparities": ("fairness_summary",),
})
