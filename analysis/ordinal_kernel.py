"""The numeric kernels of the ordinal likelihood (``analysis.ordinal``): log P(y_r) of every
rating with its derivatives, and their chain rule, written so that numba's LLVM turns the
per-rating loops into SIMD code.

For rating r with observed category k = y_r in {0, ..., K-1}, cutpoints c_1 < ... < c_{K-1}
(c_0 = -inf, c_K = +inf), a = c_{k+1} - eta_r and b = c_k - eta_r (a - b = g_k, the
category's cutpoint gap):

    log P(y_r) = -softplus(-a) - softplus(b) + log(1 - e^-g_k)
               = L_k - max(-a, 0) - max(b, 0) - log((1 + e^-|a|)(1 + e^-|b|)),

using softplus(x) = max(x, 0) + log(1 + e^-|x|), with L_k = log(1 - e^-g_k) (0 for the two
edge categories). Its derivatives by the rating's upper and lower cutpoints are

    upper_r = d/dc_{k+1} = sigma(-a) + L'_k,    lower_r = d/dc_k = -sigma(b) - L'_k,
    L'_k = 1 / (e^g_k - 1),   sigma(-a) = 1 / (1 + e^a),   d/d eta_r = -(upper_r + lower_r),

and sigma(-a) = s_a / (1 + s_a) (a >= 0) or 1 / (1 + s_a) (a < 0) with s_a = e^-|a|, likewise
for b: every quantity follows from the two exponentials s_a, s_b and one logarithm of
(1 + s_a)(1 + s_b), which lies in [1, 4]. No difference of rounded probabilities is formed, so
the density stays exact in every tail (a rating far beyond its cutpoints has log P = -|a| or
-|b| to the last digit).

The chain rule (``observed_grad_kernel``) is one loop that adds each rating's share to its two
cutpoints; both kernels are plain Python compiled by numba, for PyTensor's numba backend
(nutpie) and for ``perform`` (PyMC's C backend).
"""

from __future__ import annotations

import math

import numba
import numpy as np

# Stands in for -inf / +inf outside the cutpoints: e^-(1e6) is 0 and, unlike infinities, never
# makes inf - inf.
BEYOND = 1.0e6
EXP_FLOOR = -50.0
_LN2_HI = 6.93147180369123816490e-01  # ln 2 to 32 bits: k * _LN2_HI is exact for |k| < 2^20
_LN2_LO = 1.90821492927058770002e-10  # ln 2 - _LN2_HI
_INV_LN2 = 1.44269504088896338700e00
_LN2 = 0.6931471805599453
_SQRT2 = 1.4142135623730951


@numba.njit(inline="always")
def _exp_parts(v: float) -> tuple[float, int]:
    """(e^r, the IEEE-754 bits of 2^k) with e^v = e^r 2^k, for v <= 0 (module docstring).

    Why the elementary functions are written out (``_exp_parts``, ``_log_1_to_4``): a call to the
    C library's exp or log1p per rating keeps the loop scalar (numba has no vector math library
    here: pip's llvmlite has no SVML), and those calls were most of the kernel's time
    (22 of 31 microseconds for 1,810 ratings). As polynomials on plain arithmetic the loops
    vectorize (AVX-512: 8 ratings per instruction); the kernel takes ~13 microseconds and the
    results agree with libm to a few units in the last place (tests/analysis/test_ordinal.py):

    - e^v for v <= 0: v is clamped at ``EXP_FLOOR`` = -50 (e^-50 = 1.9e-22: where s_a or s_b is
      that small it only ever appears as 1 + s, which rounds to 1, or as a derivative of that
      size), reduced as v = k ln2 + r with k = round(v / ln2) and |r| <= ln2 / 2 (Cody-Waite:
      ln2 split into a high part exact in k * ln2_hi and a low part), e^r by its Taylor
      polynomial to degree 13 (truncation error < |r|^14 / 14! < 4e-18, relative), and 2^k
      assembled in the IEEE-754 exponent field: ``_exp_parts`` returns (e^r, bits of 2^k) and the
      caller multiplies e^r by the bits read as a float (an int64 array viewed as float64).
    - log x for 1 <= x <= 4: x = 2^e m with e in {0, 1, 2} chosen so that m lies in
      [1/sqrt2, sqrt2), and log m = 2 artanh(f) = 2 (f + f^3/3 + f^5/5 + ...) with
      f = (m - 1)/(m + 1), |f| <= 3 - 2 sqrt2 = 0.172; the series to f^23 leaves < 1e-19.
      (log x rather than log1p: the result enters log P, an O(1) quantity, with an absolute
      error below 2e-16 either way.)
    """
    v = max(v, EXP_FLOOR)
    k = math.floor(v * _INV_LN2 + 0.5)
    r = (v - k * _LN2_HI) - k * _LN2_LO
    p = 1.0 + r * (1.0 + r * (1 / 2 + r * (1 / 6 + r * (1 / 24 + r * (1 / 120 + r * (
        1 / 720 + r * (1 / 5040 + r * (1 / 40320 + r * (1 / 362880 + r * (
            1 / 3628800 + r * (1 / 39916800 + r * (1 / 479001600 + r * (
                1 / 6227020800)))))))))))))
    return p, (np.int64(k) + 1023) << 52


