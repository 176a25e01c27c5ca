"""iCARMA's two networks: the mask network and the action network, conditioned on a profile.

Notation. x in R^d a factual (model units), G the g globally actionable features, and for a
person i the profile code c_i = (h_i, h_i * log w_i, pi_i) in R^{3g}: the hard mask h_i over G
(1 = individually actionable), the cost weights w_ij and the mask priors pi_ij of
engine.preferences for the deployment cost profile. Inputs are standardized,
x~ = (x - mu) / sigma, with mu, sigma over the training split.

Mask network (parameters phi). Logits l = f_phi(x~, c) in R^g, Bernoulli probabilities
q_j = sigmoid(l_j). Training draws a straight-through Gumbel-softmax sample with temperature
tau over the two classes (off, on) with logits (0, l_j):

    m_j = onehot(argmax(log softmax(0, l_j) + gumbel) / tau)[on] * h_ij,

whose forward value is exactly 0/1 and whose gradient is the relaxed sample's. At deployment
the mask is deterministic, m_j = 1[l_j > 0] * h_ij (q_j > 1/2; CARMA's code deploys its own
head's variant of it, below), under which a person whose probabilities are all <= 1/2 gets no
action. ``fill_empty`` (our option) then switches on the most probable actionable feature, so
everyone gets an action. Multiplying by h_ij makes a feature outside F_i impossible whatever
the networks output.

Action network (parameters theta). Given the mask, delta = f_theta(x~, m, c) in R^g.
``action_space`` says what delta is:
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from engine.icarma_choices import ACTION_SPACES, DEFAULT_MASK_HEAD, INTERVENTION, MASK_HEADS
from engine.networks import mlp
from engine.preferences import ActionabilityProfiles, CostProfile


def check_shift_bounds(bounds: tuple[float, float]) -> tuple[float, float]:
    """``bounds`` as (lo, hi) floats; ValueError unless lo < 0 < hi (a clamp must allow no
    shift)."""
    if len(bounds) != 2 or not float(bounds[0]) < 0 < float(bounds[1]):
        raise ValueError(f"shift bounds must be (lo, hi) with lo < 0 < hi, got {bounds}")
    return float(bounds[0]), float(bounds[1])


def profile_code(
    profiles: ActionabilityProfiles, cost_profile: CostProfile, actionable: Tensor
) -> Tensor:
    """c = (h, h * log w, pi) over the globally actionable columns, shape (n, 3g), float32."""
    hard = profiles.hard_mask[:, actionable]
    w = profiles.weights(cost_profile)[:, actionable]
    pi = profiles.priors(cost_profile)[:, actionable]
    return code_from_parts(hard, w, pi)


def code_from_parts(hard: Tensor, weights: Tensor, priors: Tensor) -> Tensor:
    """The profile code from (n, g) hard mask, weights and priors (see the module docstring)."""
    h = hard.to(torch.float32)
    return torch.cat([h, h * weights.to(torch.float32).log(), priors.to(torch.float32)], dim=1)


class AmortizedRecourse(nn.Module):
    """Mask and action networks plus the constants they need (module docstring for the math).

    Buffers: ``mean``/``std`` (d,) for standardization, ``ranges`` (d,) M_j, ``actionable``
    (g,) indices of the globally actionable features, under ``latent-shift`` ``shift_bounds``
    (2,) = (s_lo, s_hi). Everything is float32.

    Mask heads (``mask_head``). ``log-odds`` (the default) outputs l_j directly. ``carma`` is
    the mask encoder of CARMA's reference code, which iCARMA extends: two logits
    (phi_off_j, phi_on_j) per feature, initialized as CARMA's (Xavier-uniform with ReLU gain,
    biases 0.01). Training is the same function of l_j = phi_on_j - phi_off_j (the Gumbel-softmax
    over the pair and the KL term are invariant to adding a constant to both), but CARMA deploys
    m_j = 1[sigmoid(phi_on_j) > 1/2] = 1[phi_on_j > 0], which ignores phi_off_j. Because the
    loss's gradients on phi_on_j and phi_off_j are opposite, phi_on_j + phi_off_j is never trained
    (the head's sum weights and biases keep their initial values: checked on a trained model),
    so the deployed mask equals 1[l_j > -(phi_on_j + phi_off_j)]: a person-dependent threshold
    set by the initialization, which switches off some features the mask network means to use
    and on some it does not (README "Reproducing the papers": what it does to Table 1).

    - ``intervention`` (our fast configuration's; the do-operator of the iCARMA paper's
      appendix A.4): moves in range units, a_j = x_j + M_j * delta_j (M_j the feature's training
      range, also the scale of the action cost), and x' = CF_flow(x, do(x_m = a_m)).
    - ``latent-shift`` (the paper configuration's: CARMA's reference code acts so, in its
      ``downstream_for_recourse``; engine.recourse.icarma.config): shifts of the flow's noise,
      s_j = clamp(delta_j, s_lo, s_hi), and x' = T^{-1}(T(x) + m s) (engine.flows).
      (s_lo, s_hi) = ``shift_bounds``: CARMA's rule (its ``z_clipper``) is (floor min u, ceil max
      u) over the abducted noise of the training people the decision model rejects; its value
      under CARMA's own published flow is engine.recourse.icarma.config.CARMA_SHIFT_BOUNDS. The
      plan is stated as do(x_m = x'_m), which gives the same x' on the flow. The clamp bounds how
      far one feature can move: a person whose approval needs a larger shift of their only
      actionable feature cannot get it.
    """

    def __init__(
        self,
        mean: Tensor,
        std: Tensor,
        ranges: Tensor,
        actionable: Tensor,
        hidden: tuple[int, ...] = (64, 64),
        mask_head: str = DEFAULT_MASK_HEAD,
        action_space: str = INTERVENTION,
        shift_bounds: tuple[float, float] | None = None,
    ) -> None:
        super().__init__()
        if mask_head not in MASK_HEADS:
            raise ValueError(f"mask_head must be one of {', '.join(MASK_HEADS)}, got {mask_head!r}")
        if action_space not in ACTION_SPACES:
            raise ValueError(f"action_space must be one of {', '.join(ACTION_SPACES)}, got "
                             f"{action_space!r}")
        if shift_bounds is not None:
            check_shift_bounds(shift_bounds)
        d, g = mean.shape[0], actionable.shape[0]
        if std.shape != (d,) or ranges.shape != (d,):
            raise ValueError(f"mean, std and ranges must all have shape ({d},)")
        if (std <= 0).any() or (ranges <= 0).any():
            raise ValueError("feature standard deviations and ranges must be positive")
        self.register_buffer("mean", mean.to(torch.float32))
        self.register_buffer("std", std.to(torch.float32))
        self.register_buffer("ranges", ranges.to(torch.float32))
        self.register_buffer("actionable", actionable.to(torch.long))
        self.hidden = tuple(hidden)
        self.mask_head = mask_head
        self.action_space = action_space
        if action_space != INTERVENTION:  # None: unclamped (a loaded model brings its own)
            bounds = (-torch.inf, torch.inf) if shift_bounds is None else shift_bounds
            self.register_buffer("shift_bounds", torch.tensor(bounds, dtype=torch.float32))
        self.mask_net = mlp(d + 3 * g, self.hidden, g if mask_head == DEFAULT_MASK_HEAD else 2 * g)
        if mask_head == "carma":
            self.mask_net.apply(_carma_init)
        self.action_net = mlp(d + 4 * g, self.hidden, g)

    @property
    def d(self) -> int:
        return int(self.mean.shape[0])

    @property
    def g(self) -> int:
        return int(self.actionable.shape[0])

    @property
    def needs_flow(self) -> bool:
        """Whether the intervention values need the causal flow (``latent-shift``)."""
        return self.action_space != INTERVENTION

    def standardize(self, x: Tensor) -> Tensor:
        return (x.to(torch.float32) - self.mean) / self.std

    def mask_outputs(self, x: Tensor, code: Tensor) -> Tensor:
        """The mask network's raw outputs: (n, g) log-odds, or (n, g, 2) (off, on) logits."""
        out = self.mask_net(torch.cat([self.standardize(x), code], dim=1))
        return out if self.mask_head == DEFAULT_MASK_HEAD else out.view(out.shape[0], self.g, 2)

    def log_odds(self, outputs: Tensor) -> Tensor:
        """The log-odds l of switching each feature on, shape (n, g), from ``mask_outputs``
        (``carma`` head: l = phi_on - phi_off, all that the Gumbel sample and the KL term
        depend on)."""
        if self.mask_head == DEFAULT_MASK_HEAD:
            return outputs
        return outputs[..., 1] - outputs[..., 0]

    def mask_logits(self, x: Tensor, code: Tensor) -> Tensor:
        """l = log-odds of f_phi(x~, c), shape (n, g)."""
        return self.log_odds(self.mask_outputs(x, code))

    def deployment_mask(self, outputs: Tensor, hard: Tensor, fill_empty: bool) -> Tensor:
        """The deterministic mask (module docstring) from ``mask_outputs``: 1[l > 0] h, or
        under the ``carma`` head CARMA's deployed mask 1[phi_on > 0] h."""
        scores = outputs if self.mask_head == DEFAULT_MASK_HEAD else outputs[..., 1]
        return self.deterministic_mask(scores, hard, fill_empty)

    def sample_mask(self, logits: Tensor, hard: Tensor, tau: float) -> Tensor:
        """Straight-through Gumbel-softmax mask (0/1 forward, relaxed gradient) times h, its
        noise from torch's global generator."""
        noise = torch.empty((*logits.shape, 2), dtype=logits.dtype).exponential_()
        return straight_through_mask(logits, hard, tau, noise)

    @staticmethod
    def deterministic_mask(logits: Tensor, hard: Tensor, fill_empty: bool) -> Tensor:
        """m_j = 1[l_j > 0] h_j; ``fill_empty``: the most probable actionable feature where m
        would be empty (our option; the paper leaves such a person without an action)."""
        hard_b = hard.bool()
        m = (logits > 0) & hard_b
        if not fill_empty:
            return m.to(torch.float32)
        masked = torch.where(hard_b, logits, torch.full_like(logits, -torch.inf))
        best = F.one_hot(masked.argmax(dim=1), logits.shape[1]).bool() & hard_b
        empty = ~m.any(dim=1, keepdim=True)
        return torch.where(empty, best, m).to(torch.float32)

    def proposal(self, x: Tensor, mask: Tensor, code: Tensor, flow: Any) -> tuple[Tensor, Tensor]:
        """(intervention values a (n, d), the flow's counterfactual x' (n, d)) for an (n, g)
        mask, by the ``action_space`` of the module docstring; a = x off G (and, under
        latent-shift, a = x' on G). Differentiable in the mask and the networks."""
        x32 = x.to(torch.float32)
        full = self.full_mask(mask)
        if self.action_space == INTERVENTION:
            values = self.action_values(x32, mask, code)
            return values, flow.counterfactual(x32, full, values)
        lo, hi = self.shift_bounds
        shift = torch.zeros_like(x32)
        shift[:, self.actionable] = self._delta(x32, mask, code).clamp(lo, hi)
        x_cf = flow.shift(x32, full, shift)
        return torch.where(full.bool(), x_cf, x32), x_cf

    def action_values(
        self, x: Tensor, mask: Tensor, code: Tensor, flow: Any = None
    ) -> Tensor:
        """Intervention values a (n, d): under ``intervention`` x_j + M_j delta_j on G, x
        elsewhere; under ``latent-shift`` those of ``proposal`` (which needs the flow)."""
        if self.action_space != INTERVENTION:
            if flow is None:
                raise ValueError("a latent-shift model's values need the causal flow")
            return self.proposal(x, mask, code, flow)[0]
        x32 = x.to(torch.float32)
        values = x32.clone()
        idx = self.actionable
        values[:, idx] = x32[:, idx] + self.ranges[idx] * self._delta(x32, mask, code)
        return values

    def _delta(self, x: Tensor, mask: Tensor, code: Tensor) -> Tensor:
        """The action network's output delta = f_theta(x~, m, c), shape (n, g)."""
        return self.action_net(torch.cat([self.standardize(x), mask, code], dim=1))

    def full_mask(self, mask: Tensor) -> Tensor:
        """Scatter an (n, g) mask over G into an (n, d) mask over all features."""
        out = torch.zeros(mask.shape[0], self.d, dtype=mask.dtype, device=mask.device)
        out[:, self.actionable] = mask
        return out


def straight_through_mask(logits: Tensor, hard: Tensor, tau: float, noise: Tensor) -> Tensor:
    """The straight-through Gumbel-softmax mask of the module docstring from standard
    exponential draws ``noise`` (shape (*logits.shape, 2)): gumbel = -log(noise) over the
    classes (off, on) with logits (0, l_j), y = softmax((logits + gumbel) / tau), forward value
    onehot(argmax y)[on] (exactly 0/1), gradient y's; times h. The computation of torch's
    ``gumbel_softmax(hard=True)``, with the noise passed in so that an ensemble can draw each
    member's from that member's own generator (engine.recourse.icarma.ensemble)."""
    two = torch.stack([torch.zeros_like(logits), logits], dim=-1)
    y = ((two - noise.log()) / tau).softmax(dim=-1)
    index = y.max(dim=-1, keepdim=True)[1]
    y_hard = torch.zeros_like(two).scatter_(-1, index, 1.0)
    on = (y_hard - y.detach() + y)[..., 1]
    return on * hard.to(on.dtype)


def _carma_init(module: nn.Module) -> None:
    """CARMA's initialization of its mask network: Xavier-uniform weights with ReLU gain,
    biases 0.01."""
    if isinstance(module, nn.Linear):
        nn.init.xavier_uniform_(module.weight, gain=nn.init.calculate_gain("relu"))
        nn.init.constant_(module.bias, 0.01)
