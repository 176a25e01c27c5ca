"""Training iCARMA (and CARMA) on the decision model's rejections, with preference sampling.

For a batch of rejected factuals x_i with sampled profiles (h_i, w_i, pi_i) the networks of
engine.recourse.icarma.networks give a straight-through mask m_i (0/1, only on F_i) and
intervention values a_i; the causal flow gives the counterfactual x'_i = CF_flow(x_i,
do(x_m = a_m)) (abduction and prediction, differentiable in m and a), or under CARMA's
``action_space = latent-shift`` x'_i = T^{-1}(T(x_i) + m_i s_i) with clamped latent shifts
s_i and a_i = x'_i on the mask. The loss is

    L = 1/n sum_i [ hinge_i + lambda_c cost_i + lambda_kl KL_i + lambda_p plaus_i
                    + lambda_f feas_i ]

    hinge_i = max(0, eps - (2 h(x'_i) - 1))            validity with margin eps (CARMA)
              (fast configuration: max(0, 2 artanh(eps) - logit h(x'_i)), the same margin)
    cost_i  = sum_{j in G} m_ij w_ij |a_ij - x_ij| / M_j  individually weighted L1 action cost
    KL_i    = sum_{j in F_i} KL(Bern(q_ij) || Bern(pi_ij))  mask network vs the priors
    plaus_i = -log p_flow(x'_i)                          plausibility regularizer
    feas_i  = sum_j [max(0, lo_j - x'_ij) + max(0, x'_ij - hi_j)] / M_j   leaving the range

with h the decision model's favourable probability, q_ij = sigmoid(l_ij) the mask network's
probabilities, M_j, lo_j, hi_j the training range of feature j (paper eqs. 6-16). The
hinge's weight lambda_v is a multiplier (``ValidityMultiplier``: CARMA's rule, its variant
counting acting draws only) or fixed; what each reading does to Tables 1-3:
docs/reproductions/icarma.md, "The training readings compared". Profiles are drawn afresh for
every batch (``sample_profile_batch``); ``train_amortized`` runs the training.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from engine.decision import favourable_logit, rejected_rows
from engine.icarma_choices import INTERVENTION
from engine.preferences import CostProfile, all_actionable, sample_profiles
from engine.recourse.icarma.config import ICarmaConfig
from engine.recourse.icarma.log import TrainingLog, finish_log, record_evaluation
from engine.recourse.icarma.networks import AmortizedRecourse, code_from_parts
from engine.scenarios.base import Scenario


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
    """Profiles for n people (module docstring): uniform actionable sets, rankings, costs.

    Preference sampling (data augmentation, the iCARMA paper's appendix B.2). Every batch draws
    a fresh profile per person: how many and which globally actionable features are actionable
    (uniform) and a uniform ranking over them, or Likert scores (engine.preferences,
    ``score_sampling``), and a cost profile uniformly among the configuration's
    ``cost_profiles`` (the paper: one model per profile; the fast configuration: all four). The
    profile code fed to both networks carries the resulting weights and priors. CARMA
    (``individual=False``) trains the same networks with every globally actionable feature on
    and the constant cost profile for everybody.
    """
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
        score_sampling=config.score_sampling,
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
    validity_weight: float | Tensor | None = None,
) -> tuple[Tensor, dict[str, Tensor]]:
    """The loss of the module docstring (mean over the batch) and its parts per person
    (``total``: the loss per person);
    ``validity_weight`` (default ``config.validity_weight``) multiplies the hinge."""
    code = prof.code
    outputs = model.mask_outputs(x, code)
    logits = model.log_odds(outputs)
    if deterministic:
        m = model.deployment_mask(outputs, prof.hard, config.fill_empty_mask)
    else:
        m = model.sample_mask(logits, prof.hard, config.tau)
    values, x_cf = model.proposal(x, m, code, flow)
    idx = model.actionable
    moved = (values[:, idx] - x[:, idx].float()).abs() / model.ranges[idx]
    cost = (m * prof.weights * moved).sum(dim=1)
    logit = favourable_logit(classifier, x_cf)
    if config.validity_loss == "hinge-probability":
        hinge = F.relu(config.hinge_margin - (2.0 * torch.sigmoid(logit) - 1.0))
    else:
        hinge = F.relu(logit_margin(config.hinge_margin) - logit)
    kl = bernoulli_kl(logits, prof.priors, prof.hard)
    plaus = -flow.log_prob(x_cf)
    lo, hi = bounds[0].float(), bounds[1].float()
    feas = ((F.relu(lo - x_cf) + F.relu(x_cf - hi)) / model.ranges).sum(dim=1)
    weight = config.validity_weight if validity_weight is None else validity_weight
    total = (
        weight * hinge
        + config.cost_weight * cost
        + config.kl_weight * kl
        + config.plausibility_weight * plaus
        + config.feasibility_weight * feas
    )
    parts = {"hinge": hinge, "cost": cost, "kl": kl, "plaus": plaus, "feas": feas, "x_cf": x_cf,
             "mask": m, "total": total}
    return total.mean(), parts


class ValidityMultiplier:
    """The hinge's weight during training (module docstring): ``fixed`` =
    ``config.validity_weight``; ``lagrangian`` = CARMA's modified method of multipliers,
    weight lambda - d * hinge (the damping part added by the training loop), then
    lambda <- max(0, lambda + s * hinge) after every step (hinge = the batch mean; for
    ``lagrangian-acting`` the mean over the draws whose sampled ``mask`` acts, 0 if none).

    Under a multiplier (CARMA's reference code: validity as a constraint, the modified
    differential method of multipliers, Platt & Barr 1988) the batch loss is

        L_b = mean_i [cost, KL, plausibility, feasibility terms] + (lambda - d * H_b) * H_b,

    H_b = mean_i hinge_i, and after every step lambda <- max(0, lambda + s H'_b) (lambda starts
    at 0, d = ``lagrange_damping`` = 10, s = ``lagrange_step`` = 1, CARMA's values).
    ``validity_multiplier = lagrangian`` (the default, CARMA's rule) takes H'_b = H_b;
    ``lagrangian-acting`` (our variant) takes H'_b over the draws whose sampled mask acts
    (m_i != 0) only: a draw with an empty mask cannot be valid whatever the networks do, and
    such draws are what keeps the multiplier growing. ``fixed`` keeps lambda_v =
    ``validity_weight`` (our fast configuration: 1; the calibrated variant of the paper's: 8,
    engine.recourse.icarma.config). Validation losses use ``validity_weight``.
    """

    def __init__(self, config: ICarmaConfig) -> None:
        self.config = config
        self.lagrangian = config.validity_multiplier in ("lagrangian", "lagrangian-acting")
        self.acting_only = config.validity_multiplier == "lagrangian-acting"
        self.lam = 0.0
        self.weight: float = config.validity_weight

    @property
    def value(self) -> float:
        """The weight to log: lambda under a multiplier rule, else the fixed weight."""
        return self.lam if self.lagrangian else self.weight

    def prepare(self) -> None:
        if self.lagrangian:
            self.weight = self.lam

    def update(self, hinge: Tensor, mask: Tensor | None = None) -> None:
        if not self.lagrangian:
            return
        h = hinge.detach()
        if self.acting_only:
            if mask is None:
                raise ValueError("lagrangian-acting needs the sampled mask")
            acting = mask.detach().sum(dim=1) > 0
            h = h[acting] if bool(acting.any()) else torch.zeros(1)
        self.lam = max(0.0, self.lam + self.config.lagrange_step * float(h.mean()))


@dataclass
class TrainingSetup:
    """What one training run starts from (``prepare_training``): its people, the validation
    people and their fixed profiles, the untrained networks and the profile generator."""

    config: ICarmaConfig
    x_train: Tensor
    x_val: Tensor
    val_prof: ProfileBatch
    model: AmortizedRecourse
    rng: np.random.Generator

    @property
    def steps_per_epoch(self) -> int:
        return math.ceil(len(self.x_train) / self.config.batch_size)


def prepare_training(
    scenario: Scenario, classifier: Any, flow: Any, config: ICarmaConfig
) -> TrainingSetup:
    """Seed torch's global generator and numpy's with ``config.seed``, pick the rejected
    training and validation people (``max_people``: a random subset) and initialize the
    networks: everything before the first epoch, consuming the global generator exactly as
    the training loop of ``train_amortized`` expects."""
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    train_rows = torch.from_numpy(rejected_rows(scenario, classifier, "train"))
    val_rows = torch.from_numpy(rejected_rows(scenario, classifier, "validation"))
    x_train = scenario.dataset["train"][0].float()[train_rows]
    # CARMA's clamp rule reads the latents of every rejected training person (before sampling)
    shift_bounds = (None if config.action_space == INTERVENTION
                    else config.shift_bounds or flow.latent_range(x_train))
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
        config.mask_head,
        config.action_space,
        shift_bounds,
    )
    val_prof = sample_profile_batch(scenario, len(x_val), config, np.random.default_rng(10**6))
    return TrainingSetup(config, x_train, x_val, val_prof, model, rng)


def make_optimizer(
    params: Any, config: ICarmaConfig, steps_per_epoch: int
) -> tuple[torch.optim.Adam, Any]:
    """Adam at ``config.lr`` and, under the cosine schedule, its decay over every step."""
    opt = torch.optim.Adam(params, lr=config.lr)
    schedule = (
        torch.optim.lr_scheduler.CosineAnnealingLR(opt, config.epochs * steps_per_epoch)
        if config.schedule == "cosine"
        else None
    )
    return opt, schedule


def train_amortized(
    scenario: Scenario,
    classifier: Any,
    flow: Any,
    config: ICarmaConfig,
    progress: Callable[[int, int, dict[str, float]], None] | None = None,
) -> tuple[AmortizedRecourse, TrainingLog]:
    """Train the mask and action networks (module docstring); returns the kept state.
    Several seeds of one configuration train together, with the same result, in
    engine.recourse.icarma.ensemble.

    Adam runs for ``epochs`` (``schedule``: constant learning rate as the paper, or a cosine
    decay). Every ``eval_every`` epochs the deterministic-mask loss, the flow-predicted validity
    and the mean weighted action cost are computed on the validation split's rejections
    (recourse role, fixed sampled profiles). ``keep``: ``last`` keeps the final state (the
    paper, as CARMA's reference code), ``best`` the state of the lowest validation loss. The
    kept state's validation score, cost + (1 - validity) (CARMA's criterion for picking among
    trained models), is what selects the best of several seeds (engine.artifacts).
    """
    start = time.perf_counter()
    setup = prepare_training(scenario, classifier, flow, config)
    model, x_train, rng, bounds = setup.model, setup.x_train, setup.rng, scenario.bounds
    opt, schedule = make_optimizer(model.parameters(), config, setup.steps_per_epoch)
    log = TrainingLog()
    multiplier = ValidityMultiplier(config)
    best_state = copy.deepcopy(model.state_dict())
    window = torch.zeros(3)  # training draws, active hinges, empty masks since the last eval
    for epoch in range(1, config.epochs + 1):
        model.train()
        perm = torch.randperm(len(x_train))
        for b in range(0, len(perm), config.batch_size):
            xb = x_train[perm[b : b + config.batch_size]]
            prof = sample_profile_batch(scenario, len(xb), config, rng)
            multiplier.prepare()
            loss, parts = recourse_loss(
                model, flow, classifier, xb, prof, config, bounds,
                validity_weight=multiplier.weight,
            )
            if multiplier.lagrangian:  # add the damping term: needs this batch's hinge
                hinge = parts["hinge"].mean()
                loss = loss - config.lagrange_damping * hinge.detach() * hinge
            opt.zero_grad()
            loss.backward()
            opt.step()
            multiplier.update(parts["hinge"], parts["mask"])
            with torch.no_grad():
                window += torch.tensor([len(xb), float((parts["hinge"] > 0).sum()),
                                        float((parts["mask"].sum(dim=1) == 0).sum())])
            if schedule is not None:
                schedule.step()
        if epoch % config.eval_every == 0 or epoch == config.epochs:
            model.eval()
            with torch.no_grad():
                vloss, parts = recourse_loss(
                    model, flow, classifier, setup.x_val, setup.val_prof, config, bounds,
                    deterministic=True,
                )
                vvalid = float(classifier.decision(parts["x_cf"]).float().mean())
            figures = (float(vloss), vvalid, float(parts["cost"].mean()))
            if record_evaluation(log, epoch, figures, multiplier.value, window):
                best_state = copy.deepcopy(model.state_dict())
            if progress is not None:
                progress(epoch, config.epochs, {"val_loss": float(vloss), "val_validity": vvalid})
    if config.keep == "best":
        model.load_state_dict(best_state)
    model.eval()
    finish_log(log, config, start)
    return model, log


__all__ = [
    "ProfileBatch", "TrainingLog", "TrainingSetup", "ValidityMultiplier", "bernoulli_kl",
    "logit_margin", "make_optimizer", "prepare_training", "recourse_loss",
    "sample_profile_batch", "train_amortized",
]