@numba.njit(inline="always")
def _log_1_to_4(x: float) -> float:
    """log x for 1 <= x <= 4 (module docstring)."""
    above = x >= _SQRT2
    above2 = x >= 2.0 * _SQRT2
    e = (1.0 if above else 0.0) + (1.0 if above2 else 0.0)
    m = x * (0.25 if above2 else (0.5 if above else 1.0))
    f = (m - 1.0) / (m + 1.0)
    f2 = f * f
    s = 1.0 + f2 * (1 / 3 + f2 * (1 / 5 + f2 * (1 / 7 + f2 * (1 / 9 + f2 * (1 / 11 + f2 * (
        1 / 13 + f2 * (1 / 15 + f2 * (1 / 17 + f2 * (1 / 19 + f2 * (1 / 21 + f2 * (
            1 / 23)))))))))))
    return e * _LN2 + 2.0 * f * s


def exp_nonpositive(v: np.ndarray) -> np.ndarray:
    """e^v elementwise for v <= 0 through ``_exp_parts`` (what the kernel computes; tests)."""
    return _exp_array(np.asarray(v, dtype=np.float64))


@numba.njit(cache=True)
def _exp_array(v: np.ndarray) -> np.ndarray:
    n = v.shape[0]
    p = np.empty(n)
    bits = np.empty(n, np.int64)
    for i in range(n):
        p[i], bits[i] = _exp_parts(v[i])
    return p * bits.view(np.float64)


@numba.njit(cache=True)
def log_1_to_4(x: np.ndarray) -> np.ndarray:
    """log x elementwise for 1 <= x <= 4 through ``_log_1_to_4`` (tests)."""
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = _log_1_to_4(x[i])
    return out


def observed_kernel(y: np.ndarray, eta: np.ndarray, cut: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per rating r: (log P(y_r), upper_r, lower_r) of the module docstring; a rating outside
    0..K-1 gets log P = -inf and zero derivatives."""
    k_max = cut.shape[0]  # categories 0..k_max
    n = eta.shape[0]
    if y.shape[0] != n:
        raise ValueError("ObservedLogp: ratings and latent scores differ in length")
    c = np.empty(k_max + 2)  # c_0 .. c_K
    c[0] = -BEYOND
    c[k_max + 1] = BEYOND
    c[1:k_max + 1] = cut
    log_gap = np.zeros(k_max + 1)
    d_gap = np.zeros(k_max + 1)
    for k in range(1, k_max):
        gap = cut[k] - cut[k - 1]
        log_gap[k] = math.log(-math.expm1(-gap))
        d_gap[k] = 1.0 / math.expm1(gap)
    # one loop of gathers, one of exponentials, one of the rest: the last two vectorize
    a = np.empty(n)
    b = np.empty(n)
    lg = np.empty(n)
    dg = np.empty(n)
    outside = False
    for r in range(n):
        k = y[r]
        outside |= (k < 0) | (k > k_max)
        k = min(max(k, 0), k_max)
        a[r] = c[k + 1] - eta[r]
        b[r] = c[k] - eta[r]
        lg[r] = log_gap[k]
        dg[r] = d_gap[k]
    pa = np.empty(n)
    pb = np.empty(n)
    bits_a = np.empty(n, np.int64)
    bits_b = np.empty(n, np.int64)
    for r in range(n):
        pa[r], bits_a[r] = _exp_parts(-abs(a[r]))
        pb[r], bits_b[r] = _exp_parts(-abs(b[r]))
    scale_a = bits_a.view(np.float64)
    scale_b = bits_b.view(np.float64)
    lp = np.empty(n)
    upper = np.empty(n)
    lower = np.empty(n)
    for r in range(n):
        ar = a[r]
        br = b[r]
        sa = pa[r] * scale_a[r]
        sb = pb[r] * scale_b[r]
        inv_a = 1.0 / (1.0 + sa)
        inv_b = 1.0 / (1.0 + sb)
        lp[r] = lg[r] - max(-ar, 0.0) - max(br, 0.0) - _log_1_to_4((1.0 + sa) * (1.0 + sb))
        upper[r] = (1.0 if ar < 0.0 else sa) * inv_a + dg[r]
        lower[r] = -(1.0 if br > 0.0 else sb) * inv_b - dg[r]
    if outside:
        for r in range(n):
            if y[r] < 0 or y[r] > k_max:
                lp[r] = -np.inf
                upper[r] = 0.0
                lower[r] = 0.0
    return lp, upper, lower


def observed_grad_kernel(g: np.ndarray, y: np.ndarray, upper: np.ndarray, lower: np.ndarray,
                         cut: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The chain rule of ``observed_kernel`` for the derivatives ``g`` by its
    log-probabilities: d/d eta_r = -g_r (upper_r + lower_r); rating r adds g_r upper_r to its
    upper cutpoint c_{y+1} (index y_r of the cutpoint vector, none for the top category) and
    g_r lower_r to its lower one c_y (index y_r - 1, none for the bottom category). ``cut``
    gives the number of cutpoints only."""
    n = y.shape[0]
    k_cut = cut.shape[0]
    if g.shape[0] != n or upper.shape[0] != n or lower.shape[0] != n:
        raise ValueError("ObservedLogpGrad: gradients and ratings differ in length")
    d_eta = np.empty(n)
    d_cut = np.zeros(k_cut)
    for r in range(n):
        gu = g[r] * upper[r]
        gl = g[r] * lower[r]
        d_eta[r] = -(gu + gl)
        k = y[r]
        if 0 <= k < k_cut:
            d_cut[k] += gu
        if 1 <= k <= k_cut:
            d_cut[k - 1] += gl
    return d_eta, d_cut


# ``perform`` (PyMC's C backend); numba's cache notices an edit of this file by itself
value_and_derivatives = numba.njit(cache=True, error_model="numpy")(observed_kernel)
chain_rule = numba.njit(cache=True, error_model="numpy")(observed_grad_kernel)
