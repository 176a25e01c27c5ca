"""The ordinal (cumulative-logit) rating model of synthetic participants (docs/protocol-reference.md, "Synthetic participants").

For a plan shown to participant p, with distance d (one of the stored L0/L1 distances),
preference satisfaction s in [0, 1] and violation v in {0, 1} (the plan uses a feature the
person cannot change), the latent score of one 7-point rating is

    eta = a + f(d) + k s - nu v + u_p + b_p d,     u_p ~ N(0, sd_u^2),  b_p ~ N(0, sd_b^2)

with f(d) = -drop (1 - exp(-d / scale)) (flat for drop = 0; otherwise steep over small d,
then flat), and the rating is

    rating = 1 + #{k : c_k < eta + e},   e ~ Logistic(0, 1),   c_1 < ... < c_6,

i.e. P(rating <= k) = sigmoid(c_k - eta): the cumulative-logit likelihood the analysis fits.
A missing satisfaction or violation (no elicitation) contributes 0.

``RatingBehaviour.reference()`` mimics the reference user study (Tominaga et al.): acceptance
flat in distance with mean near 3.3, action falling steeply over the smallest distances then
flat with mean near 2.6, large participant effects. Pure numpy: the analysis layer uses it to
simulate data with known truth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit

from engine.metric_names import DISTANCES

# Cutpoints symmetric around 0, one logit apart: eta = 0 gives a mean rating of 4.
DEFAULT_CUTPOINTS: tuple[float, float, float, float, float, float] = (
    -2.5, -1.5, -0.5, 0.5, 1.5, 2.5
)
CURVES_OF: tuple[str, ...] = ("typical", "population")  # whose mean rating the curve is
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(40)  # z ~ N(0, 1): sum w g(z) / sqrt(2 pi)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def _finite_or_zero(a: np.ndarray | float) -> np.ndarray:
    arr = np.asarray(a, dtype=float)
    return np.where(np.isfinite(arr), arr, 0.0)


@dataclass(frozen=True)
class DistanceCurve:
    """f(d) = -drop (1 - exp(-d / scale)): 0 at d = 0, -drop far away (module docstring).

    >>> from engine.synthetic import DistanceCurve
    >>> f = DistanceCurve(drop=1.6, scale=0.1)
    >>> [round(float(v), 3) for v in f([0.0, 0.1, 10.0])]     # 0 near, -drop far away
    [-0.0, -1.011, -1.6]
    """

    drop: float = 0.0
    scale: float = 0.15

    def __post_init__(self) -> None:
        if self.scale <= 0:
            raise ValueError(f"distance curve scale must be positive, got {self.scale}")

    def __call__(self, d: np.ndarray) -> np.ndarray:
        d = np.asarray(d, dtype=float)
        return -self.drop * (1.0 - np.exp(-d / self.scale))


@dataclass(frozen=True)
class OutcomeModel:
    """One 7-point rating (acceptance or action); parameters as in the module docstring.

    >>> import numpy as np
    >>> from engine.synthetic import OutcomeModel
    >>> m = OutcomeModel(intercept=0.0)
    >>> p = m.probabilities(np.array([0.0]))      # 7 categories of a 7-point rating
    >>> p.shape, round(float(p.sum()), 6), round(float(m.expected(np.array([0.0]))[0]), 6)
    ((1, 7), 1.0, 4.0)
    >>> m.sample(np.array([0.0, 50.0]), np.random.default_rng(0))[1]   # far above the cutpoints
    np.int64(7)

    **In the researcher's terms** (``from_ratings``): the *typical* participant (u_p = b_p = 0)
    rating a plan that meets no stated preference and violates none (s = v = 0) has the mean
    rating E(d) = sum_k k P(rating = k | eta = a + f(d)). Three numbers fix the curve:
    ``at_zero`` = E(0), ``at_far`` = E(infinity) and ``half_distance`` h, where the mean rating
    is halfway: E(h) = (at_zero + at_far) / 2. Then a = E^{-1}(at_zero), drop = a -
    E^{-1}(at_far) and, with m = E^{-1}((at_zero + at_far) / 2), f(h) = m - a gives
    scale = -h / ln(1 - (a - m) / drop). E is increasing in eta, so each inverse is one root
    search.

    **Whose curve** (``curve_of``): by default (``typical``) E(d) above is the typical
    participant's. With ``population`` it is the population's mean rating instead, averaged over
    the participant effects: the location l(d) replacing a + f(d) solves

        E_z[ E(l(d) + sigma(d) z) ] = E(a + f(d)),   sigma(d)^2 = sd_u^2 + sd_b^2 d^2,  z ~ N(0, 1)

    (u_p + b_p d is normal with that variance; the outer mean by 40-point Gauss-Hermite
    quadrature, l(d) by bisection, since the left side increases in l). Why: the participant
    spread grows with d when sd_b > 0, and through the cutpoints a wider spread pulls the mean
    rating toward the middle of the scale, so a flat typical curve is not a flat mean rating.
    A Gaussian mixed model (mgcv's GAMM, Tominaga et al.'s analysis) estimates the mean
    rating's curve, so a truth stated as "mean acceptance does not change with distance" is a
    ``population`` curve.
    """

    intercept: float
    curve: DistanceCurve = field(default_factory=DistanceCurve)
    satisfaction: float = 0.0
    violation: float = 0.0
    sd_intercept: float = 1.0
    sd_slope: float = 0.0
    cutpoints: tuple[float, float, float, float, float, float] = DEFAULT_CUTPOINTS
    curve_of: Literal["typical", "population"] = "typical"

    def __post_init__(self) -> None:
        c = np.asarray(self.cutpoints, dtype=float)
        if c.shape != (6,) or not np.all(np.diff(c) > 0) or not np.isfinite(c).all():
            raise ValueError(f"cutpoints must be 6 strictly increasing numbers, got {self.cutpoints}")
        if self.sd_intercept < 0 or self.sd_slope < 0:
            raise ValueError("random-effect standard deviations must be >= 0")
        if self.curve_of not in CURVES_OF:
            raise ValueError(f"curve_of must be one of {', '.join(CURVES_OF)}, got "
                             f"{self.curve_of!r}")

    def location(self, d: np.ndarray) -> np.ndarray:
        """The latent score of a participant with u = b = 0 at distance d, s = v = 0:
        a + f(d) (``typical``) or l(d) (``population``; module docstring).

        >>> import numpy as np
        >>> from engine.synthetic import OutcomeModel
        >>> flat = OutcomeModel(intercept=-0.9, sd_intercept=1.5, sd_slope=0.3,
        ...                     curve_of="population")
        >>> flat.location(np.array([0.0, 6.0])).round(2).tolist()  # lower far away
        [-1.01, -1.18]
        >>> flat.population_mean(np.array([0.0, 6.0])).round(2).tolist()  # flat
        [3.19, 3.19]
        """
        d = np.asarray(d, dtype=float)
        given = self.intercept + self.curve(d)
        if self.curve_of == "typical":
            return given
        pairs, back = np.unique(np.stack([given.ravel(), d.ravel()]), axis=1,
                                return_inverse=True)
        target, sigma = self.expected(pairs[0]), self._spread(pairs[1])
        lo, hi = np.full(target.shape, -40.0), np.full(target.shape, 40.0)
        for _ in range(60):  # bisection: 80 / 2^60 is far below float precision
            mid = (lo + hi) / 2
            above = self._mixed_mean(mid, sigma) > target
            hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
        return ((lo + hi) / 2)[np.ravel(back)].reshape(d.shape)

    def population_mean(self, d: np.ndarray) -> np.ndarray:
        """The mean rating over participants (u_p, b_p drawn) at distance d, s = v = 0."""
        d = np.asarray(d, dtype=float)
        return self._mixed_mean(self.location(d).ravel(), self._spread(d.ravel())).reshape(
            d.shape)

    def _spread(self, d: np.ndarray) -> np.ndarray:
        return np.sqrt(self.sd_intercept ** 2 + (self.sd_slope * d) ** 2)

    def _mixed_mean(self, loc: np.ndarray, sigma: np.ndarray) -> np.ndarray:
        """E_z[E(loc + sigma z)], z ~ N(0, 1), by Gauss-Hermite quadrature."""
        eta = loc[:, None] + sigma[:, None] * _NODES[None, :]
        return (self.expected(eta.ravel()).reshape(eta.shape) * _WEIGHTS).sum(axis=1)

    def latent(
        self,
        d: np.ndarray,
        satisfaction: np.ndarray | float,
        violation: np.ndarray | float,
        u: np.ndarray | float = 0.0,
        b: np.ndarray | float = 0.0,
    ) -> np.ndarray:
        """eta per rating (missing satisfaction / violation count as 0)."""
        d = np.asarray(d, dtype=float)
        return (
            self.location(d)
            + self.satisfaction * _finite_or_zero(satisfaction)
            - self.violation * _finite_or_zero(violation)
            + np.asarray(u, dtype=float)
            + np.asarray(b, dtype=float) * d
        )

    def probabilities(self, eta: np.ndarray) -> np.ndarray:
        """(n, 7) category probabilities: P(k) = sigmoid(c_k - eta) - sigmoid(c_{k-1} - eta)."""
        eta = np.atleast_1d(np.asarray(eta, dtype=float))
        cum = expit(np.asarray(self.cutpoints)[None, :] - eta[:, None])
        cum = np.concatenate([np.zeros((len(eta), 1)), cum, np.ones((len(eta), 1))], axis=1)
        return np.diff(cum, axis=1)

    def expected(self, eta: np.ndarray) -> np.ndarray:
        """The mean rating for each latent score."""
        return self.probabilities(eta) @ np.arange(1, 8)

    def typical_curve(self, d: np.ndarray) -> np.ndarray:
        """E(d): the typical participant's mean rating of a plan at distance d with no
        stated preference met or violated (module docstring; with ``curve_of:
        population`` that participant's curve is l(d)'s, not the stated one)."""
        return self.expected(self.location(np.asarray(d, dtype=float)))

    def sample(self, eta: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Ratings 1..7: 1 + number of cutpoints below eta + logistic noise."""
        eta = np.atleast_1d(np.asarray(eta, dtype=float))
        noisy = eta + rng.logistic(size=eta.shape)
        return 1 + (np.asarray(self.cutpoints)[None, :] < noisy[:, None]).sum(axis=1)


