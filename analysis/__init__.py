"""Analysis of stored studies: recourse-metric tables, the model families of ``FAMILIES``
(hierarchical ordinal models and Gaussian GAMMs in PyMC: analysis.families), diagnostics
(ArviZ) and the HTML report. Imports data, and engine for metric definitions.

Names are imported on first use (engine.exports): ``import analysis`` does not import PyMC.
It writes ArviZ's daily stamp first (analysis.arviz_stamp), so that processes importing
ArviZ at the same moment on a new machine do not race on ArviZ's fixed temporary file.
"""

from __future__ import annotations

from analysis.arviz_stamp import write_arviz_stamp
from engine.exports import lazy_exports

write_arviz_stamp()

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "analysis.pipeline": ("Analysis", "ModelResult", "run_analysis"),
    "analysis.report": ("render",),
    "analysis.tables": ("recourse_table",),
    "analysis.models": ("AnalysisDataError", "build_model", "prepare"),
    "analysis.families": ("FAMILIES", "Coefficient", "ModelFamily", "UnknownFamilyError"),
    "analysis.fit": ("sample", "SamplingWarning"),
    "analysis.refit": ("Refitter",),
    "analysis.deviations": ("prereg_deviations",),
    "analysis.power": ("PowerSpec", "PowerInputError", "effects", "clopper_pearson"),
    "analysis.simdata": ("simulate_ratings",),
    "analysis.recovery": ("RecoveryConfig", "recovery_study"),
    "analysis.fairness_plot": ("fairness_figure", "save_fairness_figure"),
    "analysis.mgcv": ("GammSpec", "MgcvError", "MgcvUnavailable", "fit_clmm", "fit_gamms",
                      "r_status", "too_few_ratings"),
    "analysis.engines": ("clmm_agreement", "mgcv_part", "smooth_agreement"),
    "analysis.languages": ("by_language",),
})
