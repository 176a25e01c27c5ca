"""The models' linear predictor as one fused operation, with its gradient as another.

For rating r of participant p_r in arm a_r, with a dense design row x_r (the spline basis
B_c(d_r), then the satisfaction / violation columns) and the centred distance d_r,

    eta_r = x_r . w + gamma_{a_r} + u_{p_r} + b_{p_r} d_r

(``analysis.models``: w = (beta_f, beta), u = sigma_u z_u, b = sigma_b z_b). Given the
derivative g_r of the log-density by eta_r, its gradient is

    dw = X^T g,   dgamma_a = sum_{r: a_r = a} g_r,   du_p = sum_{r: p_r = p} g_r,
    db_p = sum_{r: p_r = p} g_r d_r.

Why an operation of its own: built from PyTensor's elementwise operations, gathers, a dot and
the scatter-adds of its automatic gradient, the predictor and its gradient were a dozen
passes over the ratings, each allocating an array, around the one fused likelihood kernel
(``analysis.ordinal``); nutpie's NUTS evaluates the log-density and its gradient ~165,000
times per fit of the 362 x 5 model, so these passes were most of a refit. Here each is one
pass over the ratings (``_predictor_kernel``, ``_predictor_grad_kernel``), compiled by numba
for PyTensor's numba backend (nutpie) and for ``perform`` (PyMC's C backend), the same way
as ``analysis.ordinal.ObservedLogp``. The posterior is the same model's: tests compare value
and gradient with the PyTensor graph of the same formula.

The design comes by columns (``xt`` = X^T, m x n: the models' data container
``design_columns``), so X w and X^T g run over contiguous columns and vectorize: nutpie's
compiled log-density and gradient of the 362 x 5 model took 32.7 instead of 37.9
microseconds (medians of three alternating runs each, the ordinal kernel vectorized in both).

A model without arms passes one arm (index 0 everywhere, gamma = [0]); a model without random
slopes passes d = 0. Indices outside their vectors raise (numba does not check bounds).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import disconnected_type
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op

from analysis.fused import register_kernel


def _predictor_kernel(xt: np.ndarray, w: np.ndarray, arm: np.ndarray, gamma: np.ndarray,
                      person: np.ndarray, u: np.ndarray, b: np.ndarray, d: np.ndarray
                      ) -> np.ndarray:
    """eta_r = x_r . w + gamma[arm_r] + u[person_r] + b[person_r] d_r (module docstring), for
    the design by columns ``xt`` (m x n)."""
    m, n = xt.shape
    if w.shape[0] != m or arm.shape[0] != n or person.shape[0] != n or d.shape[0] != n:
        raise ValueError("LinearPredictor: design, coefficients, indices and distances "
                         "differ in length")
    n_arms = gamma.shape[0]
    n_people = u.shape[0]
    if b.shape[0] != n_people:
        raise ValueError("LinearPredictor: intercepts and slopes differ in length")
    eta = np.empty(n)
    for r in range(n):
        a = arm[r]
        p = person[r]
        if a < 0 or a >= n_arms or p < 0 or p >= n_people:
            raise ValueError("LinearPredictor: an arm or participant index out of range")
        eta[r] = gamma[a] + u[p] + b[p] * d[r]
    for j in range(m):  # column by column: contiguous, so the loop over ratings vectorizes
        wj = w[j]
        for r in range(n):
            eta[r] += xt[j, r] * wj
    return eta


def _predictor_grad_kernel(g: np.ndarray, xt: np.ndarray, arm: np.ndarray, gamma: np.ndarray,
                           person: np.ndarray, u: np.ndarray, d: np.ndarray
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(dw, dgamma, du, db) of the module docstring for the derivatives ``g`` by eta and the
    design by columns ``xt``; ``gamma`` and ``u`` give the sizes only (the indices were
    checked by the forward kernel on the same inputs)."""
    m, n = xt.shape
    n_arms = gamma.shape[0]
    n_people = u.shape[0]
    if g.shape[0] != n or arm.shape[0] != n or person.shape[0] != n or d.shape[0] != n:
        raise ValueError("LinearPredictorGrad: gradients, design, indices and distances "
                         "differ in length")
    dw = np.zeros(m)
    for j in range(m):
        total = 0.0
        for r in range(n):
            total += xt[j, r] * g[r]
        dw[j] = total
    dgamma = np.zeros(n_arms)
    du = np.zeros(n_people)
    db = np.zeros(n_people)
    for r in range(n):
        gr = g[r]
        dgamma[arm[r]] += gr
        p = person[r]
        du[p] += gr
        db[p] += gr * d[r]
    return dw, dgamma, du, db