def latent_for_mean(mean: float, cutpoints: tuple[float, ...] = DEFAULT_CUTPOINTS) -> float:
    """The latent score eta whose expected rating is ``mean`` (1 < mean < 7)."""
    if not 1.0 < mean < 7.0:
        raise ValueError(f"a mean rating must lie strictly between 1 and 7, got {mean}")
    probe = OutcomeModel(intercept=0.0, cutpoints=tuple(cutpoints))  # type: ignore[arg-type]
    return float(brentq(lambda eta: float(probe.expected(np.array([eta]))[0]) - mean,
                        -50.0, 50.0, xtol=1e-10))


def from_ratings(
    at_zero: float, at_far: float, half_distance: float,
    cutpoints: tuple[float, ...] = DEFAULT_CUTPOINTS,
) -> tuple[float, DistanceCurve]:
    """(intercept a, curve f) giving the typical mean ratings ``at_zero`` at d = 0 and
    ``at_far`` far away, half of the fall at ``half_distance`` (module docstring)."""
    if half_distance <= 0:
        raise ValueError(f"half_distance must be positive, got {half_distance}")
    a = latent_for_mean(at_zero, cutpoints)
    drop = a - latent_for_mean(at_far, cutpoints)
    return a, DistanceCurve(drop=drop, scale=curve_scale(a, drop, half_distance,
                                                         (at_zero + at_far) / 2, cutpoints))


