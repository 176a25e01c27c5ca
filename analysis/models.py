"""Hierarchical models of a 7-point rating (acceptance or action) against a plan's distance.

For rating r of participant p, with distance d_r (one of l0/l1 over actions or the profile),
satisfaction s_r in [0, 1] and violation v_r in {0, 1} of the participant's stated
constraints, and arm a_r:

    eta_r = f(d_r) + beta_s s_r + beta_v v_r + gamma_{a_r} + u_p + b_p (d_r - mean d)
    f(d)  = B_c(d) beta,  beta_1 = 0,  beta_k = beta_{k-1} + delta_k,  delta_k = sigma_f z_k
    u_p   = sigma_u z_p,  b_p = sigma_b w_p                               (non-centred)

**Ordinal (cumulative logit)**: P(y_r <= k) = logistic(c_k - eta_r), c_1 < ... < c_6; the same
likelihood as the synthetic participants (engine.synthetic.rating_model), so its parameters are directly
comparable with theirs (evaluated at the observed rating only: analysis.ordinal). **Gaussian** (for comparison with the reference study's GAMMs):
y_r ~ Normal(alpha + eta_r, sigma_y).

**Gaussian GAMM** (``gamm``; the reference study's Eq. 4, its section 4.1): each
participant gets random deviations of the whole smooth rather than a linear slope,

    y_r ~ Normal(alpha + f(d_r) + g_{p_r}(d_r) + beta_s s_r + beta_v v_r + gamma_{a_r} + u_p,
                 sigma_y)
    g_p(d) = sum_{k >= 2} B_k(d) b_pk,   b_pk = sigma_k w_pk,   w_pk ~ Normal(0, 1)

i.e. theta_ku = beta_k + b_ku with b_ku ~ N(0, sigma_k^2) for every basis function k (the
first is fixed at 0 for both, the intercepts absorbing the level); sigma_k ~ HalfNormal(1)
is a per-function penalty (sigma_k -> 0: no participant deviates in that direction). The
fixed smooth f is the random walk above; alpha ~ Normal(4, 2), sigma_y ~ HalfNormal(2).

A distance with few distinct values (L0: 1..4 changed features) gets at most that many basis
functions (``basis_size``): more would leave increments the data cannot inform.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt

from analysis import ordinal
from analysis.predictor import linear_predictor
from analysis.splines import SplineBasis
from data.columns import DISTANCE_COLUMNS as DISTANCES
from data.columns import PREFERENCE_COLUMNS, RATINGS_LONG

# The ratings (ratings_long's columns) a model explains, and the distances it explains them by.
OUTCOMES = RATINGS_LONG.pick("acceptance", "action")
_PID, _ARM = RATINGS_LONG.pick("participant_id", "arm")
Likelihood = Literal["ordinal", "gaussian", "gamm"]
LIKELIHOODS: tuple[str, ...] = ("ordinal", "gaussian", "gamm")


class AnalysisDataError(ValueError):
    """The ratings cannot be analysed as asked (missing columns, too few rows, ...).

    >>> from analysis import AnalysisDataError, prepare, simulate_ratings
    >>> ratings = simulate_ratings(participants=6, plans=4, seed=1)
    >>> try:
    ...     prepare(ratings.drop(columns=["acceptance"]), "acceptance", "l1_profile")
    ... except AnalysisDataError as e:
    ...     print("acceptance" in str(e))
    True
    """


@dataclass
class ModelData:
    """The arrays one model is built from (``prepare``)."""

    outcome: str
    distance: str
    y: np.ndarray  # ints 1..7
    d: np.ndarray
    participant: np.ndarray  # 0..P-1
    participants: list[str]
    arm: np.ndarray  # 0..A-1
    arms: list[str]
    terms: dict[str, np.ndarray] = field(default_factory=dict)  # satisfaction / violation
    basis: SplineBasis | None = None

    @property
    def d_centre(self) -> float:
        """The mean distance: random slopes act on d - d_centre (decorrelates u and b)."""
        return float(self.d.mean())

    @property
    def n(self) -> int:
        return int(len(self.y))


def basis_size(d: np.ndarray, k: int = 8) -> int:
    """Basis functions for distances ``d``: ``k``, but no more than the number of distinct
    values (and at least 4, the fewest a cubic B-spline basis has)."""
    return int(min(k, max(4, np.unique(d).size)))


def prepare(ratings: pd.DataFrame, outcome: str, distance: str, k: int = 8) -> ModelData:
    """Check and encode a ``ratings_long`` frame for one outcome and distance.

    >>> from analysis import prepare, simulate_ratings
    >>> data = prepare(simulate_ratings(participants=6, plans=4, seed=1), "acceptance",
    ...                "l1_profile")
    >>> len(data.y), data.arms, len(data.participants), sorted(data.terms)
    (24, ['a', 'b', 'c'], 6, ['satisfaction', 'violation'])

    Missing satisfaction or violation (a study without elicitation) contributes 0, as in the
    simulation; a study where a term is missing everywhere (or constant) drops the term.
    """
    if outcome not in OUTCOMES:
        raise AnalysisDataError(f"unknown outcome {outcome!r}; expected one of {OUTCOMES}")
    if distance not in DISTANCES:
        raise AnalysisDataError(
            f"unknown distance {distance!r}; expected one of {', '.join(DISTANCES)}"
        )
    need = {_PID, outcome, distance}
    missing = need - set(ratings.columns)
    if missing:
        raise AnalysisDataError(f"ratings lack the columns {sorted(missing)}")
    df = ratings.dropna(subset=[outcome, distance])
    if len(df) < 10 or df[_PID].nunique() < 2:
        raise AnalysisDataError(
            f"too few ratings to fit a model: {len(df)} rows from "
            f"{df[_PID].nunique()} participants (need at least 10 and 2)"
        )
    y = df[outcome].to_numpy(dtype=int)
    if y.min() < 1 or y.max() > 7:
        raise AnalysisDataError(f"{outcome} ratings must lie in 1..7")
    pcodes, participants = pd.factorize(df[_PID].astype(str))
    arms_col = df[_ARM].fillna("(none)").astype(str) if _ARM in df else pd.Series(
        ["(none)"] * len(df), index=df.index)
    acodes, arms = pd.factorize(arms_col, sort=True)
    d = df[distance].to_numpy(dtype=float)
    terms = {}
    for name in PREFERENCE_COLUMNS:
        if name in df:
            v = df[name].to_numpy(dtype=float)
            filled = np.where(np.isfinite(v), v, 0.0)
            if np.ptp(filled) > 0:
                terms[name] = filled
    return ModelData(outcome, distance, y, d, pcodes, list(participants), acodes, list(arms),
                     terms, SplineBasis.fit(d, basis_size(d, k)))


def model_arrays(data: ModelData, likelihood: Likelihood = "ordinal") -> dict[str, np.ndarray]:
    """The arrays ``build_model`` puts into the model, by name (the ratings as 0..6 for the
    ordinal likelihood, as they are for the Gaussian), each one the model uses and no other
    (nutpie's compiled model knows only those): with ``shared=True`` they are PyMC data
    containers of these names, which a compiled model can swap for another study's of the
    same shape (analysis.refit)."""
    assert data.basis is not None
    basis = data.basis(data.d)
    # the dense part of the linear predictor by columns (analysis.predictor): the spline
    # basis functions, then the terms
    columns = np.vstack([basis.T, *(data.terms[t] for t in data.terms)])
    arrays = {"design_columns": columns, "participant_index": data.participant.astype("int64"),
              "d_centred": data.d - data.d_centre}
    if len(data.arms) > 1:  # one arm: no arm effect, so no arm index in the model
        arrays["arm_index"] = data.arm.astype("int64")
    if likelihood == "gamm":
        arrays["basis_random"] = basis[:, 1:]
        del arrays["d_centred"]  # no linear slope: the random smooths replace it
    arrays["y_observed"] = (data.y - 1).astype("int64") if likelihood == "ordinal" else (
        data.y.astype(float))
    return arrays


# Parameterization: every hierarchical term is non-centred. A centred random walk (delta ~
# N(0, sigma_f)) mixes well when the data pin a strongly curved smooth but forms a funnel when
# the truth is flat; non-centred increments sampled with target_accept 0.95 (analysis.fit) do
# not (docs/benchmarks.md, "Findings behind the code"). The random slopes act on the centred
# distance (uncentred, u and b are correlated), so sigma_u is the participants' spread at the
# mean distance: with the simulation's parameters, sqrt(sd_u^2 + sd_b^2 mean(d)^2).
#
# Evaluation: eta is one fused operation (``analysis.predictor``: the design X = [B_c(d), s, v]
# times w = (beta_f, beta), plus the arm, intercept and slope effects, and its gradient as one
# pass; the design comes by columns, ``design_columns``), and the ordinal likelihood another
# (``analysis.ordinal``); a sampler evaluates the log-density and its gradient ~230,000 times
# per fit (4 chains x 1,800 draws x 31 leapfrog steps), so the graph holds no other pass over
# the ratings.
#
# Priors (weakly informative on the logit scale):
# c_1 ~ Normal(-2.5, 3), c_k = c_{k-1} + g_k with gaps g ~ HalfNormal(2) (ordered by
# construction); sigma_f ~ HalfNormal(1) (a first-order random-walk penalty: sigma_f
# -> 0 is a flat smooth; B_c: analysis.splines); z_k, z_p, w_p ~ Normal(0, 1); beta_s, beta_v ~ Normal(0, 1.5);
# gamma (all arms but the first) ~ Normal(0, 1); sigma_u ~ HalfNormal(2); sigma_b ~
# HalfNormal(1). Gaussian: alpha ~ Normal(4, 2), sigma_y ~ HalfNormal(2).
def build_model(
    data: ModelData, likelihood: Likelihood = "ordinal", *, keep_probabilities: bool = False,
    shared: bool = False,
) -> pm.Model:
    """The model of the module docstring for ``data``.

    ``keep_probabilities`` adds the ordinal model's per-rating category probabilities
    P(y_r = k) as the deterministic ``y_probs`` (n x 7 values per draw: 405 MB for 1,810
    ratings x 4,000 draws in float64), which only a ``full`` trace keeps; the posterior,
    the log-likelihood and posterior predictive draws do not need it. ``shared`` puts the
    data in as named containers (``model_arrays``), so the model compiled once can be refit
    on another study of the same shape (analysis.refit).

    >>> from analysis import build_model, prepare, simulate_ratings
    >>> data = prepare(simulate_ratings(participants=6, plans=4, seed=1), "acceptance",
    ...                "l1_profile")
    >>> model = build_model(data)          # a PyMC model; analysis.sample fits it
    >>> [v.name for v in model.observed_RVs], {"beta", "cut_first"} <= set(model.named_vars)
    (['y'], True)
    """
    if likelihood not in LIKELIHOODS:
        raise ValueError(f"likelihood must be one of {', '.join(LIKELIHOODS)}, got "
                         f"{likelihood!r}")
    arrays = model_arrays(data, likelihood)
    assert data.basis is not None
    k = data.basis.k
    coords = {"participant": data.participants, "arm": data.arms,
              "knot": list(range(1, k)), "term": list(data.terms)}
    with pm.Model(coords=coords) as model:
        x = {name: pm.Data(name, a) if shared else pt.as_tensor_variable(a)
             for name, a in arrays.items()}
        person = x["participant_index"]
        sigma_f = pm.HalfNormal("sigma_f", 1.0)
        z_f = pm.Normal("z_f", 0.0, 1.0, dims="knot")
        delta_f = pm.Deterministic("delta_f", sigma_f * z_f, dims="knot")
        w_parts = [pt.zeros(1), pt.cumsum(delta_f)]  # beta_f, then beta (the design's columns)
        if data.terms:
            w_parts.append(pm.Normal("beta", 0.0, 1.5, dims="term"))
        if len(data.arms) > 1:
            g = pm.Normal("gamma_raw", 0.0, 1.0, shape=len(data.arms) - 1)
            gamma = pm.Deterministic("gamma", pt.concatenate([pt.zeros(1), g]), dims="arm")
            arm = x["arm_index"]
        else:  # one arm: its effect is the cutpoints' / alpha's
            gamma, arm = pt.zeros(1), pt.zeros_like(person)
        sigma_u = pm.HalfNormal("sigma_u", 2.0)
        z_u = pm.Normal("z_u", 0.0, 1.0, dims="participant")
        if likelihood == "gamm":
            sigma_s = pm.HalfNormal("sigma_s", 1.0, dims="knot")
            w = pm.Normal("w_s", 0.0, 1.0, dims=("participant", "knot"))
            slope, d = pt.zeros(len(data.participants)), pt.zeros(person.shape, dtype="float64")
        else:
            sigma_b = pm.HalfNormal("sigma_b", 1.0)
            z_b = pm.Normal("z_b", 0.0, 1.0, dims="participant")
            slope, d = sigma_b * z_b, x["d_centred"]
        eta = linear_predictor(x["design_columns"], pt.concatenate(w_parts), arm, gamma, person,
                               sigma_u * z_u, slope, d)
        if likelihood == "gamm":
            eta = eta + (x["basis_random"] * (w * sigma_s)[person]).sum(axis=1)
        if likelihood == "ordinal":
            first = pm.Normal("cut_first", -2.5, 3.0)
            gaps = pm.HalfNormal("cut_gaps", 2.0, shape=5)
            cut = pm.Deterministic("cutpoints", pt.concatenate(
                [pt.stack([first]), first + pt.cumsum(gaps)]))
            ordinal.observe("y", eta, cut, x["y_observed"])
            if keep_probabilities:
                pm.Deterministic("y_probs", ordinal.probabilities(eta, cut))
        else:
            alpha = pm.Normal("alpha", 4.0, 2.0)
            sigma_y = pm.HalfNormal("sigma_y", 2.0)
            pm.Normal("y", alpha + eta, sigma_y, observed=x["y_observed"])
    return model


def smooth_draws(data: ModelData, delta: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """(draws, len(grid)) posterior draws of the centred smooth f on ``grid`` from draws of
    the random-walk increments ``delta`` (draws, k - 1)."""
    assert data.basis is not None
    beta_f = np.concatenate([np.zeros((len(delta), 1)), np.cumsum(delta, axis=1)], axis=1)
    return beta_f @ data.basis(grid).T
