"""The Gaussian model (``gaussian``): the rating as continuous, with the ordinal model's
predictor (analysis.families.base; random intercepts and slopes),

    y_r ~ Normal(alpha + eta_r, sigma_y),   alpha ~ Normal(4, 2),   sigma_y ~ HalfNormal(2).

Not fitted by default (the reference study's own Gaussian model is the GAMM,
analysis.families.gamm); a comparison on the rating scale.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from analysis.families.base import Coefficient, ModelFamily, Prior
from analysis.model_data import ModelData


class GaussianFamily(ModelFamily):
    """The module docstring's model."""

    name: ClassVar[str] = "gaussian"
    title: ClassVar[str] = "Bayesian Gaussian model"
    formula: ClassVar[str] = ("y_r ~ Normal(alpha + f(d_r) + beta_s s_r + beta_v v_r + "
                              "gamma_arm + u_p + b_p (d_r - mean d), sigma_y)")
    words: ClassVar[str] = ("Gaussian model of the {outcome} rating on a spline of "
                            "{distance}{extra} and per-participant random intercepts and slopes")
    scale: ClassVar[Any] = "rating"
    variances: ClassVar[tuple[str, ...]] = ("sigma_u", "sigma_b", "sigma_f", "sigma_y")
    own_priors: ClassVar[tuple[Prior, ...]] = (
        ("alpha", "Normal", (4.0, 2.0), "intercept (Gaussian GAMM)"),
        ("sigma_y", "HalfNormal", (2.0,), "residual sd (Gaussian GAMM)"))
    report_note: ClassVar[str] = (
        "Ratings as continuous, random intercepts and slopes per participant; the smooth is "
        "on the rating scale, centred, with 95% bands.")

    def observed(self, data: ModelData) -> np.ndarray:
        """The ratings 1..7 as floats."""
        return data.y.astype(float)

    def observe(self, data: ModelData, x: dict[str, Any], eta: Any,
                keep_probabilities: bool) -> None:
        import pymc as pm

        alpha = pm.Normal("alpha", 4.0, 2.0)
        sigma_y = pm.HalfNormal("sigma_y", 2.0)
        pm.Normal("y", alpha + eta, sigma_y, observed=x["y_observed"])

    def own_coefficients(self, data: ModelData, posterior: Any) -> list[Coefficient]:
        """The intercept alpha."""
        return [Coefficient.of("alpha", posterior["alpha"].values, "intercept")]


FAMILY = GaussianFamily()
