"""What an iCARMA training run records (engine.recourse.icarma.training): per evaluation the
validation figures and the hinge's weight, the kept epoch and its validation score

    score = cost + (1 - validity)

on the validation split's rejections (CARMA's criterion for picking among trained models),
what selects the best of several seeds (engine.papers.icarma.models)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from torch import Tensor

from engine.recourse.icarma.config import ICarmaConfig


@dataclass
class TrainingLog:
    """What happened during training: per evaluation the validation loss, flow validity and
    cost, the hinge's weight (``multiplier``: lambda, or the fixed weight) and, over the
    training draws since the previous evaluation, the share with an active hinge
    (``train_active``: hinge > 0) and with an empty sampled mask (``train_empty``); the epoch
    whose state was kept and that state's validation score."""

    epochs: list[int] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    val_validity: list[float] = field(default_factory=list)
    val_cost: list[float] = field(default_factory=list)
    multiplier: list[float] = field(default_factory=list)
    train_active: list[float] = field(default_factory=list)
    train_empty: list[float] = field(default_factory=list)
    best_epoch: int = 0
    kept_epoch: int = 0
    val_score: float = math.nan
    seconds: float = 0.0

    def kept(self, name: str) -> float:
        """A logged validation figure (``val_loss``, ``val_validity``, ``val_cost``) of the
        kept state."""
        values = getattr(self, name)
        return values[self.epochs.index(self.kept_epoch)] if values else math.nan


def record_evaluation(
    log: TrainingLog, epoch: int, figures: tuple[float, float, float],
    multiplier: float, window: Tensor,
) -> bool:
    """Log one evaluation (``figures``: validation loss, flow validity, cost; ``multiplier``:
    the hinge's weight; ``window``:
    training draws, active hinges, empty masks since the previous one, then zeroed); whether
    the validation loss is the lowest so far (its state is the best)."""
    vloss, vvalid, vcost = figures
    best = vloss < min(log.val_loss, default=math.inf)
    log.epochs.append(epoch)
    log.val_loss.append(vloss)
    log.val_validity.append(vvalid)
    log.val_cost.append(vcost)
    log.multiplier.append(multiplier)
    log.train_active.append(float(window[1] / window[0]))
    log.train_empty.append(float(window[2] / window[0]))
    window.zero_()
    if best:
        log.best_epoch = epoch
    return best


def finish_log(log: TrainingLog, config: ICarmaConfig, start: float) -> None:
    """The kept epoch (``keep``), the kept state's validation score and the wall time since
    ``start`` (``time.perf_counter``)."""
    log.kept_epoch = log.best_epoch if config.keep == "best" else config.epochs
    log.val_score = log.kept("val_cost") + (1.0 - log.kept("val_validity"))
    log.seconds = time.perf_counter() - start


__all__ = ["TrainingLog", "finish_log", "record_evaluation"]
