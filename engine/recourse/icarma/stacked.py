"""K iCARMA models of one architecture evaluated as one: stacked weights, batched products.

Member k's mask and action networks are ReLU perceptrons with layers (W_l^k, b_l^k). The
ensemble stores W_l = stack_k W_l^k (K, out, in) and b_l = stack_k b_l^k (K, out) and evaluates
every member on its own rows at once,

    h_{l+1}[k] = relu(h_l[k] (W_l^k)^T + b_l^k)      (one batched product per layer),

the last layer linear. Inputs and outputs are "member-major" row blocks: rows k n .. (k+1) n - 1
of a (K n, .) batch belong to member k, so everything else of ``AmortizedRecourse`` (the
profile code, the masks, the flow's counterfactual, the decision model) runs unchanged on all
K n rows: those are row-wise. Gradients stay per member (member k's loss depends on its own
slices of the stacked parameters only) and Adam is element-wise, so one optimizer over the
stacked parameters is K independent ones.

The straight-through Gumbel mask draws member k's noise from member k's own generator, in the
order a run of that member alone draws it from torch's global generator
(engine.recourse.icarma.networks.straight_through_mask), so with the same initial weights and
the same data order each member follows its single run (engine.recourse.icarma.ensemble).

``RecourseEnsemble.alone(k)`` evaluates member k by itself on its own n rows, as its single
run does (``nn.Linear``'s product on member k's slices of the stacked weights, its own
noise): for the batches whose row count would put the members' blocks at other positions of
torch's vector loops than the single run's (engine.recourse.icarma.ensemble).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from engine.recourse.icarma.networks import AmortizedRecourse, straight_through_mask


class StackedLinear(torch.autograd.Function):
    """y[k] = x[k] W[k]^T + b[k] for stacked (K, n, in) inputs, (K, out, in) weights and
    (K, out) biases, with the gradients computed as ``nn.Linear``'s are per member:
    dW[k] = dy[k]^T x[k], db[k] = sum_rows dy[k], dx[k] = dy[k] W[k] (autograd's own
    backward of the batched product computes dW as x^T dy, which can differ from the single
    run's in the last bit)."""

    @staticmethod
    def forward(x: Tensor, w: Tensor, b: Tensor) -> Tensor:  # type: ignore[override]
        return torch.baddbmm(b.unsqueeze(1), x, w.transpose(1, 2))

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Tensor, Tensor, Tensor], output: Tensor) -> None:
        x, w, _ = inputs
        ctx.save_for_backward(x, w)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, Tensor, Tensor]:  # type: ignore[override]
        x, w = ctx.saved_tensors
        return torch.bmm(grad, w), torch.bmm(grad.transpose(1, 2), x), grad.sum(dim=1)


