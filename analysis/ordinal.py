"""The cumulative-logit likelihood of the ordinal models, evaluated at the observed rating only.

For a rating y in {0, ..., K-1} (the model's scale; K = 7), latent score eta and cutpoints
c_1 < ... < c_{K-1} (with c_0 = -inf and c_K = +inf), with a = c_{y+1} - eta > b = c_y - eta,

    P(y) = sigma(a) - sigma(b) = sigma(-b) - sigma(-a).

The second form is used where b > 0: there both sigmoids of the first are near 1 and their
difference would lose its digits (PyMC's ``OrderedLogistic`` subtracts them as they come),
while sigma(-b) and sigma(-a) are small and exact. This is ``OrderedLogistic``'s likelihood
(the same model, the same posterior), but it evaluates the two sigmoids of the observed
rating where ``OrderedLogistic`` builds all K category probabilities of every rating (an
n x K matrix, and its gradient) to read one (docs/benchmarks.md, "Findings behind the
code"). ``graph_logp`` is that form as a graph of PyTensor operations.

``observe`` adds the observed ratings to a model as a ``CustomDist`` with this log-density
and a sampler (1 + the number of cutpoints below eta + logistic noise, as
engine.synthetic.rating_model), so the pointwise log-likelihood (PSIS-LOO) and posterior
predictive draws work as before; ``probabilities`` gives the (n, K) category probabilities
(the ``full`` trace's ``y_probs``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, disconnected_type
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op

from analysis.fused import register_kernel
from analysis.ordinal_kernel import (
    BEYOND,
    chain_rule,
    observed_grad_kernel,
    observed_kernel,
    value_and_derivatives,
)


def logp(value: Any, eta: Any, cutpoints: Any) -> Any:
    """Pointwise log P(y = value) of the module docstring (``value`` on 0..K-1)."""
    k = pt.cast(value, "int64")
    if cutpoints.ndim == 2 and cutpoints.type.broadcastable[0] and k.ndim == 1:
        # The models' case: one set of cutpoints, a vector of ratings: the fused kernel.
        return observed_logp(k, pt.broadcast_to(eta, k.shape) if eta.ndim != 1 else eta,
                             cutpoints[0])
    return graph_logp(k, eta, cutpoints)


def graph_logp(k: Any, eta: Any, cutpoints: Any) -> Any:
    """``logp`` as a graph of PyTensor's own operations (the difference of sigmoids of the
    module docstring; any batch shape)."""
    if cutpoints.ndim == 2 and cutpoints.type.broadcastable[0]:
        # One set of cutpoints for every rating (the models' case): plain 1-D indexing,
        # which both PyTensor backends compile (with its gradient).
        edge = pt.ones((1,)) * BEYOND
        c = pt.concatenate([-edge, cutpoints[0], edge])  # c_0 .. c_K
        a, b = c[k + 1] - eta, c[k] - eta
    else:
        edge = pt.ones_like(cutpoints[..., :1]) * BEYOND
        c = pt.concatenate([-edge, cutpoints, edge], axis=-1)
        a = pt.take_along_axis(c, (k + 1)[..., None], axis=-1)[..., 0] - eta
        b = pt.take_along_axis(c, k[..., None], axis=-1)[..., 0] - eta
    return pt.log(pt.switch(b > 0, pt.sigmoid(-b) - pt.sigmoid(-a),
                            pt.sigmoid(a) - pt.sigmoid(b)))


class ObservedLogp(Op):
    """log P(y_r) per rating for ratings ``y`` (int64, 0..K-1), latent scores ``eta`` and
    cutpoints ``cut`` (K-1), with the derivatives ``upper`` / ``lower`` by each rating's two
    cutpoints (``analysis.ordinal_kernel.observed_kernel``); the gradient is assembled from
    them, so a log-density and its gradient run the kernel once.

    The models evaluate it with one fused operation instead (``ObservedLogp``), in the equivalent
    form, exact in every tail,

        log P(y) = -softplus(-a) - softplus(b) + log(1 - e^-(a - b)),

    whose last term depends on the category's cutpoint gap only (K - 2 values per evaluation):
    one kernel (``analysis.ordinal_kernel``) gives log P(y_r) of every rating and its derivatives
    by the rating's two cutpoints (that by eta is minus their sum), with its exponentials and
    logarithm written as polynomials so that the loops over the ratings vectorize. PyTensor's own
    graph of the same density and its automatic gradient ran a dozen elementwise passes with four
    sigmoids, gathers and scatters. The chain rule, to eta and into the cutpoint vector, is one
    more loop (``ObservedLogpGrad``) rather than PyTensor's scatters over a padded vector.
    Each step's gain: docs/benchmarks.md, "Findings behind the code". Both backends run the
    same kernels: nutpie's numba backend calls them inside its compiled function, PyMC's C
    backend through ``perform``.
    """

    __props__ = ()

    def make_node(self, y: Any, eta: Any, cut: Any) -> Apply:
        y = pt.as_tensor_variable(y)
        eta = pt.as_tensor_variable(eta).astype("float64")
        cut = pt.as_tensor_variable(cut).astype("float64")
        return Apply(self, [y, eta, cut], [pt.dvector(), pt.dvector(), pt.dvector()])

    def perform(self, node: Apply, inputs: list[np.ndarray], outputs: list[list[Any]]) -> None:
        y, eta, cut = inputs
        values = value_and_derivatives(np.asarray(y, np.int64), eta, cut)
        for store, value in zip(outputs, values, strict=True):
            store[0] = value

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        return [shapes[1]] * 3

    def grad(self, inputs: list[Any], output_grads: list[Any]) -> list[Any]:
        y, eta, cut = inputs
        if not all(isinstance(o.type, DisconnectedType) for o in output_grads[1:]):
            raise NotImplementedError("ObservedLogp: only its log-probabilities have a gradient")
        g = output_grads[0]
        if isinstance(g.type, DisconnectedType):
            g = pt.zeros_like(eta)
        _, upper, lower = self(y, eta, cut)
        d_eta, d_cut = ObservedLogpGrad()(g, y, upper, lower, cut)
        return [disconnected_type(), d_eta, d_cut]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        return [[False, False, False], [True, True, True], [True, True, True]]


class ObservedLogpGrad(Op):
    """(d/d eta, d/d cut) of ``ObservedLogp`` from (g, y, upper, lower, cut): the
    ``analysis.ordinal_kernel.observed_grad_kernel``; ``cut`` gives the size only. First
    order only."""

    __props__ = ()

    def make_node(self, g: Any, y: Any, upper: Any, lower: Any, cut: Any) -> Apply:
        g, upper, lower, cut = (pt.as_tensor_variable(v).astype("float64")
                                for v in (g, upper, lower, cut))
        y = pt.cast(pt.as_tensor_variable(y), "int64")
        return Apply(self, [g, y, upper, lower, cut], [pt.dvector(), pt.dvector()])

    def perform(self, node: Apply, inputs: list[np.ndarray], outputs: list[list[Any]]) -> None:
        for store, value in zip(outputs, chain_rule(*inputs), strict=True):
            store[0] = value

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        return [shapes[1], shapes[4]]


def observed_logp(y: Any, eta: Any, cut: Any) -> Any:
    """``ObservedLogp``'s log-probabilities: one rating each of ``y`` (vector), ``eta``
    (vector) and one cutpoint vector ``cut``."""
    return ObservedLogp()(y, eta, cut)[0]


register_kernel(ObservedLogp, observed_kernel)
register_kernel(ObservedLogpGrad, observed_grad_kernel)


def random(eta: np.ndarray, cutpoints: np.ndarray, rng: np.random.Generator,
           size: tuple[int, ...] | None = None) -> np.ndarray:
    """Ratings on 0..K-1: the number of cutpoints below eta + Logistic(0, 1) noise."""
    eta = np.asarray(eta, dtype=float)
    shape = tuple(size) if size is not None else eta.shape
    noisy = np.broadcast_to(eta, shape) + rng.logistic(size=shape)
    return (np.asarray(cutpoints) < noisy[..., None]).sum(axis=-1)


def observe(name: str, eta: Any, cutpoints: Any, observed: Any) -> Any:
    """The observed ratings (0..K-1) of a model under construction, with the module
    docstring's likelihood."""
    return pm.CustomDist(name, eta, cutpoints, logp=logp, random=random,
                         signature="(),(k)->()", dtype="int64", observed=observed)


def probabilities(eta: Any, cutpoints: Any) -> Any:
    """(n, K) category probabilities P(y = k) for latent scores ``eta`` (n,)."""
    cum = pt.sigmoid(cutpoints[None, :] - eta[:, None])
    n = eta.shape[0]
    return pt.diff(pt.concatenate([pt.zeros((n, 1)), cum, pt.ones((n, 1))], axis=1), axis=1)
