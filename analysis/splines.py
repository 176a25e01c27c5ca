"""Centred cubic B-spline bases for the penalized smooth of a distance.

For distances d_1..d_n and K basis functions B_1..B_K (cubic, equally spaced knots over
[min d, max d]), the design matrix is B_ik = B_k(d_i); the smooth is f(d) = sum_k B_k(d) beta_k.
Because sum_k B_k(d) = 1, a constant beta only shifts f, which the ordinal cutpoints absorb;
the model fixes beta_1 = 0 and centres f over the data (``SplineBasis.centre``), so f(d) says
how much higher or lower the latent score is at d than on average.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import BSpline


@dataclass(frozen=True)
class SplineBasis:
    """Cubic B-splines with ``k`` basis functions on [lo, hi]; ``centre`` is the data mean
    of each basis column (subtracted, so the smooth has mean 0 over the data)."""

    lo: float
    hi: float
    k: int
    centre: np.ndarray

    @classmethod
    def fit(cls, d: np.ndarray, k: int = 8) -> SplineBasis:
        d = np.asarray(d, dtype=float)
        if d.size == 0 or not np.isfinite(d).all():
            raise ValueError("distances must be finite and not empty")
        if k < 4:
            raise ValueError(f"a cubic B-spline basis needs k >= 4 functions, got {k}")
        lo, hi = float(d.min()), float(d.max())
        if hi <= lo:
            hi = lo + 1.0  # all distances equal: any basis; the smooth is then a constant
        raw = cls(lo, hi, k, np.zeros(k))
        return cls(lo, hi, k, raw.raw(d).mean(axis=0))

    @property
    def knots(self) -> np.ndarray:
        inner = np.linspace(self.lo, self.hi, self.k - 2)
        step = inner[1] - inner[0]
        return np.concatenate([self.lo - step * np.arange(3, 0, -1), inner,
                               self.hi + step * np.arange(1, 4)])

    def raw(self, d: np.ndarray) -> np.ndarray:
        """(n, k) uncentred basis (distances clipped into [lo, hi])."""
        x = np.clip(np.asarray(d, dtype=float), self.lo, self.hi)
        return BSpline.design_matrix(x, self.knots, 3).toarray()

    def __call__(self, d: np.ndarray) -> np.ndarray:
        """(n, k) centred basis."""
        return self.raw(d) - self.centre[None, :]
