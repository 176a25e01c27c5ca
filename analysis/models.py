"""The analysis models by name: the data a model is fitted to (analysis.model_data) and
the model of each family of the catalogue (analysis.families: ``build_model``,
``model_arrays``), in one place for callers that fit a model without running ``analyze``
(benchmarks, the parameter-recovery study, scripts).

>>> from analysis.models import build_model, prepare
>>> from analysis import simulate_ratings
>>> data = prepare(simulate_ratings(participants=6, plans=4, seed=1), "action", "l1_profile")
>>> sorted(build_model(data, "gamm").named_vars)[:4]
['alpha', 'beta', 'delta_f', 'gamma']
"""

from __future__ import annotations

from analysis.families import FAMILIES, build_model, model_arrays
from analysis.model_data import (
    DISTANCES,
    OUTCOMES,
    AnalysisDataError,
    ModelData,
    basis_size,
    prepare,
    smooth_draws,
)

__all__ = ["DISTANCES", "FAMILIES", "OUTCOMES", "AnalysisDataError", "ModelData", "basis_size",
           "build_model", "model_arrays", "prepare", "smooth_draws"]