def curve_scale(a: float, drop: float, half_distance: float, mid: float,
                cutpoints: tuple[float, ...] = DEFAULT_CUTPOINTS) -> float:
    """The scale that puts the mean rating ``mid`` at ``half_distance`` (module docstring);
    a flat curve (drop = 0) has no scale to fit (the ln 2 of a latent half)."""
    if abs(drop) < 1e-12:
        return half_distance / math.log(2.0)
    share = (a - latent_for_mean(mid, cutpoints)) / drop
    return -half_distance / math.log(1.0 - share)


@dataclass(frozen=True)
class RatingBehaviour:
    """Both ratings of a synthetic participant and the distance that drives them.

    >>> from engine.synthetic import RatingBehaviour
    >>> ref = RatingBehaviour.reference()   # calibrated to Tominaga et al.'s mean ratings
    >>> ref.acceptance.intercept, ref.action.curve.drop, ref.distance
    (-0.88, 1.6, 'l1_profile')
    >>> RatingBehaviour(ref.acceptance, ref.action, distance="euclid")
    Traceback (most recent call last):
    ...
    ValueError: unknown distance 'euclid'; expected one of ...
    """

    acceptance: OutcomeModel
    action: OutcomeModel
    distance: str = "l1_profile"

    def __post_init__(self) -> None:
        if self.distance not in DISTANCES:
            raise ValueError(
                f"unknown distance {self.distance!r}; expected one of {', '.join(DISTANCES)}"
            )

    @classmethod
    def reference(cls) -> RatingBehaviour:
        """Defaults mimicking Tominaga et al. (module docstring).

        Intercepts are calibrated (Monte Carlo) so that with distances uniform on [0, 0.8]
        and no elicitation the mean ratings are 3.3 (acceptance) and 2.6 (action).
        """
        return cls(
            acceptance=OutcomeModel(
                intercept=-0.88,
                curve=DistanceCurve(drop=0.0),
                satisfaction=0.5,
                violation=0.8,
                sd_intercept=1.5,
                sd_slope=0.0,
            ),
            action=OutcomeModel(
                intercept=-0.45,
                curve=DistanceCurve(drop=1.6, scale=0.1),
                satisfaction=0.8,
                violation=1.5,
                sd_intercept=1.5,
                sd_slope=0.5,
            ),
        )

    @classmethod
    def from_dict(cls, data: dict) -> RatingBehaviour:
        """The inverse of ``dataclasses.asdict`` (a stored simulated study's behaviour)."""
        def outcome(o: dict) -> OutcomeModel:
            return OutcomeModel(intercept=o["intercept"], curve=DistanceCurve(**o["curve"]),
                                satisfaction=o["satisfaction"], violation=o["violation"],
                                sd_intercept=o["sd_intercept"], sd_slope=o["sd_slope"],
                                cutpoints=tuple(o["cutpoints"]),  # type: ignore[arg-type]
                                curve_of=o.get("curve_of", "typical"))
        return cls(acceptance=outcome(data["acceptance"]), action=outcome(data["action"]),
                   distance=data.get("distance", "l1_profile"))

    def draw_effects(self, n_participants: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Participant random effects: u_acc, b_acc, u_act, b_act, each (n_participants,)."""
        if n_participants < 0:
            raise ValueError(f"n_participants must be >= 0, got {n_participants}")
        out: dict[str, np.ndarray] = {}
        for name, model in (("acc", self.acceptance), ("act", self.action)):
            out[f"u_{name}"] = rng.normal(0.0, model.sd_intercept, n_participants)
            out[f"b_{name}"] = rng.normal(0.0, model.sd_slope, n_participants)
        return out
