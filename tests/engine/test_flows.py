"""The causal flow as a world model: counterfactual identities, exactness against the SCM,
gradients through a straight-through mask, bad input. Uses the quick trained artifacts."""

from __future__ import annotations

import math

import pytest
import torch

from engine.artifacts import load_flow
from engine.flows import CausalFlow, conditional_nll, counterfactual_rmse
from engine.scenarios import get_scenario
from engine.scm import WorldModelInputError

L, D, INC, S = 3, 4, 5, 6


@pytest.fixture(scope="module")
def flow(trained_home) -> CausalFlow:
    return load_flow("loan")


@pytest.fixture(scope="module")
def x():
    return get_scenario("loan").dataset["test"][0][:500]


def test_flow_respects_the_causal_graph(flow):
    assert flow.context_idx == [0]  # gender, the discrete root
    assert flow.depth == 4  # age -> education -> income -> savings


def test_empty_action_and_abduction_roundtrip(flow, x):
    none = torch.zeros_like(x)
    assert (flow.counterfactual(x, none, x) - x).abs().max() < 1e-3
    u = flow.abduct(x)
    assert torch.equal(u[:, 0], x[:, 0])


def test_acted_on_features_take_their_values_and_non_descendants_stay(flow, x):
    mask = torch.zeros_like(x, dtype=torch.bool)
    mask[:, INC] = True
    values = x.clone()
    values[:, INC] += 2.0
    x_cf = flow.counterfactual(x, mask, values)
    assert torch.allclose(x_cf[:, INC], values[:, INC], atol=1e-5)
    for j in (0, 1, 2, L, D):  # not downstream of income
        assert (x_cf[:, j] - x[:, j]).abs().max() < 1e-3
    assert (x_cf[:, S] - x[:, S]).abs().mean() > 0.5  # savings follows income


def test_flow_is_close_to_the_exact_scm(flow, x):
    loan = get_scenario("loan")
    exact = float(-(loan.scm.log_prob(x) - math.log(0.5)).mean())
    assert conditional_nll(flow, x) - exact < 0.5
    assert counterfactual_rmse(flow, loan, x, seed=3) < 0.3  # quick training: a loose bound
    lp = flow.log_prob(x)
    assert torch.allclose(lp, flow.log_prob(x.numpy()).to(lp.dtype))


def test_gradients_flow_through_a_straight_through_mask(flow, x):
    logits = torch.zeros(len(x[:8]), 7, requires_grad=True)
    hard = torch.zeros(8, 7)
    hard[:, [L, INC]] = 1.0
    m = hard + torch.sigmoid(logits) * hard - (torch.sigmoid(logits) * hard).detach()
    values = x[:8].clone().float()
    values[:, INC] += 1.0
    out = flow.counterfactual(x[:8].float(), m, values)
    out[:, S].sum().backward()
    assert logits.grad is not None and logits.grad[:, INC].abs().sum() > 0


def test_sample_shape_and_gender_codes(flow):
    s = flow.sample(100, seed=1)
    assert s.shape == (100, 7) and set(s[:, 0].tolist()) <= {0.0, 1.0}
    assert torch.equal(s, flow.sample(100, seed=1))


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda x: (x[:, :5], torch.zeros(3, 7), x), r"shape \(n, 7\)"),
        (lambda x: (x, torch.eye(7)[[0, 0, 0]], x), "immutable feature.*gender"),
        (lambda x: (x, torch.zeros(3, 7), x[:2]), "action_values has 2 rows"),
        (
            lambda x: (torch.cat([x[:, :1] + 0.5, x[:, 1:]], 1), torch.zeros(3, 7), x),
            "category codes",
        ),
    ],
)
def test_bad_input(flow, x, make, match):
    a, m, v = make(x[:3])
    with pytest.raises(WorldModelInputError, match=match):
        flow.counterfactual(a, m, v)


def test_a_latent_shift_moves_the_noise_of_the_acted_on_feature_only(flow, x):
    """CARMA's action: u' = T(x) + m s, x' = T^{-1}(u'). The shifted feature's noise moves by
    s, every other feature keeps its noise (so non-descendants stay), and the result equals
    the intervention do(x_j = x'_j) on the same noise."""
    mask = torch.zeros_like(x)
    mask[:, INC] = 1.0
    shift = torch.zeros_like(x)
    shift[:, INC] = 1.5
    shift[:, L] = 4.0  # not masked: must not move
    x_cf = flow.shift(x, mask, shift)
    du = flow.abduct(x_cf) - flow.abduct(x)
    assert torch.allclose(du[:, INC], torch.full_like(du[:, INC], 1.5), atol=1e-3)
    others = [j for j in range(1, 7) if j != INC]
    assert du[:, others].abs().max() < 1e-3
    for j in (0, 1, 2, L, D):
        assert (x_cf[:, j] - x[:, j]).abs().max() < 1e-3
    assert (x_cf[:, INC] - x[:, INC]).abs().min() > 0.1
    assert torch.allclose(flow.counterfactual(x, mask, x_cf), x_cf, atol=1e-3)
    lo, hi = flow.latent_range(x)
    u = flow.abduct(x)[:, 1:]
    assert lo == math.floor(float(u.min())) and hi == math.ceil(float(u.max()))
    with pytest.raises(WorldModelInputError, match="shift has 2 rows"):
        flow.shift(x[:3], mask[:3], shift[:2])
