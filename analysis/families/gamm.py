"""The Gaussian GAMM (``gamm``; the reference study's Eq. 4, its section 4.1): each
participant gets random deviations of the whole smooth rather than a linear slope,

    y_r ~ Normal(alpha + f(d_r) + g_{p_r}(d_r) + beta_s s_r + beta_v v_r + gamma_{a_r} + u_p,
                 sigma_y)
    g_p(d) = sum_{k >= 2} B_k(d) b_pk,   b_pk = sigma_k w_pk,   w_pk ~ Normal(0, 1)

i.e. theta_ku = beta_k + b_ku with b_ku ~ N(0, sigma_k^2) for every basis function k (the
first is fixed at 0 for both, the intercepts absorbing the level); sigma_k ~ HalfNormal(1)
is a per-function penalty (sigma_k -> 0: no participant deviates in that direction). The
fixed smooth f is the shared random walk (analysis.families.base); alpha ~ Normal(4, 2),
sigma_y ~ HalfNormal(2). The Bayesian twin of the reference study's mgcv GAMM
(analysis.engines compares their smooths point by point). u_p and w_p are integrated out of
the likelihood, not sampled (analysis.families.gaussian).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from analysis.families.base import Coefficient, Prior
from analysis.families.gaussian import INTEGRATED, GaussianFamily
from analysis.model_data import ModelData


class GammFamily(GaussianFamily):
    """The module docstring's model: the Gaussian family with random smooths in place of
    the random slopes."""

    name: ClassVar[str] = "gamm"
    title: ClassVar[str] = "Bayesian GAMM"
    formula: ClassVar[str] = ("y_r ~ Normal(alpha + f(d_r) + g_p(d_r) + beta_s s_r + "
                              "beta_v v_r + gamma_arm + u_p, sigma_y)")
    words: ClassVar[str] = ("Gaussian GAMM of the {outcome} rating on a spline of {distance} "
                            "{extra} and per-participant random intercepts and random smooth "
                            "deviations (the reference study's Eq. 4)")
    default: ClassVar[bool] = True
    integrated: ClassVar[tuple[str, ...]] = ("z_u", "w_s")
    deviation_scale: ClassVar[str] = "sigma_s"
    matches_mgcv: ClassVar[bool] = True
    variances: ClassVar[tuple[str, ...]] = ("sigma_u", "sigma_f", "sigma_y")
    deviation_priors: ClassVar[tuple[Prior, ...]] = (
        ("sigma_s", "HalfNormal", (1.0,), "per-basis-function sd of each participant's smooth "
                                          "deviation (Gaussian GAMM)"),
        ("w_s", "Normal", (0.0, 1.0),
         "standardized smooth deviations (Gaussian GAMM)" + INTEGRATED))
    report_note: ClassVar[str] = (
        "Ratings as continuous, random intercepts and per-participant random deviations of "
        "the smooth (sigma_s[k]: their spread per basis function); the smooth is on the "
        "rating scale, centred, with 95% bands.")
    section_title: ClassVar[str] = "Gaussian GAMM (the reference study's Eq. 4)"

    def random_design(self, data: ModelData, basis: np.ndarray) -> list[np.ndarray]:
        """The basis functions 2..K of the random smooths (no slope)."""
        return list(basis[:, 1:].T)

    def random_scales(self, data: ModelData) -> Any:
        """sigma_s, one per basis function 2..K."""
        import pymc as pm

        return pm.HalfNormal("sigma_s", 1.0, dims="knot")

    def own_coefficients(self, data: ModelData, posterior: Any) -> list[Coefficient]:
        """sigma_s[k] per basis function, then alpha."""
        sigma_s = posterior["sigma_s"]
        return [Coefficient.of(f"sigma_s[{int(k) + 1}]", sigma_s.sel(knot=k).values, "variance")
                for k in sigma_s.coords["knot"].values] + super().own_coefficients(data,
                                                                                posterior)


FAMILY = GammFamily()
