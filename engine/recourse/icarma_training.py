"""Training iCARMA (and CARMA) on the decision model's rejections, with preference sampling.

For a batch of rejected factuals x_i with sampled profiles (h_i, w_i, pi_i) the networks of
engine.recourse.icarma_networks give a straight-through mask m_i (0/1, only on F_i) and
intervention values a_i; the causal flow gives the counterfactual x'_i = CF_flow(x_i,
do(x_m = a_m)) (abduction and prediction, differentiable in m and a). The loss is

    L = 1/n sum_i [ hinge_i + lambda_c cost_i + lambda_kl KL_i + lambda_p plaus_i
                    + lambda_f feas_i ]

    hinge_i = max(0, eps - (2 h(x'_i) - 1))            validity with margin eps (CARMA)
    cost_i  = sum_{j in G} m_ij w_ij |a_ij - x_ij| / M_j  individually weighted L1 action cost
    KL_i    = sum_{j in F_i} KL(Bern(q_ij) || Bern(pi_ij))  mask network vs the priors
    plaus_i = -log p_flow(x'_i)                          plausibility regularizer
    feas_i  = sum_j [max(0, lo_j - x'_ij) + max(0, x'_ij - hi_j)] / M_j   leaving the range

with h the decision model's favourable probability, q_ij = sigmoid(l_ij) the mask network's
probabilities, M_j, lo_j, hi_j the training range of feature j (paper eqs. 6-16).

Preference sampling (data augmentation, appendix B.2). Every batch draws a fresh profile per
person: how many and which globally actionable features are actionable (uniform), a uniform
ranking over them (or uniform Likert scores), and a cost profile uniformly among
constant/concave/linear/convex. The profile code fed to both networks carries the resulting
weights and priors, so one trained model serves every profile and every cost profile at
deployment. CARMA (``individual=False``) trains the same networks with every globally
actionable feature on and the constant cost profile for everybody.

Model selection: every ``eval_every`` epochs the loss with deterministic masks is computed on
the validation split's rejections (with fixed sampled profiles); the best state is kept.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from engine.decision import rejected_rows
from engine.preferences import (
    COST_PROFILE_EXPONENTS,
    CostProfile,
    all_actionable,
    sample_profiles,
)
from engine.recourse.icarma_networks import AmortizedRecourse, code_from_parts
from engine.scenarios.base import Scenario


@dataclass(frozen=True)
class ICarmaConfig:
    """Hyper-parameters. Defaults: the paper's ranking setting, epochs cut to fit ~5 minutes."""

    epochs: int = 60
    batch_size: int = 128
    lr: float = 0.005
    hinge_margin: float = 0.013
    validity_weight: float = 1.0
    tau: float = 0.36
    cost_weight: float = 1.1
    plausibility_weight: float = 0.225
    feasibility_weight: float = 0.1
    kl_weight: float = 1.5
    hidden: tuple[int, ...] = (64, 64)
    individual: bool = True
    elicitation: str = "ranking"
    cost_profiles: tuple[str, ...] = ("constant", "concave", "linear", "convex")
    max_people: int | None = None
    eval_every: int = 5
    seed: int = 0

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 1 or self.eval_every < 1:
            raise ValueError("epochs, batch_size and eval_every must be >= 1")
        if self.tau <= 0 or self.lr <= 0:
            raise ValueError("tau and lr must be positive")
        unknown = [c for c in self.cost_profiles if c not in COST_PROFILE_EXPONENTS]
        if unknown or not self.cost_profiles:
            raise ValueError(
                f"cost_profiles must be a non-empty subset of {', '.join(COST_PROFILE_EXPONENTS)}"
            )

    @classmethod
    def reduced(cls, **overrides: Any) -> ICarmaConfig:
        """A configuration for tests: few people, few epochs (well under a minute)."""
        base = {"epochs": 8, "batch_size": 128, "max_people": 768, "eval_every": 2}
        return cls(**{**base, **overrides})

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["hidden"] = list(self.hidden)
        out["cost_profiles"] = list(self.cost_profiles)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ICarmaConfig:
        d = dict(d)
        d["hidden"] = tuple(d["hidden"])
        d["cost_profiles"] = tuple(d["cost_profiles"])
        return cls(**d)


