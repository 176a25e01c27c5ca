"""The Gaussian model (``gaussian``): the rating as continuous, with the ordinal model's
predictor (analysis.families.base; random intercepts and slopes),

    y_r ~ Normal(alpha + eta_r, sigma_y),   alpha ~ Normal(4, 2),   sigma_y ~ HalfNormal(2).

Not fitted by default (the reference study's own Gaussian model is the GAMM,
analysis.families.gamm); a comparison on the rating scale.

The Gaussian families sample the fixed effects and the variance components only: each
participant's random effects (intercept z_u and the family's deviation) are integrated out
of the likelihood exactly (analysis.gaussian_marginal), the same model with the same
posterior for every other parameter, sampled in a fraction of the time; ``integrated`` names
them, and ``random_design`` / ``random_scales`` say what they are (by default the intercept
and the slope on the centred distance, scales sigma_u and sigma_b).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from analysis.families.base import Coefficient, ModelFamily, Prior
from analysis.model_data import ModelData, smooth_coefficients

INTEGRATED = " (integrated out of the likelihood)"


class GaussianFamily(ModelFamily):
    """The module docstring's model."""

    name: ClassVar[str] = "gaussian"
    title: ClassVar[str] = "Bayesian Gaussian model"
    formula: ClassVar[str] = ("y_r ~ Normal(alpha + f(d_r) + beta_s s_r + beta_v v_r + "
                              "gamma_arm + u_p + b_p (d_r - mean d), sigma_y)")
    words: ClassVar[str] = ("Gaussian model of the {outcome} rating on a spline of "
                            "{distance}{extra} and per-participant random intercepts and slopes")
    scale: ClassVar[Any] = "rating"
    integrated: ClassVar[tuple[str, ...]] = ("z_u", "z_b")
    # a few dozen correlated parameters once the random effects are integrated out: nutpie's
    # low-rank mass matrix takes fewer leapfrog steps and far fewer divergences there
    low_rank_mass: ClassVar[bool] = True
    kernels: ClassVar[tuple[str, ...]] = ("gaussian_marginal.py",)
    deviation_scale: ClassVar[str] = "sigma_b"  # the deviation's scale(s) (random_scales)
    variances: ClassVar[tuple[str, ...]] = ("sigma_u", "sigma_b", "sigma_f", "sigma_y")
    deviation_priors: ClassVar[tuple[Prior, ...]] = (
        ("sigma_b", "HalfNormal", (1.0,), "participants' random slopes' sd (Gaussian)"),
        ("z_b", "Normal", (0.0, 1.0), "standardized random slopes (Gaussian)" + INTEGRATED))
    own_priors: ClassVar[tuple[Prior, ...]] = (
        ("alpha", "Normal", (4.0, 2.0), "intercept (Gaussian GAMM)"),
        ("sigma_y", "HalfNormal", (2.0,), "residual sd (Gaussian GAMM)"))
    report_note: ClassVar[str] = (
        "Ratings as continuous, random intercepts and slopes per participant; the smooth is "
        "on the rating scale, centred, with 95% bands.")

    def observed(self, data: ModelData) -> np.ndarray:
        """The ratings 1..7 as floats."""
        return data.y.astype(float)

    def own_arrays(self, data: ModelData, arrays: dict[str, np.ndarray],
                   basis: np.ndarray) -> dict[str, np.ndarray]:
        """The random effects' design by columns (``random_design``) and the ratings grouped
        by participant, instead of the centred distance."""
        from analysis.gaussian_marginal import participant_rows

        order, offsets = participant_rows(arrays["participant_index"], len(data.participants))
        columns = self.random_columns(data, basis)
        arrays["random_rows"] = np.ascontiguousarray(columns[:, order].T)  # by participant
        arrays["rows_order"], arrays["rows_offsets"] = order, offsets
        del arrays["d_centred"]
        return arrays

    def random_columns(self, data: ModelData, basis: np.ndarray) -> np.ndarray:
        """The random effects' design by columns (q x ratings): the intercept's, then
        ``random_design``'s."""
        return np.vstack([np.ones(len(data.y)), *self.random_design(data, basis)])

    def random_design(self, data: ModelData, basis: np.ndarray) -> list[np.ndarray]:
        """The columns of the random effects after the intercept's: the centred distance
        (a random slope)."""
        return [data.d - data.d_centre]

    def random_scales(self, data: ModelData) -> Any:
        """Their scales, a vector: sigma_b."""
        import pymc as pm
        import pytensor.tensor as pt

        return pt.stack([pm.HalfNormal("sigma_b", 1.0)])

    def likelihood(self, data: ModelData, x: dict[str, Any], w: Any, arm: Any, gamma: Any,
                   keep_probabilities: bool) -> None:
        """y ~ Normal(alpha + fixed effects + Z_p S w_p, sigma_y) with every participant's
        w_p integrated out (analysis.gaussian_marginal): one log-likelihood term per
        participant, the potential ``y``."""
        import pymc as pm
        import pytensor.tensor as pt

        from analysis.gaussian_marginal import marginal_logp
        from analysis.predictor import linear_predictor

        person = x["participant_index"]
        people = len(data.participants)
        sigma_u = pm.HalfNormal("sigma_u", 2.0)
        scales = pt.concatenate([pt.stack([sigma_u]), self.random_scales(data)])
        zeros = pt.zeros(people)
        fixed = linear_predictor(x["design_columns"], w, arm, gamma, person, zeros, zeros,
                                 pt.zeros(person.shape, dtype="float64"))
        alpha = pm.Normal("alpha", 4.0, 2.0)
        sigma_y = pm.HalfNormal("sigma_y", 2.0)
        pm.Potential("y", marginal_logp(x["y_observed"] - alpha - fixed,
                                        x["random_rows"], x["rows_order"],
                                        x["rows_offsets"], scales, sigma_y).sum())

    def fixed_draws(self, data: ModelData, posterior: Any) -> np.ndarray:
        """alpha + every fixed effect of each rating (the likelihood's mean before the
        random effects) for each posterior draw (chains x draws, ratings), from a posterior
        Dataset: X w with w = (0, cumsum(delta_f), beta), plus the arm's gamma."""
        arrays = self.model_arrays(data)
        w = np.hstack([smooth_coefficients(_flat(posterior, "delta_f"))]
                      + ([_flat(posterior, "beta")] if "beta" in posterior else []))
        fixed = w @ arrays["design_columns"] + _flat(posterior, "alpha")
        if "gamma" in posterior:
            fixed += _flat(posterior, "gamma")[:, arrays["arm_index"]]
        return fixed

    def integrated_draws(self, data: ModelData, posterior: Any, seed: int
                         ) -> dict[str, Any]:
        """z_u and the deviation's standardized effects drawn from their exact conditional
        given each posterior draw (analysis.gaussian_marginal.conditional_effects): what
        sampling them would have given, for a full trace."""
        import xarray as xr

        from analysis.gaussian_marginal import conditional_effects

        assert data.basis is not None
        chains, draws = posterior.sizes["chain"], posterior.sizes["draw"]
        people = len(data.participants)
        scales = np.hstack([_flat(posterior, "sigma_u"), _flat(posterior, self.deviation_scale)])
        effects = conditional_effects(
            data.y.astype(float) - self.fixed_draws(data, posterior),
            self.random_columns(data, data.basis(data.d)), data.participant, people, scales,
            _flat(posterior, "sigma_y")[:, 0], np.random.default_rng(seed))
        effects = effects.reshape(chains, draws, people, -1)
        coords = {"chain": posterior["chain"], "draw": posterior["draw"],
                  "participant": data.participants}
        dims = ("chain", "draw", "participant")
        intercept, deviation = self.integrated
        # the deviation has the dimensions of its scale (one per basis function, or one)
        extra = [d for d in posterior[self.deviation_scale].dims if d not in ("chain", "draw")]
        values = effects[..., 1:] if extra else effects[..., 1]
        return {intercept: xr.DataArray(effects[..., 0], coords=coords, dims=dims),
                deviation: xr.DataArray(values, dims=(*dims, *extra), coords={
                    **coords, **{d: posterior[d] for d in extra}})}

    def own_coefficients(self, data: ModelData, posterior: Any) -> list[Coefficient]:
        """The intercept alpha."""
        return [Coefficient.of("alpha", posterior["alpha"].values, "intercept")]


def _flat(posterior: Any, name: str) -> np.ndarray:
    """A posterior variable's draws as (chains x draws, its values)."""
    values = posterior[name].transpose("chain", "draw", ...).values
    return np.asarray(values, dtype=float).reshape(
        posterior.sizes["chain"] * posterior.sizes["draw"], -1)


FAMILY = GaussianFamily()
