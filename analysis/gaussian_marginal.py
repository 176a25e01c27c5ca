"""The Gaussian families' likelihood with each participant's random effects integrated out.

Participant p's ratings y_p (n_p of them) given their mean mu_p (every fixed effect) and
Gaussian random effects b_p = S w_p, w_p ~ Normal(0, I_q), S = diag(s) (s: the random
effects' scales, e.g. sigma_u and the random smooth's sigma_s), with random-effect design Z_p
(n_p x q: a column of ones, then the slope's distance or the random smooth's basis columns):

    y_p = mu_p + Z_p S w_p + e_p,   e_p ~ Normal(0, sigma^2 I)
    =>  y_p ~ Normal(mu_p, Sigma_p),   Sigma_p = sigma^2 I + A A^T,   A = Z_p S.

A participant rates a few plans (n_p = 5 in the reference design) and the GAMM has q = 8
random effects each, so the n_p x n_p covariance is the small one: with r = y_p - mu_p and
L the Cholesky factor of Sigma_p, u = L^-1 r,

    log p(y_p) = -1/2 [ n_p log(2 pi) + 2 sum_i log L_ii + u^T u ]

(its gradient: ``_marginal_kernel``). Why: sampled instead, the random effects are hundreds
of parameters (a 362-participant GAMM: 362 x 8) in a funnel with their scales. Integrated
out, the posterior of every other parameter is exactly the same (it is the same model's
marginal), the sampler sees only the fixed effects and the scales (about 20 parameters),
and w_p can be drawn afterwards from its exact conditional (``conditional_effects``). A
participant without ratings (analysis.refit's padding) contributes 0.

One fused operation (value and the gradient's pieces: ``MarginalGaussianLogp``; gradient:
``MarginalGaussianLogpGrad``), numba kernels registered for PyTensor's numba backend (nutpie)
as analysis.fused does; the ratings come grouped by participant (``participant_rows``), and
the output is one log-likelihood per participant.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, disconnected_type
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from scipy import sparse

from analysis.fused import register_kernel

LOG_2PI = math.log(2.0 * math.pi)


def participant_grams(zt: np.ndarray, person: np.ndarray, participants: int) -> np.ndarray:
    """G_p = Z_p^T Z_p of every participant (participants x q x q)."""
    zt = np.asarray(zt, dtype=float)
    gram = np.zeros((participants, zt.shape[0], zt.shape[0]))
    np.add.at(gram, np.asarray(person, dtype=np.int64), zt.T[:, :, None] * zt.T[:, None, :])
    return gram


def participant_rows(person: np.ndarray, participants: int) -> tuple[np.ndarray, np.ndarray]:
    """(order, offsets): the ratings' indices grouped by participant, participant p's being
    order[offsets[p]:offsets[p + 1]] (data, computed once per model)."""
    person = np.asarray(person, dtype=np.int64)
    if person.size and (person.min() < 0 or person.max() >= participants):
        raise ValueError("a participant index out of range")
    order = np.argsort(person, kind="stable").astype(np.int64)
    offsets = np.zeros(participants + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(np.bincount(person, minlength=participants))
    return order, offsets


@numba.njit(inline="always")
def _gather(r: np.ndarray, z: np.ndarray, order: np.ndarray, offsets: np.ndarray,
            members: np.ndarray, m: int, res: np.ndarray, zb: np.ndarray) -> None:
    """The residuals (m x G) and random-effect rows (m x q x G) of the G participants
    ``members``, who have m ratings each, participant last (the batch's contiguous axis)."""
    for g in range(members.shape[0]):
        first = offsets[members[g]]
        for i in range(m):
            res[i, g] = r[order[first + i]]
            row = z[first + i]
            for k in range(z.shape[1]):
                zb[i, k, g] = row[k]


@numba.njit(inline="always")
def _factor(zb: np.ndarray, var: np.ndarray, s2: float, low: np.ndarray, recip: np.ndarray,
            det: np.ndarray) -> None:
    """L of Sigma = sigma^2 I + Z S^2 Z^T for every participant of the batch into ``low``
    (m x m x G), 1 / L_ii into ``recip``, |L| = prod_i L_ii into ``det`` (one logarithm per
    participant afterwards instead of m)."""
    m, q, batch = zb.shape
    det[:] = 1.0
    for i in range(m):
        for j in range(i + 1):
            cell = low[i, j]
            start = s2 if i == j else 0.0
            for g in range(batch):
                cell[g] = start
            for k in range(q):
                vk = var[k]
                zi, zj = zb[i, k], zb[j, k]
                for g in range(batch):
                    cell[g] += zi[g] * zj[g] * vk
            for t in range(j):
                li, lj = low[i, t], low[j, t]
                for g in range(batch):
                    cell[g] -= li[g] * lj[g]
            if i == j:
                rec = recip[i]
                for g in range(batch):
                    cell[g] = math.sqrt(cell[g])
                    rec[g] = 1.0 / cell[g]
                    det[g] *= cell[g]
            else:
                rec = recip[j]
                for g in range(batch):
                    cell[g] *= rec[g]


@numba.njit(inline="always")
def _lower_solve(low: np.ndarray, recip: np.ndarray, rhs: np.ndarray, out: np.ndarray,
                 squares: np.ndarray, first: int = 0) -> None:
    """out = L^-1 rhs (m x G) and the sum of its squares per participant into ``squares``,
    for a right-hand side whose rows before ``first`` are zero (so are out's: not written)."""
    m, batch = rhs.shape
    squares[:] = 0.0
    for i in range(first, m):
        o = out[i]
        for g in range(batch):
            o[g] = rhs[i, g]
        for k in range(first, i):
            li, ok = low[i, k], out[k]
            for g in range(batch):
                o[g] -= li[g] * ok[g]
        rec = recip[i]
        for g in range(batch):
            o[g] *= rec[g]
            squares[g] += o[g] * o[g]


@numba.njit(inline="always")
def _upper_solve(low: np.ndarray, recip: np.ndarray, u: np.ndarray, out: np.ndarray,
                 squares: np.ndarray) -> None:
    """out = L^-T u (m x G) and the sum of its squares per participant into ``squares``."""
    m, batch = u.shape
    squares[:] = 0.0
    for i in range(m - 1, -1, -1):
        o = out[i]
        for g in range(batch):
            o[g] = u[i, g]
        for k in range(i + 1, m):
            lk, ok = low[k, i], out[k]
            for g in range(batch):
                o[g] -= lk[g] * ok[g]
        rec = recip[i]
        for g in range(batch):
            o[g] *= rec[g]
            squares[g] += o[g] * o[g]


@numba.njit(inline="always")
def _inverse_norm(low: np.ndarray, recip: np.ndarray, unit: np.ndarray, column: np.ndarray,
                  squares: np.ndarray, frob: np.ndarray) -> None:
    """tr Sigma^-1 = |L^-1|_F^2 per participant into ``frob``: the squared norms of
    L^-1 e_j, j = 1..m (``unit``, ``column``, ``squares``: m x G, m x G and G work arrays)."""
    m = low.shape[0]
    frob[:] = 0.0
    unit[:] = 0.0
    for j in range(m):
        unit[j] = 1.0
        _lower_solve(low, recip, unit, column, squares, j)
        unit[j] = 0.0
        frob += squares


@numba.njit(inline="always")
def _scale_terms(zb: np.ndarray, low: np.ndarray, recip: np.ndarray, al: np.ndarray,
                 w: np.ndarray, z_alpha: np.ndarray, norm: np.ndarray) -> None:
    """z_k^T alpha into ``z_alpha`` and |W_k|^2 = z_k^T Sigma^-1 z_k into ``norm`` (q x G),
    W = L^-1 Z (m x q x G)."""
    m, q, batch = zb.shape
    z_alpha[:] = 0.0
    norm[:] = 0.0
    for i in range(m):
        rec, a = recip[i], al[i]
        for k in range(q):
            wik, zik, za, nk = w[i, k], zb[i, k], z_alpha[k], norm[k]
            for g in range(batch):
                wik[g] = zik[g]
                za[g] += zik[g] * a[g]
            for j in range(i):
                lij, wjk = low[i, j], w[j, k]
                for g in range(batch):
                    wik[g] -= lij[g] * wjk[g]
            for g in range(batch):
                wik[g] *= rec[g]
                nk[g] += wik[g] * wik[g]


def _marginal_kernel(r: np.ndarray, z: np.ndarray, order: np.ndarray, offsets: np.ndarray,
                     s: np.ndarray, sigma: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """log p(y_p) of the module docstring for every participant (``z``: the random-effect
    design's rows in participant order, row j that of rating order[j]; ``order``,
    ``offsets``: ``participant_rows``; ``sigma``: [sigma]), and its gradient's pieces, with
    alpha = L^-T u = Sigma_p^-1 r and W = L^-1 Z_p (through dSigma/ds_k = 2 s_k z_k z_k^T
    and dSigma/dsigma = 2 sigma I, z_k the k-th column of Z_p):

        d/dr      = -alpha                                       (alpha, per rating)
        d/ds_k    = s_k [ (z_k^T alpha)^2 - |W_k|^2 ]            (participants x q)
        d/dsigma  = sigma [ alpha^T alpha - |L^-1|_F^2 ]         (participants)

    (|W_k|^2 = z_k^T Sigma^-1 z_k, |L^-1|_F^2 = tr Sigma^-1). The participants with the same
    number of ratings m go through together, participant last in every work array, so each
    step of the factorization and the solves is one loop over them that vectorizes (a
    participant's own m x m algebra is too small to)."""
    n, q = z.shape
    people = offsets.shape[0] - 1
    if s.shape[0] != q or r.shape[0] != n or order.shape[0] != n or offsets[people] != n:
        raise ValueError("MarginalGaussianLogp: residuals, design, scales and the "
                         "participants' rows differ in size")
    sizes = offsets[1:] - offsets[:-1]
    sig = sigma[0]
    var = s * s
    logp, alpha = np.zeros(people), np.zeros(n)
    ds, dsig = np.zeros((people, q)), np.zeros(people)
    for m in range(1, sizes.max() + 1 if people else 1):
        members = np.nonzero(sizes == m)[0]
        batch = members.shape[0]
        if batch == 0:
            continue
        res, zb = np.empty((m, batch)), np.empty((m, q, batch))
        _gather(r, z, order, offsets, members, m, res, zb)
        low, unit, column = np.zeros((m, m, batch)), np.empty((m, batch)), np.empty((m, batch))
        recip, u, al = np.empty((m, batch)), np.empty((m, batch)), np.empty((m, batch))
        det, quad = np.empty(batch), np.empty(batch)
        alpha_sq, frob, squares = np.empty(batch), np.empty(batch), np.empty(batch)
        w, z_alpha, norm = np.empty((m, q, batch)), np.empty((q, batch)), np.empty((q, batch))
        _factor(zb, var, sig * sig, low, recip, det)
        _lower_solve(low, recip, res, u, quad)
        _upper_solve(low, recip, u, al, alpha_sq)
        _inverse_norm(low, recip, unit, column, squares, frob)
        _scale_terms(zb, low, recip, al, w, z_alpha, norm)
        for g in range(batch):
            p = members[g]
            first = offsets[p]
            logp[p] = -0.5 * (m * LOG_2PI + 2.0 * math.log(det[g]) + quad[g])
            dsig[p] = sig * (alpha_sq[g] - frob[g])
            for i in range(m):
                alpha[order[first + i]] = al[i, g]
            for k in range(q):
                ds[p, k] = s[k] * (z_alpha[k, g] * z_alpha[k, g] - norm[k, g])
    return logp, alpha, ds, dsig


def _marginal_grad_kernel(g: np.ndarray, order: np.ndarray, offsets: np.ndarray,
                          alpha: np.ndarray, ds: np.ndarray, dsig: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(d/dr, d/ds, d/dsigma) of sum_p g_p log p(y_p) from the forward kernel's pieces:
    d/dr_i = -g_p alpha_i for rating i of participant p."""
    people, q = ds.shape
    d_s = np.zeros(q)
    d_sigma = 0.0
    dr = np.zeros(alpha.shape[0])
    for p in range(people):
        gp = g[p]
        d_sigma += gp * dsig[p]
        for k in range(q):
            d_s[k] += gp * ds[p, k]
        for i in range(offsets[p], offsets[p + 1]):
            dr[order[i]] = -gp * alpha[order[i]]
    return dr, d_s, np.array([d_sigma])


_forward = numba.njit(cache=True, error_model="numpy")(_marginal_kernel)
_backward = numba.njit(cache=True, error_model="numpy")(_marginal_grad_kernel)


class MarginalGaussianLogp(Op):
    """(log p(y_p) per participant, alpha per rating, d/ds and d/dsigma per participant)
    from (r, z, order, offsets, s, sigma) (module docstring): ``z`` the random-effect
    design's rows grouped by participant (n x q; ``participant_rows``' ``order``),
    ``offsets`` where each participant's rows start, ``sigma`` [sigma]. Only the first output
    has a gradient; the others are its pieces."""

    __props__ = ()

    def make_node(self, *inputs: Any) -> Apply:
        r, z, order, offsets, s, sigma = (pt.as_tensor_variable(v) for v in inputs)
        r, z, s, sigma = (v.astype("float64") for v in (r, z, s, sigma))
        order, offsets = (pt.cast(v, "int64") for v in (order, offsets))
        return Apply(self, [r, z, order, offsets, s, sigma],
                     [pt.dvector(), pt.dvector(), pt.dmatrix(), pt.dvector()])

    def perform(self, node: Apply, inputs: list[np.ndarray], outputs: list[list[Any]]) -> None:
        for store, value in zip(outputs, _forward(*inputs), strict=True):
            store[0] = value

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        people = shapes[3][0] - 1
        return [(people,), shapes[0], (people, shapes[4][0]), (people,)]

    def grad(self, inputs: list[Any], output_grads: list[Any]) -> list[Any]:
        r, z, order, offsets, s, sigma = inputs
        if not all(isinstance(o.type, DisconnectedType) for o in output_grads[1:]):
            raise NotImplementedError("MarginalGaussianLogp: only its log-likelihoods have a "
                                      "gradient")
        g = output_grads[0]
        if isinstance(g.type, DisconnectedType):
            g = pt.zeros((offsets.shape[0] - 1,))
        _, alpha, ds, dsig = self(*inputs)
        dr, d_s, d_sigma = MarginalGaussianLogpGrad()(g, order, offsets, alpha, ds, dsig)
        return [dr, disconnected_type(), disconnected_type(), disconnected_type(), d_s,
                d_sigma]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[True] * 4, [False] * 4, [False] * 4, [False] * 4, [True] * 4, [True] * 4]


class MarginalGaussianLogpGrad(Op):
    """(d/dr, d/ds, d/dsigma) of the module docstring weighted by the output gradients ``g``,
    from (g, order, offsets, alpha, ds, dsig): the forward operation's pieces and the ratings
    grouped by participant. First order only: NUTS needs no second derivatives."""

    __props__ = ()

    def make_node(self, g: Any, order: Any, offsets: Any, alpha: Any, ds: Any,
                  dsig: Any) -> Apply:
        g, alpha, ds, dsig = (pt.as_tensor_variable(v).astype("float64")
                              for v in (g, alpha, ds, dsig))
        order, offsets = (pt.cast(pt.as_tensor_variable(v), "int64") for v in (order, offsets))
        return Apply(self, [g, order, offsets, alpha, ds, dsig],
                     [pt.dvector(), pt.dvector(), pt.dvector()])

    def perform(self, node: Apply, inputs: list[np.ndarray], outputs: list[list[Any]]) -> None:
        for store, value in zip(outputs, _backward(*inputs), strict=True):
            store[0] = value

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        return [shapes[3], (shapes[4][1],), (1,)]


def marginal_logp(r: Any, z: Any, order: Any, offsets: Any, s: Any, sigma: Any) -> Any:
    """``MarginalGaussianLogp``'s log p(y_p), one per participant, for the residuals ``r``
    (in the ratings' order), the random-effect design's rows grouped by participant ``z``
    (``participant_rows``: row j is rating order[j]'s), the scales ``s`` and the residual
    sd ``sigma`` (a scalar)."""
    return MarginalGaussianLogp()(r, z, order, offsets, s, pt.reshape(sigma, (1,)))[0]


def conditional_effects(residuals: np.ndarray, zt: np.ndarray, person: np.ndarray,
                        participants: int, scales: np.ndarray, sigma: np.ndarray,
                        rng: np.random.Generator, chunk: int = 200) -> np.ndarray:
    """Draws of every participant's standardized random effects w_p (draws x participants x
    q) from their exact conditional, one per posterior draw: with G = Z_p^T Z_p,
    c = Z_p^T r and M = I_q + S G S / sigma^2 (M >= I: well conditioned even as a scale
    s_k -> 0),

        w_p | y, rest ~ Normal(M^-1 S c / sigma^2, M^-1),

    given the draw's residuals (``residuals``: draws x ratings, the ratings minus the fixed
    part), its scales (draws x q) and its residual sd (draws). A participant without ratings draws
    from the prior. ``chunk`` draws at a time bound the memory."""
    zt = np.asarray(zt, dtype=float)
    q, n = zt.shape
    person = np.asarray(person, dtype=np.int64)
    residuals = np.asarray(residuals, dtype=float)
    gram = participant_grams(zt, person, participants)
    # Z^T r per participant for every draw, through one sparse participants x ratings matrix
    member = sparse.csr_matrix((np.ones(n), (person, np.arange(n))), shape=(participants, n))
    out = np.empty((residuals.shape[0], participants, q))
    eye = np.eye(q)
    for lo in range(0, residuals.shape[0], chunk):
        r = residuals[lo:lo + chunk]
        s = np.asarray(scales[lo:lo + chunk], dtype=float)
        s2 = np.asarray(sigma[lo:lo + chunk], dtype=float)[:, None, None] ** 2
        c = np.stack([(member @ (r * zt[a]).T).T for a in range(q)], axis=-1)
        m = eye + s[:, None, :, None] * gram[None] * s[:, None, None, :] / s2[..., None]
        low = np.linalg.cholesky(m)
        mean = np.linalg.solve(m, (s[:, None, :] * c / s2)[..., None])[..., 0]
        noise = rng.standard_normal(mean.shape)[..., None]
        # M^-1 = L^-T L^-1, so L^-T z has covariance M^-1
        out[lo:lo + chunk] = mean + np.linalg.solve(np.swapaxes(low, -1, -2), noise)[..., 0]
    return out


register_kernel(MarginalGaussianLogp, _marginal_kernel)
register_kernel(MarginalGaussianLogpGrad, _marginal_grad_kernel)