_forward = numba.njit(cache=True, error_model="numpy")(_predictor_kernel)
_backward = numba.njit(cache=True, error_model="numpy")(_predictor_grad_kernel)


class LinearPredictor(Op):
    """eta of the module docstring from (xt, w, arm, gamma, person, u, b, d), ``xt`` the design
    by columns (m x n)."""

    __props__ = ()

    def make_node(self, *inputs: Any) -> Apply:
        x, w, arm, gamma, person, u, b, d = (pt.as_tensor_variable(v) for v in inputs)
        x, w, gamma, u, b, d = (v.astype("float64") for v in (x, w, gamma, u, b, d))
        return Apply(self, [x, w, pt.cast(arm, "int64"), gamma, pt.cast(person, "int64"),
                            u, b, d], [pt.dvector()])

    def perform(self, node: Apply, inputs: list[np.ndarray], outputs: list[list[Any]]) -> None:
        outputs[0][0] = _forward(*inputs)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        return [(shapes[0][1],)]

    def grad(self, inputs: list[Any], output_grads: list[Any]) -> list[Any]:
        x, _, arm, gamma, person, u, _, d = inputs
        dw, dgamma, du, db = LinearPredictorGrad()(output_grads[0], x, arm, gamma, person,
                                                   u, d)
        # d (a distance: data) gets no gradient; neither do the design and the indices
        return [disconnected_type(), dw, disconnected_type(), dgamma, disconnected_type(),
                du, db, disconnected_type()]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False], [True], [False], [True], [False], [True], [True], [False]]


class LinearPredictorGrad(Op):
    """(dw, dgamma, du, db) of the module docstring from (g, xt, arm, gamma, person, u, d);
    ``gamma`` and ``u`` give the sizes of their gradients only. First order only: NUTS
    needs no second derivatives."""

    __props__ = ()

    def make_node(self, g: Any, x: Any, arm: Any, gamma: Any, person: Any, u: Any,
                  d: Any) -> Apply:
        g, x, gamma, u, d = (pt.as_tensor_variable(v).astype("float64")
                             for v in (g, x, gamma, u, d))
        arm, person = (pt.cast(pt.as_tensor_variable(v), "int64") for v in (arm, person))
        return Apply(self, [g, x, arm, gamma, person, u, d], [pt.dvector() for _ in range(4)])

    def perform(self, node: Apply, inputs: list[np.ndarray], outputs: list[list[Any]]) -> None:
        for store, value in zip(outputs, _backward(*inputs), strict=True):
            store[0] = value

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        return [(shapes[1][0],), (shapes[3][0],), (shapes[5][0],), (shapes[5][0],)]


def linear_predictor(xt: Any, w: Any, arm: Any, gamma: Any, person: Any, u: Any, b: Any,
                     d: Any) -> Any:
    """``LinearPredictor``'s eta (a vector, one entry per column of ``xt``, the design by
    columns)."""
    return LinearPredictor()(xt, w, arm, gamma, person, u, b, d)


register_kernel(LinearPredictor, _predictor_kernel)
register_kernel(LinearPredictorGrad, _predictor_grad_kernel)
