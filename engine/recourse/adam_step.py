"""Adam on one tensor, written out: the update of ``torch.optim.Adam`` (defaults: no weight
decay, no AMSGrad, not maximizing) as its single-tensor path computes it, without the
optimizer's per-step bookkeeping (parameter groups, hooks, profiler records, compiler
guards). In HARE's candidate search (engine.recourse.hare.search: a few rows, 100 steps per
search) that bookkeeping cost about as much as the world model's forward pass.

With gradient g_t at step t = 1, 2, ... (beta1, beta2, eps, lr as Adam's):

    m_t = m_{t-1} + (1 - beta1) (g_t - m_{t-1})          (lerp)
    v_t = beta2 v_{t-1} + (1 - beta2) g_t^2
    p_t = p_{t-1} - lr / (1 - beta1^t) * m_t / (sqrt(v_t) / sqrt(1 - beta2^t) + eps)

with the same operations in the same order (lerp_, mul_/addcmul_, sqrt, div, add_,
addcdiv_; the bias corrections in Python floats), so the iterates are bit for bit
``torch.optim.Adam``'s (tests/engine/test_adam_step.py checks it).
"""

from __future__ import annotations

import torch
from torch import Tensor


class AdamStep:
    """Adam's state for the tensor ``param`` (updated in place by ``step(grad)``)."""

    def __init__(self, param: Tensor, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8) -> None:
        self.param = param
        self.lr, (self.beta1, self.beta2), self.eps = lr, betas, eps
        self.exp_avg = torch.zeros_like(param, memory_format=torch.preserve_format)
        self.exp_avg_sq = torch.zeros_like(param, memory_format=torch.preserve_format)
        self.t = 0.0  # torch keeps a float32 step counter: exact for any realistic count

    @torch.no_grad()
    def step(self, grad: Tensor) -> None:
        self.t += 1.0
        self.exp_avg.lerp_(grad, 1 - self.beta1)
        self.exp_avg_sq.mul_(self.beta2).addcmul_(grad, grad, value=1 - self.beta2)
        bias_correction1 = 1 - self.beta1 ** self.t
        bias_correction2 = 1 - self.beta2 ** self.t
        step_size = self.lr / bias_correction1
        denom = (self.exp_avg_sq.sqrt() / bias_correction2 ** 0.5).add_(self.eps)
        self.param.addcdiv_(self.exp_avg, denom, value=-step_size)