class StackedMLP(nn.Module):
    """K perceptrons of ``engine.networks.mlp``'s shape (module docstring) on member-major
    rows."""

    def __init__(self, members: Sequence[nn.Sequential]) -> None:
        super().__init__()
        layers = [[(i, m) for i, m in enumerate(seq) if isinstance(m, nn.Linear)]
                  for seq in members]
        self.indices = [i for i, _ in layers[0]]  # positions of the Linear layers in mlp()
        self.weights = nn.ParameterList(
            nn.Parameter(torch.stack([member[j][1].weight.detach() for member in layers]).clone())
            for j in range(len(self.indices))
        )
        self.biases = nn.ParameterList(
            nn.Parameter(torch.stack([member[j][1].bias.detach() for member in layers]).clone())
            for j in range(len(self.indices))
        )
        self.single: int | None = None  # set: ``forward`` evaluates that member alone

    @property
    def members(self) -> int:
        return int(self.weights[0].shape[0])

    def forward(self, x: Tensor) -> Tensor:
        if self.single is not None:
            return self._member_forward(self.single, x)
        k = self.members
        h = x.reshape(k, x.shape[0] // k, x.shape[1])
        last = len(self.weights) - 1
        for j, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = StackedLinear.apply(h, w, b)
            if j < last:
                h = torch.relu(h)
        return h.reshape(x.shape[0], h.shape[2])

    def _member_forward(self, k: int, x: Tensor) -> Tensor:
        """Member k alone on x's rows: ``mlp()``'s forward (``nn.Linear`` is ``F.linear``)
        on its slices of the stacked weights; gradients reach those slices only."""
        h = x
        last = len(self.weights) - 1
        for j, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = F.linear(h, w[k], b[k])
            if j < last:
                h = torch.relu(h)
        return h

    def member_state(self, k: int) -> dict[str, Tensor]:
        """Member k's weights under ``mlp()``'s state-dict names (``0.weight``, ...)."""
        out: dict[str, Tensor] = {}
        for i, w, b in zip(self.indices, self.weights, self.biases, strict=True):
            out[f"{i}.weight"] = w[k].detach().clone()
            out[f"{i}.bias"] = b[k].detach().clone()
        return out


class RecourseEnsemble(AmortizedRecourse):
    """K ``AmortizedRecourse`` members sharing their constants (standardization, ranges,
    actionable features, shift clamp), with stacked networks (module docstring).
    ``generators[k]`` draws member k's Gumbel noise."""

    def __init__(
        self, members: Sequence[AmortizedRecourse], generators: Sequence[torch.Generator]
    ) -> None:
        first = members[0]
        if len(generators) != len(members):
            raise ValueError("an ensemble needs one generator per member")
        for m in members[1:]:
            for name, buf in first.named_buffers():
                if not torch.equal(buf, dict(m.named_buffers())[name]):
                    raise ValueError(f"ensemble members differ in their constant {name!r}")
            if (m.hidden, m.mask_head, m.action_space) != (
                    first.hidden, first.mask_head, first.action_space):
                raise ValueError("ensemble members must share one architecture")
        bounds = tuple(first.shift_bounds.tolist()) if first.needs_flow else None
        # builds (and at once replaces) one set of networks: no member's generator is touched
        super().__init__(first.mean, first.std, first.ranges, first.actionable, first.hidden,
                         first.mask_head, first.action_space, bounds)  # type: ignore[arg-type]
        self.mask_net = StackedMLP([m.mask_net for m in members])  # type: ignore[assignment]
        self.action_net = StackedMLP([m.action_net for m in members])  # type: ignore[assignment]
        self.generators = list(generators)

    @property
    def members(self) -> int:
        return len(self.generators)

    def sample_mask(self, logits: Tensor, hard: Tensor, tau: float) -> Tensor:
        """The straight-through mask with member k's noise from ``generators[k]``."""
        single = self.mask_net.single  # type: ignore[union-attr]
        generators = self.generators if single is None else [self.generators[single]]
        n = logits.shape[0] // len(generators)
        noise = torch.cat([
            torch.empty((n, *logits.shape[1:], 2), dtype=logits.dtype).exponential_(generator=g)
            for g in generators
        ])
        return straight_through_mask(logits, hard, tau, noise)

    @contextmanager
    def alone(self, k: int) -> Iterator[None]:
        """Within the block, the ensemble is member k by itself: inputs are member k's rows
        only, computed as its single run computes them (module docstring)."""
        nets = (self.mask_net, self.action_net)
        for net in nets:
            net.single = k  # type: ignore[union-attr]
        try:
            yield
        finally:
            for net in nets:
                net.single = None  # type: ignore[union-attr]

    def member_state(self, k: int) -> dict[str, Tensor]:
        """Member k's state dict, loadable into an ``AmortizedRecourse`` of the members'
        architecture."""
        out = {name: buf.clone() for name, buf in self.named_buffers()}
        for net in ("mask_net", "action_net"):
            stacked = getattr(self, net)
            out.update({f"{net}.{key}": v for key, v in stacked.member_state(k).items()})
        return out


__all__ = ["RecourseEnsemble", "StackedMLP"]
