"""Several seeds of one iCARMA configuration trained together, each as if trained alone.

The paper trains every setup over ten seeds and reports the best on validation
(engine.paper_models). A run is small (batches of 128 people, two perceptrons of width 64, the
causal flow), so its time goes into per-operation overhead rather than arithmetic, and K runs
side by side cost little more than one: this module trains K seeds s_1 .. s_K of a
configuration as one ``RecourseEnsemble`` (engine.recourse.icarma_stacked) on member-major
batches of K x 128 rows.

Member k reproduces ``train_amortized`` with ``seed = s_k``:

- the same start: ``prepare_training`` seeds torch's and numpy's generators with s_k, picks
  the people and initializes the networks exactly as the single run does; the ensemble stacks
  those weights and continues member k's torch stream in a generator of its own (the state
  of the global generator after its setup);
- the same data order and draws: per epoch member k's permutation comes from that generator,
  its Gumbel noise too, its profiles from its own numpy generator, in the single run's order;
- the same loss and step: member k's loss is the mean over its own rows (with its own hinge
  weight lambda_k, CARMA's multiplier updated from its own hinge); the summed loss has
  gradient d L_k / d theta_k on member k's parameters, and Adam is element-wise;
- the same evaluation, log and kept state (``keep``), per member.

The arithmetic is the same per row (batched products per member, the flow row-wise, the
decision model on each member's block), so the members equal their single runs up to
floating-point summation order (tests compare the weights after training).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import torch
from torch import Tensor, nn

from engine.decision import favourable_logit
from engine.recourse.icarma_config import ICarmaConfig
from engine.recourse.icarma_log import TrainingLog, finish_log, record_evaluation
from engine.recourse.icarma_networks import AmortizedRecourse
from engine.recourse.icarma_stacked import RecourseEnsemble
from engine.recourse.icarma_training import (
    ProfileBatch,
    TrainingSetup,
    ValidityMultiplier,
    make_optimizer,
    prepare_training,
    recourse_loss,
    sample_profile_batch,
)
from engine.scenarios.base import Scenario


def _same_but_seed(configs: Sequence[ICarmaConfig]) -> ICarmaConfig:
    if not configs:
        raise ValueError("an ensemble needs at least one configuration")
    first = configs[0]
    for c in configs[1:]:
        if replace(c, seed=first.seed) != first:
            raise ValueError("ensemble members may differ in their seed only")
    if len({c.seed for c in configs}) != len(configs):
        raise ValueError("ensemble members need distinct seeds")
    return first


class MemberwiseClassifier(nn.Module):
    """The decision model evaluated on each member's block of rows separately: its products
    on K n rows can round differently from those on n (measured on the trained Loan model:
    logits apart by 1.5e-5 on blocks of 123 rows), and the single run sees n."""

    def __init__(self, classifier: Any, members: int) -> None:
        super().__init__()
        self.classifier = classifier
        self.members = members

    def _blocks(self, fn: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
        return torch.cat([fn(block) for block in x.chunk(self.members)])

    def forward(self, x: Tensor) -> Tensor:
        return self._blocks(lambda b: favourable_logit(self.classifier, b), x)

    def decision(self, x: Tensor) -> Tensor:
        return self._blocks(self.classifier.decision, x)


def _cat_profiles(batches: Sequence[ProfileBatch]) -> ProfileBatch:
    return ProfileBatch(torch.cat([p.hard for p in batches]),
                        torch.cat([p.weights for p in batches]),
                        torch.cat([p.priors for p in batches]))


def _start(
    scenario: Scenario, classifier: Any, flow: Any, configs: Sequence[ICarmaConfig]
) -> tuple[list[TrainingSetup], list[torch.Generator]]:
    """Every member's setup as its single run makes it, and the generator continuing its
    torch stream from there."""
    setups, generators = [], []
    for config in configs:
        setups.append(prepare_training(scenario, classifier, flow, config))
        g = torch.Generator()
        g.set_state(torch.get_rng_state())
        generators.append(g)
    return setups, generators


def train_ensemble(
    scenario: Scenario,
    classifier: Any,
    flow: Any,
    configs: Sequence[ICarmaConfig],
    progress: Callable[[int, int, dict[str, float]], None] | None = None,
) -> list[tuple[AmortizedRecourse, TrainingLog]]:
    """Train the configurations (equal but for their seeds) together (module docstring);
    per member its kept model and log, as ``train_amortized`` returns them. Every log's
    ``seconds`` is the ensemble's wall time."""
    start = time.perf_counter()
    config = _same_but_seed(configs)
    setups, generators = _start(scenario, classifier, flow, configs)
    k = len(configs)
    ens = RecourseEnsemble([s.model for s in setups], generators)
    classifier = MemberwiseClassifier(classifier, k)
    bounds, n_train = scenario.bounds, len(setups[0].x_train)
    opt, schedule = make_optimizer(ens.parameters(), config, setups[0].steps_per_epoch)
    logs = [TrainingLog() for _ in configs]
    multipliers = [ValidityMultiplier(config) for _ in configs]
    best = [ens.member_state(i) for i in range(k)]
    windows = torch.zeros(k, 3)  # per member: draws, active hinges, empty masks
    x_val = torch.cat([s.x_val for s in setups])
    val_prof = _cat_profiles([s.val_prof for s in setups])
    n_val = len(setups[0].x_val)
    for epoch in range(1, config.epochs + 1):
        ens.train()
        perms = [torch.randperm(n_train, generator=g) for g in generators]
        for b in range(0, n_train, config.batch_size):
            xb = torch.cat([s.x_train[p[b : b + config.batch_size]]
                            for s, p in zip(setups, perms, strict=True)])
            n = len(xb) // k
            prof = _cat_profiles([sample_profile_batch(scenario, n, config, s.rng)
                                  for s in setups])
            for m in multipliers:
                m.prepare()
            weight = torch.tensor([m.weight for m in multipliers]).repeat_interleave(n)
            _, parts = recourse_loss(ens, flow, classifier, xb, prof, config, bounds,
                                     validity_weight=weight)
            losses = parts["total"].view(k, n).mean(dim=1)
            if multipliers[0].lagrangian:  # each member's damping term, its own hinge
                hinge = parts["hinge"].view(k, n).mean(dim=1)
                losses = losses - config.lagrange_damping * hinge.detach() * hinge
            opt.zero_grad()
            losses.sum().backward()
            opt.step()
            for i, m in enumerate(multipliers):
                rows = slice(i * n, (i + 1) * n)
                m.update(parts["hinge"][rows], parts["mask"][rows])
            with torch.no_grad():
                windows[:, 0] += n
                windows[:, 1] += (parts["hinge"] > 0).view(k, n).sum(dim=1)
                windows[:, 2] += (parts["mask"].sum(dim=1) == 0).view(k, n).sum(dim=1)
            if schedule is not None:
                schedule.step()
        if epoch % config.eval_every == 0 or epoch == config.epochs:
            ens.eval()
            with torch.no_grad():
                _, parts = recourse_loss(ens, flow, classifier, x_val, val_prof, config, bounds,
                                         deterministic=True)
                valid = classifier.decision(parts["x_cf"]).float()
            for i in range(k):
                rows = slice(i * n_val, (i + 1) * n_val)
                figures = (float(parts["total"][rows].mean()), float(valid[rows].mean()),
                           float(parts["cost"][rows].mean()))
                if record_evaluation(logs[i], epoch, figures, multipliers[i].value, windows[i]):
                    best[i] = ens.member_state(i)
            if progress is not None:
                progress(epoch, config.epochs, {
                    "val_loss": sum(log.val_loss[-1] for log in logs) / k,
                    "val_validity": sum(log.val_validity[-1] for log in logs) / k,
                })
    out = []
    for i, setup in enumerate(setups):
        model = setup.model
        model.load_state_dict(best[i] if config.keep == "best" else ens.member_state(i))
        model.eval()
        finish_log(logs[i], config, start)
        out.append((model, logs[i]))
    return out


__all__ = ["train_ensemble"]
