"""The names of a plan's metrics, as the engine computes them.

Definitions are in ``engine.metrics`` (torch); this module is plain Python, so other layers
can name metrics without importing torch. The store keeps each metric in a ``plans`` column
of the same name (``data.columns``, which cannot import the engine: a test checks that the
two lists agree).
"""

from __future__ import annotations

# The distances of a plan (the reference user study): sparsity L0 and proximity L1, over the actions and
# over the whole profile change.
DISTANCES: tuple[str, ...] = ("l0_actions", "l1_actions", "l0_profile", "l1_profile")
# Every plan's measured columns, in this order (engine.recourse.RecourseBatch, the stored
# plans, the benchmarks).
METRIC_NAMES: tuple[str, ...] = (
    "found", "valid", "cost", "weighted_cost", "log_prob_factual", "log_prob_cf", "plausible",
    "hap", "violations", *DISTANCES,
)
# Measured against a participant's STATED constraints (NaN without an elicitation).
PREFERENCE_METRICS: tuple[str, ...] = ("satisfaction", "violation")
