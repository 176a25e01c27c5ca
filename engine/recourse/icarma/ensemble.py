"""Several seeds of one iCARMA configuration trained together, each as if trained alone.

The paper trains every setup over ten seeds and reports the best on validation
(engine.papers.icarma.models). A run is small (batches of 128 people, two perceptrons of
width 64, the causal flow), so its time goes into per-operation overhead rather than
arithmetic, and K runs side by side cost little more than one: this module trains K seeds
s_1 .. s_K of a configuration as one ``RecourseEnsemble`` (engine.recourse.icarma.stacked)
on member-major batches of K x 128 rows.

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
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import torch
from torch import Tensor

from engine.recourse.icarma.config import ICarmaConfig
from engine.recourse.icarma.log import TrainingLog, finish_log, record_evaluation
from engine.recourse.icarma.networks import AmortizedRecourse
from engine.recourse.icarma.stacked import RecourseEnsemble
from engine.recourse.icarma.training import (
    ProfileBatch,
    TrainingSetup,
    ValidityMultiplier,
    make_optimizer,
    prepare_training,
    recourse_loss,
    sample_profile_batch,
)
from engine.scenarios.base import Scenario

# Bitwise, not just up to rounding. Every operation is row-wise or per member (batched products
# per member, the flow and the decision model row-wise, each member's reductions over its own
# rows), yet an element-wise kernel of torch on the CPU does not compute every element alike: its
# loop takes the tensor in vector chunks (16 floats under AVX2, two registers) and the remainder
# one element at a time, and a vectorized transcendental (sigmoid, log-sigmoid, exp, ...) can
# differ in the last bit from the scalar one; products and their backward take rows in blocks too.
# So an element computes alike alone and in the ensemble only if it sits at the same position of
# those chunks. Member k's block of a member-major (K n, c) tensor starts at element k n c: for n
# a multiple of ``ALIGNED_ROWS`` every member's block starts on a chunk boundary and ends on one,
# as its single run's tensor does, and the stacked step is bitwise the single runs' (the checks:
# docs/benchmarks.md, "Findings behind the code"). The paper's batches are 128 rows; the last
# batch of an epoch (Loan: 4,773 rejected training people, a last batch of 37) and the validation
# people are not aligned, so those steps run member by member (``RecourseEnsemble.alone``: each
# member's own rows through its single run's code), one step in 38 per epoch on Loan. Adam over
# the stacked parameters equals K Adams (its operations are correctly rounded element by element).
# The per-seed run itself is bitwise the same under one or two torch threads.
ALIGNED_ROWS = 64
"""Rows per member that put every member's block on a chunk boundary of torch's vector
loops (module docstring): a multiple of 16 under AVX2 and of 32 under AVX-512, and of both
halves of a tensor split over two threads."""


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


def _member_losses(
    ens: RecourseEnsemble, flow: Any, classifier: Any, xs: Sequence[Tensor],
    profs: Sequence[ProfileBatch], config: ICarmaConfig, bounds: Tensor,
    multipliers: Sequence[ValidityMultiplier] | None,
) -> tuple[Tensor, dict[str, Tensor]]:
    """Every member's loss on its own rows ``xs[k]`` (shape (K,); with ``multipliers`` the
    training loss, its hinge weighted and damped by member k's multiplier, else the
    deterministic validation loss) and the rows' parts (member-major, ``recourse_loss``'s).
    Stacked when the rows are ``ALIGNED_ROWS``-aligned, else member by member (module
    docstring)."""
    k, n = len(xs), len(xs[0])
    deterministic = multipliers is None
    if n % ALIGNED_ROWS == 0:
        weight = (None if multipliers is None
                  else torch.tensor([m.weight for m in multipliers]).repeat_interleave(n))
        _, parts = recourse_loss(ens, flow, classifier, torch.cat(list(xs)), _cat_profiles(profs),
                                 config, bounds, deterministic=deterministic,
                                 validity_weight=weight)
        losses = parts["total"].view(k, n).mean(dim=1)
        if multipliers is not None and multipliers[0].lagrangian:
            hinge = parts["hinge"].view(k, n).mean(dim=1)
            losses = losses - config.lagrange_damping * hinge.detach() * hinge
        return losses, parts
    per_member = []
    for i in range(k):
        with ens.alone(i):
            loss, parts = recourse_loss(
                ens, flow, classifier, xs[i], profs[i], config, bounds,
                deterministic=deterministic,
                validity_weight=None if multipliers is None else multipliers[i].weight)
        if multipliers is not None and multipliers[i].lagrangian:  # as train_amortized
            hinge = parts["hinge"].mean()
            loss = loss - config.lagrange_damping * hinge.detach() * hinge
        per_member.append((loss, parts))
    return (torch.stack([loss for loss, _ in per_member]),
            {key: torch.cat([p[key] for _, p in per_member]) for key in per_member[0][1]})


def _decisions(ens: RecourseEnsemble, classifier: Any, x_cf: Tensor, n: int) -> Tensor:
    """The decision model on member-major rows (n per member), by the rule of
    ``_member_losses``."""
    if n % ALIGNED_ROWS == 0:
        return classifier.decision(x_cf)
    return torch.cat([classifier.decision(block) for block in x_cf.split(n)])


def train_ensemble(
    scenario: Scenario,
    classifier: Any,
    flow: Any,
    configs: Sequence[ICarmaConfig],
    progress: Callable[[int, int, dict[str, float]], None] | None = None,
) -> list[tuple[AmortizedRecourse, TrainingLog]]:
    """Train the configurations (equal but for their seeds) together (module docstring);
    per member its kept model and log, as ``train_amortized`` returns them. Every log's
    ``seconds`` is the ensemble's wall time.
    """
    start = time.perf_counter()
    config = _same_but_seed(configs)
    setups, generators = _start(scenario, classifier, flow, configs)
    k = len(configs)
    ens = RecourseEnsemble([s.model for s in setups], generators)
    bounds, n_train = scenario.bounds, len(setups[0].x_train)
    opt, schedule = make_optimizer(ens.parameters(), config, setups[0].steps_per_epoch)
    logs = [TrainingLog() for _ in configs]
    multipliers = [ValidityMultiplier(config) for _ in configs]
    best = [ens.member_state(i) for i in range(k)]
    windows = torch.zeros(k, 3)  # per member: draws, active hinges, empty masks
    n_val = len(setups[0].x_val)
    for epoch in range(1, config.epochs + 1):
        ens.train()
        perms = [torch.randperm(n_train, generator=g) for g in generators]
        for b in range(0, n_train, config.batch_size):
            xs = [s.x_train[p[b : b + config.batch_size]] for s, p in zip(setups, perms, strict=True)]
            n = len(xs[0])
            profs = [sample_profile_batch(scenario, n, config, s.rng) for s in setups]
            for m in multipliers:
                m.prepare()
            losses, parts = _member_losses(ens, flow, classifier, xs, profs, config, bounds,
                                           multipliers)
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
                vlosses, parts = _member_losses(ens, flow, classifier, [s.x_val for s in setups],
                                                [s.val_prof for s in setups], config, bounds, None)
                valid = _decisions(ens, classifier, parts["x_cf"], n_val).float()
            for i in range(k):
                rows = slice(i * n_val, (i + 1) * n_val)
                figures = (float(vlosses[i]), float(valid[rows].mean()),
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
