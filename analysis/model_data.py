"""The data one analysis model is fitted to: a ``ratings_long`` frame checked and encoded for
one outcome and one distance (``prepare`` -> ``ModelData``), and the smooth's draws on a grid.

Every model family (analysis.families) is built from a ``ModelData``: the ratings y_r in
1..7, the distance d_r, the participant and arm codes, the satisfaction / violation terms
and the spline basis B_c of the distance (analysis.splines). ``rows`` keeps the ratings the
arrays were made from, in the same order, so a family can read a further column of them
(e.g. the position a plan was shown at). A distance with few distinct values (L0: 1..4
changed features) gets at most that many basis functions (``basis_size``): more would leave
increments the data cannot inform.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis.splines import SplineBasis
from data.columns import DISTANCE_COLUMNS as DISTANCES
from data.columns import PREFERENCE_COLUMNS, RATINGS_LONG

# The ratings (ratings_long's columns) a model explains, and the distances it explains them by.
OUTCOMES = RATINGS_LONG.pick("acceptance", "action")
_PID, _ARM = RATINGS_LONG.pick("participant_id", "arm")


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


class SettingError(AnalysisDataError):
    """A setting the analysis was given cannot be used; ``setting`` names which one
    (``backend``, ``ess_target``, ``distance``), so a caller can name its own option for it.

    >>> from analysis.model_data import SettingError
    >>> SettingError("unknown backend 'stan'", "backend").setting
    'backend'
    """

    def __init__(self, message: str, setting: str) -> None:
        super().__init__(message)
        self.setting = setting


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
    rows: pd.DataFrame | None = field(default=None, repr=False, compare=False)  # in order

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
                     terms, SplineBasis.fit(d, basis_size(d, k)), df)


def smooth_coefficients(delta: np.ndarray) -> np.ndarray:
    """(draws, k) the smooth's basis coefficients beta_f = (0, cumsum(delta)) from draws of
    the random-walk increments ``delta`` (draws, k - 1)."""
    return np.concatenate([np.zeros((len(delta), 1)), np.cumsum(delta, axis=1)], axis=1)


def smooth_draws(data: ModelData, delta: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """(draws, len(grid)) posterior draws of the centred smooth f on ``grid`` from draws of
    the random-walk increments ``delta`` (draws, k - 1)."""
    assert data.basis is not None
    return smooth_coefficients(delta) @ data.basis(grid).T
