"""The hierarchical ordinal model (``ordinal``, the main family): a 7-point rating as a
cumulative logit of the shared linear predictor (analysis.families.base),

    P(y_r <= k) = logistic(c_k - eta_r),   c_1 < ... < c_6,
    eta_r = f(d_r) + beta_s s_r + beta_v v_r + gamma_{a_r} + u_p + b_p (d_r - mean d)

with c_1 ~ Normal(-2.5, 3) and gaps c_k - c_{k-1} ~ HalfNormal(2) (ordered by
construction). The same likelihood as the synthetic participants
(engine.synthetic.rating_model), so its parameters are directly comparable with theirs;
evaluated at the observed rating only (analysis.ordinal). Its smooth read through the
fitted cutpoints is the typical participant's mean rating (``expected_rating``: analysis.truth).

The random slopes act on the centred distance (uncentred, u and b are correlated), so
sigma_u is the participants' spread at the mean distance.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from analysis.families.base import Coefficient, Fitted, ModelFamily, Prior
from analysis.model_data import ModelData
from engine.synthetic.rating_model import OutcomeModel


class OrdinalFamily(ModelFamily):
    """The module docstring's model; ``keep_probabilities`` adds the per-rating category
    probabilities P(y_r = k) as the deterministic ``y_probs`` (n x 7 values per draw: only
    a ``full`` trace keeps them)."""

    name: ClassVar[str] = "ordinal"
    title: ClassVar[str] = "Bayesian ordinal model"
    formula: ClassVar[str] = ("P(y_r <= k) = logistic(c_k - eta_r), eta_r = f(d_r) + "
                              "beta_s s_r + beta_v v_r + gamma_arm + u_p + b_p (d_r - mean d)")
    words: ClassVar[str] = ("hierarchical cumulative-logit model of the 7-point {outcome} "
                            "rating on a penalized spline of {distance}{extra} and "
                            "per-participant random intercepts and slopes")
    scale: ClassVar[Any] = "logit"
    main: ClassVar[bool] = True
    default: ClassVar[bool] = True
    pointwise_loo: ClassVar[bool] = True
    predictive_check: ClassVar[bool] = True
    own_priors: ClassVar[tuple[Prior, ...]] = (
        ("cut_first", "Normal", (-2.5, 3.0), "first cut point c_1 (ordinal)"),
        ("cut_gaps", "HalfNormal", (2.0,), "gaps c_k - c_(k-1) (ordinal)"))

    def observed(self, data: ModelData) -> np.ndarray:
        """The ratings as 0..6."""
        return (data.y - 1).astype("int64")

    def observe(self, data: ModelData, x: dict[str, Any], eta: Any,
                keep_probabilities: bool, shift: Any) -> None:
        """c_1 sampled as its level against the intercepts' mean, c_1 - shift (the
        same prior, moved with it: analysis.families.base.random_intercepts); the likelihood
        reads the cutpoints less that shift against ``eta``, which lacks it."""
        import pymc as pm
        import pytensor.tensor as pt

        from analysis import ordinal

        level = pm.Normal("cut_level", -2.5 - shift, 3.0)  # c_1 - shift
        pm.Deterministic("cut_first", level + shift)
        gaps = pm.HalfNormal("cut_gaps", 2.0, shape=5)
        relative = pt.concatenate([pt.stack([level]), level + pt.cumsum(gaps)])
        pm.Deterministic("cutpoints", relative + shift)
        ordinal.observe("y", eta, relative, x["y_observed"])
        if keep_probabilities:
            pm.Deterministic("y_probs", ordinal.probabilities(eta, relative))

    def own_coefficients(self, data: ModelData, posterior: Any) -> list[Coefficient]:
        """The cutpoints c_1 < ... < c_6."""
        cut = np.asarray(posterior["cutpoints"].values)
        return [Coefficient.of(f"cutpoint[{k + 1}]", cut[..., k], "cutpoint")
                for k in range(cut.shape[-1])]

    def expected_rating(self, model: Fitted, latent: np.ndarray) -> np.ndarray:
        """E(y | eta = latent) = sum_k k P(k | eta; c_hat) at the posterior mean cutpoints."""
        cuts = [c.mean for c in model.coefficients if c.group == "cutpoint"]
        return OutcomeModel(intercept=0.0, cutpoints=tuple(cuts)).expected(latent)  # type: ignore[arg-type]


FAMILY = OrdinalFamily()
