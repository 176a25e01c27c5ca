"""The fused linear predictor (analysis.predictor) is the models' formula
eta = X w + gamma[arm] + u[person] + b[person] d, in value and gradient, on both backends (PyMC's C
backend through ``perform``, nutpie's numba backend); and the models built on it have the
likelihood the module docstring of analysis.models states."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from scipy.special import expit

from analysis.models import build_model, prepare
from analysis.predictor import linear_predictor
from analysis.simdata import simulate_ratings


def _problem(seed: int = 0, n: int = 300, m: int = 6, arms: int = 3, people: int = 40):
    rng = np.random.default_rng(seed)
    return {"x": rng.normal(size=(n, m)), "w": rng.normal(size=m),
            "arm": rng.integers(0, arms, n), "gamma": rng.normal(size=arms),
            "person": rng.integers(0, people, n), "u": rng.normal(size=people),
            "b": rng.normal(size=people), "d": rng.normal(size=n), "c": rng.normal(size=n)}


def _eta_and_grads(fused: bool, mode: str, p: dict):
    """eta and the gradient of sum(c * eta) by (w, gamma, u, b), from the fused operation or
    from PyTensor's own graph of the same formula."""
    w, gamma, u, b = pt.dvector("w"), pt.dvector("gamma"), pt.dvector("u"), pt.dvector("b")
    x, arm, person, d = (pt.as_tensor(p[k]) for k in ("x", "arm", "person", "d"))
    if fused:  # the design by columns, as the models pass it
        eta = linear_predictor(pt.as_tensor(np.ascontiguousarray(p["x"].T)), w, arm, gamma,
                               person, u, b, d)
    else:
        eta = pt.dot(x, w) + gamma[arm] + u[person] + b[person] * d
    objective = (pt.as_tensor(p["c"]) * eta).sum()
    f = pytensor.function([w, gamma, u, b], [eta, *pytensor.grad(objective, [w, gamma, u, b])],
                          mode=mode)
    return f(p["w"], p["gamma"], p["u"], p["b"])


@pytest.mark.parametrize("mode", ["FAST_RUN", "NUMBA"])
def test_fused_predictor_equals_the_graph_in_value_and_gradient(mode: str):
    p = _problem()
    graph = _eta_and_grads(False, "FAST_RUN", p)
    fused = _eta_and_grads(True, mode, p)
    for ours, theirs in zip(fused, graph, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    # the gradients are sums over the rows of each arm / participant: not all of one size
    assert np.bincount(p["person"]).min() != np.bincount(p["person"]).max()


def test_a_participant_without_ratings_gets_zero_gradient():
    """Padded participants (analysis.refit) appear in no row: their effects' gradient is 0."""
    p = _problem(1, people=10)
    p["person"] = np.where(p["person"] == 7, 3, p["person"])
    _, _, _, du, db = _eta_and_grads(True, "NUMBA", p)
    assert du[7] == 0.0 and db[7] == 0.0 and du[3] != 0.0


@pytest.mark.parametrize("mode", ["FAST_RUN", "NUMBA"])
def test_out_of_range_indices_and_mismatched_lengths_raise(mode: str):
    p = _problem(2)
    bad = dict(p, person=np.where(p["person"] == 0, 40, p["person"]))
    with pytest.raises(ValueError, match="index out of range"):
        _eta_and_grads(True, mode, bad)
    short = dict(p, d=p["d"][:-1])
    with pytest.raises(ValueError, match="differ in length"):
        _eta_and_grads(True, mode, short)


def _numpy_eta(data, point: dict) -> np.ndarray:
    """eta of analysis.models' docstring, in NumPy, from a model's point (untransformed)."""
    beta_f = np.concatenate([[0.0], np.cumsum(point["sigma_f"] * point["z_f"])])
    eta = data.basis(data.d) @ beta_f
    if data.terms:
        eta = eta + np.column_stack([data.terms[t] for t in data.terms]) @ point["beta"]
    if len(data.arms) > 1:
        eta = eta + np.concatenate([[0.0], point["gamma_raw"]])[data.arm]
    p = data.participant
    return (eta + point["sigma_u"] * point["z_u"][p]
            + point["sigma_b"] * point["z_b"][p] * (data.d - data.d_centre))


@pytest.mark.parametrize("arms", [3, 1])
def test_ordinal_model_likelihood_is_the_documented_formula(arms: int):
    """The pointwise log-likelihood of the ordinal model at a random point equals
    log(sigma(c_{y+1} - eta) - sigma(c_y - eta)) with eta computed in NumPy: a wrong column,
    index or slope in the fused predictor fails here."""
    ratings = simulate_ratings(30, 5, seed=4)
    if arms == 1:
        ratings = ratings.assign(arm="only")
    data = prepare(ratings, "action", "l1_profile")
    assert data.terms and len(data.arms) == arms
    model = build_model(data)
    rng = np.random.default_rng(5)
    point = {k: v + rng.normal(0, 0.5, np.shape(v)) for k, v in model.initial_point().items()}
    lp = model.compile_logp(vars=[model["y"]], sum=False)(point)[0]
    # z_u and c_1 as stated (the model samples them in pieces: analysis.families.base)
    z_u, cut_first = model.compile_fn(
        model.replace_rvs_by_values([model["z_u"], model["cut_first"]]),
        inputs=model.value_vars, on_unused_input="ignore")(point)
    natural = {"sigma_f": np.exp(point["sigma_f_log__"]), "sigma_u": np.exp(point["sigma_u_log__"]),
               "sigma_b": np.exp(point["sigma_b_log__"]), **point, "z_u": z_u}
    eta = _numpy_eta(data, natural)
    cut = cut_first + np.concatenate([[0.0], np.cumsum(np.exp(point["cut_gaps_log__"]))])
    edges = np.concatenate([[-np.inf], cut, [np.inf]])
    y = data.y - 1
    expected = np.log(expit(edges[y + 1] - eta) - expit(edges[y] - eta))
    np.testing.assert_allclose(lp, expected, rtol=1e-9)


@pytest.mark.parametrize("mode", ["FAST_RUN", "NUMBA"])
def test_gradient_kernels_refuse_a_gradient_of_another_length(mode: str):
    """numba does not check bounds: a gradient vector shorter than the ratings must raise,
    not read past its end."""
    from analysis.ordinal import ObservedLogpGrad
    from analysis.predictor import LinearPredictorGrad

    p = _problem(3, n=20)
    g = pt.dvector("g")
    grads = LinearPredictorGrad()(g, pt.as_tensor(np.ascontiguousarray(p["x"].T)),
                                  pt.as_tensor(p["arm"]),
                                  pt.as_tensor(p["gamma"]), pt.as_tensor(p["person"]),
                                  pt.as_tensor(p["u"]), pt.as_tensor(p["d"]))
    f = pytensor.function([g], grads, mode=mode)
    assert np.allclose(f(np.ones(20))[0], p["x"].sum(axis=0))
    with pytest.raises(ValueError, match="differ in length"):
        f(np.ones(19))
    y = pt.as_tensor(np.arange(20) % 7)
    h = pytensor.function([g], ObservedLogpGrad()(g, y, pt.ones(20), pt.ones(20),
                                                  pt.ones(6)), mode=mode)
    assert h(np.ones(20))[0].shape == (20,)
    with pytest.raises(ValueError, match="differ in length"):
        h(np.ones(19))