@dataclass
class TrainingLog:
    """What happened during training: per-evaluation validation loss and flow validity."""

    epochs: list[int] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    val_validity: list[float] = field(default_factory=list)
    best_epoch: int = 0
    seconds: float = 0.0


@dataclass
class ProfileBatch:
    """Sampled profile parts over the globally actionable features, each (n, g) float32."""

    hard: Tensor
    weights: Tensor
    priors: Tensor

    @property
    def code(self) -> Tensor:
        return code_from_parts(self.hard, self.weights, self.priors)


def sample_profile_batch(
    scenario: Scenario, n: int, config: ICarmaConfig, rng: np.random.Generator
) -> ProfileBatch:
    """Profiles for n people (module docstring): uniform actionable sets, rankings, costs."""
    idx = list(scenario.actionable)
    if not config.individual:
        p = all_actionable(scenario.feature_names, scenario.actionable, n)
        cp = CostProfile("constant")
        return ProfileBatch(
            p.hard_mask[:, idx].float(), p.weights(cp)[:, idx].float(), p.priors(cp)[:, idx].float()
        )
    p = sample_profiles(
        scenario.feature_names,
        scenario.actionable,
        n,
        elicitation=config.elicitation,  # type: ignore[arg-type]
        seed=rng,
    )
    choice = torch.from_numpy(rng.integers(len(config.cost_profiles), size=n))
    profiles = [CostProfile(name) for name in config.cost_profiles]  # type: ignore[arg-type]
    w = torch.stack([p.weights(cp)[:, idx] for cp in profiles])[choice, torch.arange(n)]
    pi = torch.stack([p.priors(cp)[:, idx] for cp in profiles])[choice, torch.arange(n)]
    return ProfileBatch(p.hard_mask[:, idx].float(), w.float(), pi.float())


def logit_margin(eps: float) -> float:
    """The logit margin equivalent to the paper's margin eps on 2 h - 1: 2 artanh(eps)."""
    return 2.0 * math.atanh(eps)


def decision_logits(classifier: Any, x: Tensor) -> Tensor:
    """The decision model's favourable logit (its forward pass when it is a torch module)."""
    if isinstance(classifier, torch.nn.Module):
        return classifier(x).reshape(-1)
    p = classifier.predict_proba(x).reshape(-1)
    return torch.logit(p, eps=1e-6)


def bernoulli_kl(q_logits: Tensor, prior: Tensor, hard: Tensor) -> Tensor:
    """sum_j h_j KL(Bern(sigmoid(l_j)) || Bern(pi_j)) per person."""
    q = torch.sigmoid(q_logits)
    pi = prior.clamp(1e-4, 1 - 1e-4)
    log_q, log_1q = F.logsigmoid(q_logits), F.logsigmoid(-q_logits)
    kl = q * (log_q - pi.log()) + (1 - q) * (log_1q - torch.log1p(-pi))
    return (kl * hard).sum(dim=1)


