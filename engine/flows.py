"""Causal normalizing flow: a learned world model with the SCM's interface (Javaloy et al. 2023).

Split the features into the discrete causal roots C (Loan: gender) and the rest R. The flow
models

    log p(x) = sum_{c in C} log P(x_c) + log p_theta(x_R | x_C)

with P(x_c) the empirical category frequencies of the training split and p_theta a masked
autoregressive flow (zuko) on the standardized rest z = (x_R - mu) / sigma:

    u = T_theta(z; x_C),   u ~ N(0, I),
    log p_theta(x_R | x_C) = log N(T(z)) + log |det dT/dz| - sum_j log sigma_j.

Every layer of T is a MaskedAutoregressiveTransform whose adjacency is the causal graph
(feature j sees only its causal parents among R and, as context, among C), so u_j depends on
x_j and its ancestors only: T is triangular in causal order, which is what makes abduction and
counterfactuals meaningful (causal normalizing flows). Univariate transforms are monotone
affine (MAF) or monotone rational-quadratic splines (NSF, ``spline_bins`` > 0).

Counterfactual of do(x_A = a) (abduction, action, prediction): u = T(x); then iterate
``depth`` times (depth = number of generations of the causal graph)

    x' <- m a + (1 - m) x',   u' <- m T(x') + (1 - m) u,   x' <- T^{-1}(u'),

finishing with x' <- m a + (1 - m) x'. At the fixed point acted-on features equal a and every
other feature keeps its abducted noise; after k iterations all features of generation <= k
are exact, so ``depth`` iterations reach it. The soft mask form keeps gradients to a
straight-through mask (iCARMA trains through it) while a 0/1 mask gives exact values.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
import zuko
from torch import Tensor, nn

from engine.scenarios.base import Scenario
from engine.scm import (
    ArrayLike,
    StructuralCausalModel,
    WorldModelInputError,
    as_action_mask,
    as_batch,
)


@dataclass(frozen=True)
class FlowConfig:
    """Architecture and training hyper-parameters (paper: hidden width 64, ELU, Adam)."""

    transforms: int = 1
    hidden: tuple[int, ...] = (64, 64)
    spline_bins: int = 0
    epochs: int = 300
    batch_size: int = 256
    lr: float = 3e-3
    patience: int = 40
    seed: int = 0

    def __post_init__(self) -> None:
        if min(self.transforms, self.epochs, self.batch_size, self.patience) < 1:
            raise ValueError("transforms, epochs, batch_size and patience must be >= 1")
        if self.lr <= 0 or self.spline_bins < 0 or not self.hidden:
            raise ValueError("lr must be positive, spline_bins >= 0, hidden non-empty")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["hidden"] = list(self.hidden)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FlowConfig:
        return cls(**{**d, "hidden": tuple(d["hidden"])})


@dataclass
class FlowLog:
    """Training record: validation NLL per epoch, the epoch kept, wall time."""

    val_nll: list[float] = field(default_factory=list)
    best_epoch: int = 0
    seconds: float = 0.0


def _generations(adjacency: Tensor) -> int:
    """Number of generations (longest path + 1) of the DAG with parent matrix ``adjacency``."""
    n = adjacency.shape[0]
    parents = adjacency & ~torch.eye(n, dtype=torch.bool)
    level = [0] * n
    for i in range(n):  # rows are in topological order
        pa = parents[i].nonzero().flatten().tolist()
        level[i] = 1 + max((level[j] for j in pa), default=0)
    return max(level, default=1)


class CausalFlow(nn.Module):
    """The causal flow world model (module docstring): abduct, counterfactual, log_prob, sample.

    Built from a scenario: ``feature_names``, its causal graph (its SCM's, or a data
    scenario's stated graph), its discrete
    roots as context and its immutable features (which no action may set). Computation runs in
    float32; results come back in the input's floating dtype (float64 for non-tensors).

    Latent shift (the action of CARMA's reference code, ``shift``): move the abducted noise of the
    acted-on features, u' = u + m s, and predict x' = T^{-1}(u'). An acted-on feature keeps its
    dependence on its parents (a "soft" intervention); for a 0/1 mask it equals do(x_A = x'_A) on
    the same noise, so the plan can be stated as that intervention.
    """

    def __init__(self, scenario: Scenario, config: FlowConfig) -> None:
        super().__init__()
        self.feature_names = scenario.feature_names
        self.immutable = scenario.immutable
        self.config = config
        adjacency = scenario.adjacency()
        parents = scenario.parents
        context = [
            j for j, f in enumerate(scenario.features) if f.discrete and not parents.get(j)
        ]
        rest = [j for j in range(scenario.d) if j not in context]
        self.context_idx: list[int] = context
        self.rest_idx: list[int] = rest
        self.depth = _generations(adjacency[rest][:, rest])
        x = scenario.data("flow")["train"][0]
        xr = x[:, rest]
        self.register_buffer("mean", xr.mean(dim=0).to(torch.float32))
        self.register_buffer("std", xr.std(dim=0).to(torch.float32))
        # log P(x_c = k) per context feature, from training frequencies (rows: features).
        k = max((int(x[:, j].max()) + 1 for j in context), default=1)
        freq = torch.stack(
            [torch.bincount(x[:, j].long(), minlength=k).to(torch.float64) for j in context]
        ) if context else torch.ones(0, k, dtype=torch.float64)
        self.register_buffer("context_logp", (freq / freq.sum(dim=1, keepdim=True)).log().float())
        mask = torch.cat([adjacency[rest][:, rest], adjacency[rest][:, context]], dim=1)
        kwargs: dict[str, Any] = {
            "features": len(rest),
            "context": len(context),
            "transforms": config.transforms,
            "adjacency": mask,
            "hidden_features": config.hidden,
            "activation": nn.ELU,
        }
        if config.spline_bins:
            self.maf: zuko.flows.Flow = zuko.flows.NSF(bins=config.spline_bins, **kwargs)
        else:
            self.maf = zuko.flows.MAF(**kwargs)

    @property
    def d(self) -> int:
        return len(self.feature_names)

    # ---- internals ----------------------------------------------------------------------
    def _batch(self, x: ArrayLike, name: str = "x") -> tuple[Tensor, torch.dtype]:
        t, dtype = as_batch(x, self.d, name)
        return t.to(torch.float32), dtype

    def _context(self, x: Tensor) -> Tensor:
        c = x[:, self.context_idx]
        bad = (c != c.round()) | (c < 0) | (c >= self.context_logp.shape[1])
        if bad.any():
            row = int(bad.any(dim=1).nonzero()[0])
            names = ", ".join(self.feature_names[j] for j in self.context_idx)
            raise WorldModelInputError(
                f"{names} must be one of the category codes 0..{self.context_logp.shape[1] - 1}"
                f" (row {row})"
            )
        return c

    def _action_inputs(
        self, x: ArrayLike, action_mask: ArrayLike, per_feature: ArrayLike, name: str
    ) -> tuple[Tensor, torch.dtype, Tensor, Tensor]:
        """(x, its dtype, the checked 0/1 mask, the (n, d) values or shifts named ``name``;
        one row broadcasts) for an action on x; context features cannot be acted on."""
        t, dtype = self._batch(x)
        n = t.shape[0]
        m = as_action_mask(action_mask, n, self.feature_names, self.immutable).to(torch.float32)
        if self.context_idx and (m[:, self.context_idx] != 0).any():
            raise WorldModelInputError("the flow's context features cannot be acted on")
        a, _ = self._batch(per_feature, name)
        if a.shape[0] == 1 and n > 1:
            a = a.expand(n, -1)
        if a.shape[0] != n:
            raise WorldModelInputError(f"{name} has {a.shape[0]} rows, x has {n}")
        return t, dtype, m, a

    def _z(self, x: Tensor) -> Tensor:
        return (x[:, self.rest_idx] - self.mean) / self.std

    def _x(self, z: Tensor, template: Tensor) -> Tensor:
        out = template.clone()
        out[:, self.rest_idx] = z * self.std + self.mean
        return out

    # ---- the world-model interface --------------------------------------------------------
    def log_prob(self, x: ArrayLike) -> Tensor:
        """log p(x) (module docstring), shape (n,)."""
        t, dtype = self._batch(x)
        c = self._context(t)
        lp = self.maf(c).log_prob(self._z(t)) - self.std.log().sum()
        for k in range(len(self.context_idx)):
            lp = lp + self.context_logp[k, c[:, k].long()]
        return lp.to(dtype)

    def abduct(self, x: ArrayLike) -> Tensor:
        """u (n, d): the flow's noise for R, the context values themselves for C."""
        t, dtype = self._batch(x)
        c = self._context(t)
        u = t.clone()
        u[:, self.rest_idx] = self.maf(c).transform(self._z(t))
        return u.to(dtype)

    def counterfactual(
        self, x: ArrayLike, action_mask: ArrayLike, action_values: ArrayLike
    ) -> Tensor:
        """x' under do(x_A = a) by the fixed-point iteration of the module docstring."""
        t, dtype, m, a = self._action_inputs(x, action_mask, action_values, "action_values")
        c = self._context(t)
        transform = self.maf(c).transform
        mr = m[:, self.rest_idx]
        ar = (a[:, self.rest_idx] - self.mean) / self.std
        z = self._z(t)
        u = transform(z)
        zc = mr * ar + (1 - mr) * z
        for _ in range(self.depth):
            uc = mr * transform(zc) + (1 - mr) * u
            zc = mr * ar + (1 - mr) * transform.inv(uc)
        return self._x(zc, t).to(dtype)

    def shift(self, x: ArrayLike, action_mask: ArrayLike, shift: ArrayLike) -> Tensor:
        """x' = T^{-1}(T(x) + m s) (module docstring, latent shift): ``shift`` (n, d) in the
        latent's units (u ~ N(0, 1)); only the masked features move; differentiable in m, s."""
        t, dtype, m, s = self._action_inputs(x, action_mask, shift, "shift")
        transform = self.maf(self._context(t)).transform
        u = transform(self._z(t)) + m[:, self.rest_idx] * s[:, self.rest_idx]
        return self._x(transform.inv(u), t).to(dtype)

    def latent_range(self, x: ArrayLike) -> tuple[float, float]:
        """(floor(min u), ceil(max u)) over the abducted noise of x's rows and the flow's
        features: the bounds CARMA's code clamps its latent shifts to."""
        t, _ = self._batch(x)
        with torch.no_grad():
            u = self.maf(self._context(t)).transform(self._z(t))
        return float(u.min().floor()), float(u.max().ceil())

    def sample(self, n: int, seed: int = 0) -> Tensor:
        """n profiles: context from its frequencies, the rest from the flow (float64)."""
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        g = torch.Generator().manual_seed(int(seed))
        x = torch.zeros(n, self.d)
        for k, j in enumerate(self.context_idx):
            x[:, j] = torch.multinomial(self.context_logp[k].exp(), n, True, generator=g).float()
        u = torch.randn(n, len(self.rest_idx), generator=g)
        with torch.no_grad():
            z = self.maf(x[:, self.context_idx]).transform.inv(u)
        return self._x(z, x).to(torch.float64)


def conditional_nll(flow: CausalFlow, x: Tensor) -> float:
    """Mean -log p_theta(x_R | x_C) per row (nats): the flow's NLL without the context's mass."""
    with torch.no_grad():
        t = x.to(torch.float32)
        c = flow._context(t)
        lp = flow.maf(c).log_prob(flow._z(t)) - flow.std.log().sum()
    return float(-lp.mean())


def train_flow(
    scenario: Scenario,
    config: FlowConfig,
    progress: Callable[[int, int, float], None] | None = None,
) -> tuple[CausalFlow, FlowLog]:
    """Maximum likelihood on the training split with Adam; early stopping on validation NLL."""
    start = time.perf_counter()
    torch.manual_seed(config.seed)
    flow = CausalFlow(scenario, config)
    x = scenario.data("flow")["train"][0].to(torch.float32)
    x_val = scenario.data("flow")["validation"][0].to(torch.float32)
    c, z = x[:, flow.context_idx], flow._z(x)
    opt = torch.optim.Adam(flow.parameters(), lr=config.lr)
    steps = config.epochs * math.ceil(len(x) / config.batch_size)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    gen = torch.Generator().manual_seed(config.seed)
    log = FlowLog()
    best, best_state, since = math.inf, copy.deepcopy(flow.state_dict()), 0
    for epoch in range(1, config.epochs + 1):
        flow.train()
        perm = torch.randperm(len(x), generator=gen)
        for b in range(0, len(perm), config.batch_size):
            idx = perm[b : b + config.batch_size]
            loss = -flow.maf(c[idx]).log_prob(z[idx]).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            schedule.step()
        flow.eval()
        nll = conditional_nll(flow, x_val)
        log.val_nll.append(nll)
        if nll < best:
            best, best_state, log.best_epoch, since = nll, copy.deepcopy(flow.state_dict()), epoch, 0
        else:
            since += 1
        if progress is not None:
            progress(epoch, config.epochs, nll)
        if since >= config.patience:
            break
    flow.load_state_dict(best_state)
    flow.eval()
    for p in flow.parameters():
        p.requires_grad_(False)
    log.seconds = time.perf_counter() - start
    return flow, log


def counterfactual_rmse(
    flow: CausalFlow, scenario: Scenario, x: Tensor, seed: int = 0,
    scm: StructuralCausalModel | None = None,
) -> float:
    """RMSE of the flow's counterfactuals against the exact SCM's, in feature sd units.

    Random actions: each globally actionable feature is acted on with probability 1/2, at a
    value uniform over its training range. The error is taken over the entries the action
    does not set (the ones the world model has to predict), each divided by the feature's
    training standard deviation. ``scm``: the exact world (default: the scenario's).
    """
    scm = scm if scm is not None else scenario.require_scm("the counterfactual RMSE")
    g = torch.Generator().manual_seed(seed)
    n = x.shape[0]
    act = list(scenario.actionable)
    mask = torch.zeros(n, scenario.d, dtype=torch.bool)
    mask[:, act] = torch.rand(n, len(act), generator=g) < 0.5
    lo, hi = scenario.bounds
    values = lo + (hi - lo) * torch.rand(n, scenario.d, generator=g, dtype=torch.float64)
    with torch.no_grad():
        x_flow = flow.counterfactual(x, mask, values).to(torch.float64)
    x_exact = scm.counterfactual(x, mask, values)
    err = (x_flow - x_exact) / scenario.stds
    keep = ~mask
    keep[:, flow.context_idx] = False
    return float(err[keep].pow(2).mean().sqrt())
