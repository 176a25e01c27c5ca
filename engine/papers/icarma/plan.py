"""What the iCARMA paper's models still need to train, and about how long it takes.

A setup (elicitation, cost profile) with K seeds missing trains for ``epochs`` epochs of
S = ceil(n / 128) steps (n: the training split's rejected people; the whole training split
while the decision model is not trained). On one torch thread a step of one seed takes
``STEP_SECONDS``; the seeds of a setup trained together
(engine.recourse.icarma.ensemble) cost a step of one seed plus ``MEMBER_SHARE`` of one for
every further seed (both from ``train --icarma-training paper --compare``,
docs/benchmarks.md), so

    seconds ~ epochs * S * STEP_SECONDS * (1 + MEMBER_SHARE * (K - 1))   (together)
    seconds ~ epochs * S * STEP_SECONDS * K                              (one after another).

An estimate for a machine with nothing else to do; other work makes it longer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from engine.artifact_plan import format_duration
from engine.artifact_store import read_metadata
from engine.papers.icarma.models import paper_config, paper_model_name, paper_seeds, training_tag
from engine.scenarios import get_scenario

# One training step of one seed (batch 128, the paper's networks and flow), one thread
# (docs/benchmarks.md, "Training the paper's models").
STEP_SECONDS = 0.0083
# What every further seed adds to a step of seeds trained together, as a share of one seed's
# step: ten seeds together cost 2.86 seeds' processor time, (2.86 - 1) / 9 (docs/benchmarks.md,
# "Training the paper's models").
MEMBER_SHARE = 0.21


@dataclass(frozen=True)
class SetupPlan:
    """One setup's missing seeds and the size of their training."""

    elicitation: str
    cost_profile: str
    missing: tuple[int, ...]
    epochs: int
    steps_per_epoch: int

    @property
    def label(self) -> str:
        return f"{self.elicitation}/{self.cost_profile}"

    def seconds(self, ensemble: bool = True) -> float:
        """The estimate of the module docstring (0 when nothing is missing)."""
        k = len(self.missing)
        if k == 0:
            return 0.0
        members = 1 + MEMBER_SHARE * (k - 1) if ensemble else k
        return self.epochs * self.steps_per_epoch * STEP_SECONDS * members


def _rejected_training_people(scenario_name: str) -> int:
    """The training split's rejected people (its size while no decision model is built)."""
    from engine.artifacts import ArtifactMissingError, load_decision_model
    from engine.decision import rejected_rows

    scenario = get_scenario(scenario_name)
    try:
        classifier = load_decision_model(scenario_name)
    except ArtifactMissingError:
        return len(scenario.dataset["train"][0])
    return len(rejected_rows(scenario, classifier, "train"))


def _current(scenario_name: str, name: str, config: Any, deps: dict[str, str]) -> bool:
    meta = read_metadata(scenario_name, name)
    return (meta is not None and meta.get("config") == config.to_dict()
            and meta.get("depends") == deps)


def plan_paper_models(
    scenario_name: str,
    setups: list[tuple[str, str]],
    seeds: int,
    *,
    quick: bool = False,
    changes: dict[str, Any] | None = None,
) -> list[SetupPlan]:
    """Per (elicitation, cost profile) setup the seeds whose trained model is missing or
    stale (a changed configuration, decision model or flow) and the training's size."""
    deps = {}
    for dep in ("decision", "flow"):
        meta = read_metadata(scenario_name, dep)
        deps[dep] = "" if meta is None else meta["fingerprint"]
    n = _rejected_training_people(scenario_name)
    tag = training_tag(changes)
    plans = []
    for elicitation, cost_profile in setups:
        configs = {s: paper_config(scenario_name, elicitation, cost_profile, s, quick, changes)
                   for s in paper_seeds(seeds)}
        missing = tuple(s for s, c in configs.items() if not _current(
            scenario_name, paper_model_name(elicitation, cost_profile, s, tag), c, deps))
        config = next(iter(configs.values()))
        people = n if config.max_people is None else min(n, config.max_people)
        plans.append(SetupPlan(elicitation, cost_profile, missing, config.epochs,
                               math.ceil(people / config.batch_size)))
    return plans


def missing_plans(
    scenario_name: str,
    setups: list[tuple[str, str]],
    seeds: int,
    *,
    quick: bool = False,
    changes: dict[str, Any] | None = None,
    selection_only: bool = True,
) -> list[SetupPlan]:
    """The plans of the setups (elicitation, cost profile) with models to train.
    ``selection_only`` (what the benchmarks load): a setup counts when its best-seed
    selection is missing, and then trains ``seeds`` seeds; else every one of its ``seeds``
    seeds counts (what the reproduce targets evaluate)."""
    setups = list(dict.fromkeys(setups))
    if selection_only:
        tag = training_tag(changes)
        setups = [(e, c) for e, c in setups
                  if read_metadata(scenario_name, paper_model_name(e, c, tag=tag)) is None]
    if not setups:
        return []
    return [p for p in plan_paper_models(scenario_name, setups, seeds, quick=quick,
                                         changes=changes) if p.missing]


def describe_plan(plans: list[SetupPlan], ensemble: bool = True) -> str:
    """One sentence: which models are missing and about how long they take to train."""
    todo = [p for p in plans if p.missing]
    if not todo:
        return "every paper model is trained"
    total = sum(p.seconds(ensemble) for p in todo)
    parts = ", ".join(f"{p.label} ({len(p.missing)} seed{'s' if len(p.missing) > 1 else ''})"
                      for p in todo)
    how = "the seeds of a setup together" if ensemble else "one seed after another"
    return (f"the iCARMA paper's models {parts} are not trained; training them takes about "
            f"{format_duration(total)} ({how}, one core of a quiet machine; longer under load)")


__all__ = ["MEMBER_SHARE", "STEP_SECONDS", "SetupPlan", "describe_plan", "missing_plans",
           "plan_paper_models"]