def recourse_loss(
    model: AmortizedRecourse,
    flow: Any,
    classifier: Any,
    x: Tensor,
    prof: ProfileBatch,
    config: ICarmaConfig,
    bounds: Tensor,
    *,
    deterministic: bool = False,
) -> tuple[Tensor, dict[str, Tensor]]:
    """The loss of the module docstring (mean over the batch) and its parts per person."""
    code = prof.code
    logits = model.mask_logits(x, code)
    if deterministic:
        m = model.deterministic_mask(logits, prof.hard)
    else:
        m = model.sample_mask(logits, prof.hard, config.tau)
    values = model.action_values(x, m, code)
    full = model.full_mask(m)
    x_cf = flow.counterfactual(x.float(), full, values)
    idx = model.actionable
    moved = (values[:, idx] - x[:, idx].float()).abs() / model.ranges[idx]
    cost = (m * prof.weights * moved).sum(dim=1)
    hinge = F.relu(logit_margin(config.hinge_margin) - decision_logits(classifier, x_cf))
    kl = bernoulli_kl(logits, prof.priors, prof.hard)
    plaus = -flow.log_prob(x_cf)
    lo, hi = bounds[0].float(), bounds[1].float()
    feas = ((F.relu(lo - x_cf) + F.relu(x_cf - hi)) / model.ranges).sum(dim=1)
    total = (
        config.validity_weight * hinge
        + config.cost_weight * cost
        + config.kl_weight * kl
        + config.plausibility_weight * plaus
        + config.feasibility_weight * feas
    )
    parts = {"hinge": hinge, "cost": cost, "kl": kl, "plaus": plaus, "feas": feas, "x_cf": x_cf}
    return total.mean(), parts


def train_amortized(
    scenario: Scenario,
    classifier: Any,
    flow: Any,
    config: ICarmaConfig,
    progress: Callable[[int, int, dict[str, float]], None] | None = None,
) -> tuple[AmortizedRecourse, TrainingLog]:
    """Train the mask and action networks (module docstring); returns the best state."""
    start = time.perf_counter()
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    train_rows = torch.from_numpy(rejected_rows(scenario, classifier, "train"))
    val_rows = torch.from_numpy(rejected_rows(scenario, classifier, "validation"))
    x_train = scenario.dataset["train"][0].float()[train_rows]
    x_val = scenario.dataset["validation"][0].float()[val_rows]
    if config.max_people is not None:
        x_train = x_train[torch.randperm(len(x_train))[: config.max_people]]
        x_val = x_val[: max(config.max_people // 2, 1)]
    if len(x_train) == 0:
        raise ValueError("the decision model rejects nobody in the training split")
    train_all = scenario.dataset["train"][0]
    model = AmortizedRecourse(
        train_all.mean(dim=0),
        train_all.std(dim=0),
        scenario.ranges,
        torch.tensor(scenario.actionable),
        config.hidden,
    )
    bounds = scenario.bounds
    val_prof = sample_profile_batch(scenario, len(x_val), config, np.random.default_rng(10**6))
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    steps_per_epoch = math.ceil(len(x_train) / config.batch_size)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, config.epochs * steps_per_epoch)
    log = TrainingLog()
    best_loss, best_state = math.inf, copy.deepcopy(model.state_dict())
    for epoch in range(1, config.epochs + 1):
        model.train()
        perm = torch.randperm(len(x_train))
        for b in range(0, len(perm), config.batch_size):
            xb = x_train[perm[b : b + config.batch_size]]
            prof = sample_profile_batch(scenario, len(xb), config, rng)
            loss, _ = recourse_loss(model, flow, classifier, xb, prof, config, bounds)
            opt.zero_grad()
            loss.backward()
            opt.step()
            schedule.step()
        if epoch % config.eval_every == 0 or epoch == config.epochs:
            model.eval()
            with torch.no_grad():
                vloss, parts = recourse_loss(
                    model, flow, classifier, x_val, val_prof, config, bounds, deterministic=True
                )
                vvalid = float(classifier.decision(parts["x_cf"]).float().mean())
            log.epochs.append(epoch)
            log.val_loss.append(float(vloss))
            log.val_validity.append(vvalid)
            if float(vloss) < best_loss:
                best_loss, log.best_epoch = float(vloss), epoch
                best_state = copy.deepcopy(model.state_dict())
            if progress is not None:
                progress(epoch, config.epochs, {"val_loss": float(vloss), "val_validity": vvalid})
    model.load_state_dict(best_state)
    model.eval()
    log.seconds = time.perf_counter() - start
    return model, log
