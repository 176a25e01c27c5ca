"""A learned causal flow read as a structural causal model (the world of a data scenario).

A causal flow with ONE masked autoregressive layer whose adjacency is the causal graph
(engine.flows) is itself an SCM with an explicit equation per feature. On the standardized
features z_j = (x_j - mu_j) / sigma_j of the non-root part, the layer computes

    u_j = tau(z_j; phi_j(z_pa(j), x_C)),        u_j ~ N(0, 1),

with tau monotone in z_j (affine for MAF, a rational-quadratic spline for NSF) and phi_j the
masked network's output for feature j, which sees only j's causal parents. Hence

    equation:          x_j = mu_j + sigma_j tau^{-1}(u_j; phi_j(z_pa(j), x_C)),
    inverse equation:  u_j = tau(z_j; phi_j(z_pa(j), x_C)),
    log |du_j / dx_j| = log |tau'(z_j)| - log sigma_j,

and the discrete roots C keep u_c = x_c with log-mass log P(x_c) (their training
frequencies). Everything the exact-world machinery does (abduction, counterfactuals in causal
order, densities, the Oracle's block tables) then runs unchanged on the learned world: the
Oracle's plans on a data scenario are the exact optimum of the grid *under the learned
world*, and ``engine.papers.learned_world`` evaluates them under the true SCM when it is
known. Computation runs in float32 (the flow's), results come back as float64.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from engine.flows import CausalFlow
from engine.scenarios.base import Scenario
from engine.scm import ArrayLike, StructuralCausalModel
from engine.trained import trained

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class FlowSCM(StructuralCausalModel):
    """The SCM view of a one-layer causal flow (module docstring)."""

    def __init__(self, flow: CausalFlow, scenario: Scenario) -> None:
        if flow.config.transforms != 1:
            raise ValueError(
                f"a learned world is read as an SCM only with one flow layer (transforms = 1); "
                f"this flow has {flow.config.transforms}")
        self.flow = flow
        self.feature_names = scenario.feature_names
        self.parents = scenario.parents
        self.immutable = scenario.immutable
        self._layer = flow.maf.transform.transforms[0]
        self._rest = {j: r for r, j in enumerate(flow.rest_idx)}

    def _univariate(self, x: Tensor) -> object:
        """The elementwise transform tau(.; phi(z_pa, x_C)) of every non-root feature."""
        t = x.to(torch.float32)
        c = self.flow._context(t)
        with torch.no_grad():
            return self._layer.meta(c, self.flow._z(t)).base

    def sample_noise(self, n: int, rng: np.random.Generator) -> Tensor:
        u = torch.from_numpy(rng.standard_normal((n, self.d)))
        for k, j in enumerate(self.flow.context_idx):
            p = self.flow.context_logp[k].double().exp().numpy()
            u[:, j] = torch.from_numpy(rng.choice(len(p), size=n, p=p / p.sum()).astype(float))
        return u

    def equation(self, j: int, x: Tensor, u_j: Tensor) -> Tensor:
        if j not in self._rest:
            return u_j.to(torch.float64)
        r = self._rest[j]
        uni = self._univariate(x)
        u = torch.zeros(x.shape[0], len(self._rest), dtype=torch.float32)
        u[:, r] = u_j.to(torch.float32)
        with torch.no_grad():
            z_j = uni.inv(u)[:, r]  # type: ignore[attr-defined]
        return (z_j * self.flow.std[r] + self.flow.mean[r]).to(torch.float64)

    def inverse_equation(self, j: int, x: Tensor) -> Tensor:
        if j not in self._rest:
            return x[:, j].to(torch.float64)
        with torch.no_grad():
            u = self._univariate(x)(self.flow._z(x.to(torch.float32)))  # type: ignore[operator]
        return u[:, self._rest[j]].to(torch.float64)

    def noise_log_prob(self, u: Tensor) -> Tensor:
        out = -0.5 * u.to(torch.float64) ** 2 - _LOG_SQRT_2PI
        for k, j in enumerate(self.flow.context_idx):
            out[:, j] = self.flow.context_logp[k, u[:, j].long()].to(torch.float64)
        return out

    def log_abs_det_jacobian(self, x: Tensor) -> Tensor:
        z = self.flow._z(x.to(torch.float32))
        uni = self._univariate(x)
        with torch.no_grad():
            ladj = uni.log_abs_det_jacobian(z, uni(z))  # type: ignore[attr-defined]
        return (ladj.sum(dim=1) - self.flow.std.log().sum()).to(torch.float64)

    def check_support(self, x: Tensor, name: str) -> None:
        self.flow._context(x.to(torch.float32))  # raises WorldModelInputError for bad codes

    def label_logit(self, x: ArrayLike) -> Tensor:
        raise ValueError("a learned world has no true label model; use the trained decision "
                         "model (or the data's exact SCM, when the scenario names its truth)")


def world_model(scenario: Scenario) -> StructuralCausalModel:
    """A scenario's world model as an SCM: its exact SCM, or (a data world) its trained flow
    read as an SCM (ArtifactMissingError when not built). A pool world has none: its plans
    are pool members and its decision a fixed rule."""
    if scenario.scm is not None:
        return scenario.scm
    if scenario.world_kind != "data":
        raise ValueError(f"scenario {scenario.name!r} is a {scenario.world_kind} world: it "
                         "has no causal world model")
    return FlowSCM(trained().flow(scenario.name), scenario)
