"""The semi-synthetic Loan world (Karimi et al. 2020; CARMA; iCARMA), exact and invertible.

Variables, in column order: gender G, age A, education E, loan_amount L, loan_duration D,
income I, savings S. With sigma the logistic sigmoid:

    G = U_G,                      U_G ~ Bernoulli(0.5)
    A = -35 + U_A,                U_A ~ Gamma(shape 10, scale 3.5)
    E = -0.5 + sigma(-1 + 0.5 G + sigma(0.1 A) + U_E),   U_E ~ N(0, 0.5^2)
    L = 1 + 0.01 (A - 5)(5 - A) + (1 - G) + U_L,         U_L ~ N(0, 2^2)
    D = -1 + 0.1 A + 2 (1 - G) + L + U_D,                U_D ~ N(0, 3^2)
    I = -4 + 0.1 (A + 35) + 2 G + G E + U_I,             U_I ~ N(0, 2^2)
    S = -4 + 1.5 * 1[I > 0] * I + U_S,                   U_S ~ N(0, 5^2)

Label logit: l(x) = 0.3 (-L - D + I + S + sgn(I, S) I S), sgn = +1 iff I >= 0 and S >= 0,
else -1, and P(Y = 1 | x) = sigma(l(x)). The published CARMA samples label deterministically,
Y = 1[l(x) >= 0] (the scenario's label rule, engine.scenarios.samples).

Abduction is exact; its Jacobian is 1 except for E, where u_E = logit(E + 0.5) + 1 - 0.5 G - sigma(0.1 A) and |du_E/dE| = 1 / (z (1 - z)), z = E + 0.5.
Gender is discrete: its log-mass log 0.5 enters log_prob as a constant.

The scenario files ``loan.yaml`` (and its variants ``loan-carma``, ``loan-bernoulli``) name
this module's ``LoanSCM`` as their exact world and state the features below.

Display maps (monotone, invertible; documented for participants' realistic units): age in
years = A + 35; education in years of schooling = 16 + 8 E (12..20); loan amount in dollars =
15,000 exp(0.15 L); loan duration in months = 24 exp(0.08 D); annual income in dollars =
40,000 exp(0.12 I); savings in dollars = 10,000 exp(0.1 S). Plans show a loan of at least
$1,000; other items stay within the training split's 0.1% / 99.9% quantiles
(``Scenario.display_bounds``).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from engine.scm import ArrayLike, StructuralCausalModel, WorldModelInputError, as_batch

G, A, E, L, D, INC, S = range(7)
FEATURES = ("gender", "age", "education", "loan_amount", "loan_duration", "income", "savings")
_NOISE_SD = {E: 0.5, L: 2.0, D: 3.0, INC: 2.0, S: 5.0}
_GAMMA_SHAPE, _GAMMA_SCALE = 10.0, 3.5
_LOG_HALF = math.log(0.5)


def _normal_log_pdf(u: Tensor, sd: float) -> Tensor:
    return -0.5 * (u / sd) ** 2 - math.log(sd) - 0.5 * math.log(2 * math.pi)


class LoanSCM(StructuralCausalModel):
    """The exact Loan SCM (equations in the module docstring)."""

    feature_names = FEATURES
    parents = {
        G: (),
        A: (),
        E: (G, A),
        L: (G, A),
        D: (G, A, L),
        INC: (G, A, E),
        S: (INC,),
    }
    immutable = (G, A)
    columnwise = True  # equation reads x[:, k] only (StructuralCausalModel.shift_pass)

    def sample_noise(self, n: int, rng: np.random.Generator) -> Tensor:
        u = np.empty((n, 7))
        u[:, G] = rng.binomial(1, 0.5, size=n)
        u[:, A] = rng.gamma(_GAMMA_SHAPE, _GAMMA_SCALE, size=n)
        for j, sd in _NOISE_SD.items():
            u[:, j] = rng.normal(0.0, sd, size=n)
        return torch.from_numpy(u)

    def equation(self, j: int, x: Tensor, u_j: Tensor) -> Tensor:
        g, a = x[:, G], x[:, A]
        if j == G:
            return u_j
        if j == A:
            return u_j - 35.0
        if j == E:
            return -0.5 + torch.sigmoid(-1.0 + 0.5 * g + torch.sigmoid(0.1 * a) + u_j)
        if j == L:
            return 1.0 + 0.01 * (a - 5.0) * (5.0 - a) + (1.0 - g) + u_j
        if j == D:
            return -1.0 + 0.1 * a + 2.0 * (1.0 - g) + x[:, L] + u_j
        if j == INC:
            return -4.0 + 0.1 * (a + 35.0) + 2.0 * g + g * x[:, E] + u_j
        if j == S:
            i = x[:, INC]
            return -4.0 + 1.5 * (i > 0).to(i.dtype) * i + u_j
        raise IndexError(j)

    def inverse_equation(self, j: int, x: Tensor) -> Tensor:
        if j == E:
            z = x[:, E] + 0.5
            logit = torch.log(z) - torch.log1p(-z)
            return logit + 1.0 - 0.5 * x[:, G] - torch.sigmoid(0.1 * x[:, A])
        # Every other equation is additive in its noise: u_j = x_j - f_j(x_pa, 0).
        return x[:, j] - self.equation(j, x, torch.zeros_like(x[:, j]))

    def noise_log_prob(self, u: Tensor) -> Tensor:
        out = torch.empty_like(u)
        out[:, G] = _LOG_HALF
        ua = u[:, A]
        out[:, A] = (
            (_GAMMA_SHAPE - 1.0) * torch.log(ua)
            - ua / _GAMMA_SCALE
            - math.lgamma(_GAMMA_SHAPE)
            - _GAMMA_SHAPE * math.log(_GAMMA_SCALE)
        )
        for j, sd in _NOISE_SD.items():
            out[:, j] = _normal_log_pdf(u[:, j], sd)
        return out

    def log_abs_det_jacobian(self, x: Tensor) -> Tensor:
        z = x[:, E] + 0.5
        return -torch.log(z) - torch.log1p(-z)

    def check_support(self, x: Tensor, name: str) -> None:
        bad_g = ~((x[:, G] == 0) | (x[:, G] == 1))
        if bad_g.any():
            raise WorldModelInputError(
                f"{name}: gender must be 0 or 1 (row {int(bad_g.nonzero()[0])})"
            )
        bad_a = x[:, A] <= -35.0
        if bad_a.any():
            raise WorldModelInputError(
                f"{name}: age must be > -35 model units (0 years) (row {int(bad_a.nonzero()[0])})"
            )
        bad_e = (x[:, E] <= -0.5) | (x[:, E] >= 0.5)
        if bad_e.any():
            raise WorldModelInputError(
                f"{name}: education must lie strictly inside (-0.5, 0.5) model units "
                f"(row {int(bad_e.nonzero()[0])})"
            )

    def label_logit(self, x: ArrayLike) -> Tensor:
        t, dtype = as_batch(x, self.d)
        inc, sav = t[:, INC], t[:, S]
        sgn = torch.where((inc >= 0) & (sav >= 0), 1.0, -1.0).to(t.dtype)
        return (0.3 * (-t[:, L] - t[:, D] + inc + sav + sgn * inc * sav)).to(dtype)
