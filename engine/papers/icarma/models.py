"""The iCARMA paper's trained models: one per elicitation scheme, cost profile and seed, and
the best-on-validation selection the paper reports.

The iCARMA paper (App. C.2.4): "For each setup, we run iCARMA over 10 random seeds, from 1000 to
10000 ... we report the performance of the iCARMA model that provided the best validation
result." A setup is an elicitation scheme (ranking or Likert scores) and a cost profile
(constant, concave, linear, convex); hard-constraint tables use the ranking model with the
constant profile.

Artifacts (engine.artifacts, cached by configuration under the scenario's artifact folder):

- ``icarma-paper-<elicitation>-<profile>-s<seed>``: one seed's model, trained with
  ``ICarmaConfig.paper(elicitation, profile, seed)`` (``quick``: reduced for tests);
- ``icarma-paper-<elicitation>-<profile>``: the selected model, a copy of the seed with the
  lowest validation score (cost + (1 - validity) on the validation rejections,
  engine.recourse.icarma.training), recording every seed's score.

``ensure_paper_models`` builds what is missing (the decision model and flow first) and
returns the records. The missing seeds of a setup train together as one batched ensemble
(engine.recourse.icarma.ensemble), each seed's model bit for bit its own run's
(docs/benchmarks.md), in about the time of three single runs for ten seeds; ``ensemble=False``
trains them one after another (each artifact has its own lock, so two processes may train
different seeds at once).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from typing import Any

from engine.artifact_builders import build_amortized_ensemble
from engine.artifacts import (
    ArtifactRecord,
    Progress,
    artifact_lock,
    build_artifacts,
    ensure_artifact,
    ensure_together,
    read_metadata,
    weights_path,
    write_artifact,
)
from engine.papers.icarma.datasets import paper_dataset
from engine.recourse.icarma.config import PAPER_SEED_STEP, ICarmaConfig
from engine.recourse.icarma.paper_names import PAPER_ELICITATIONS as PAPER_ELICITATIONS
from engine.recourse.icarma.paper_names import paper_model_name as paper_model_name
from engine.scenarios import get_scenario


def paper_seeds(n: int) -> tuple[int, ...]:
    """The paper's seeds, first n of 1000, 2000, ..., (n >= 1)."""
    if n < 1:
        raise ValueError(f"the number of seeds must be >= 1, got {n}")
    return tuple(PAPER_SEED_STEP * (i + 1) for i in range(n))


def paper_config(
    scenario_name: str, elicitation: str, cost_profile: str, seed: int, quick: bool = False,
    changes: dict[str, Any] | None = None,
) -> ICarmaConfig:
    """The paper's configuration for the scenario's data set (engine.papers.icarma.datasets;
    ``quick``: reduced for tests, the ``changes`` kept; ``changes``: fields that differ from
    the paper's, e.g. a shortened ``epochs`` or ``validity_multiplier``)."""
    paper = ICarmaConfig.paper(elicitation, cost_profile, seed, paper_dataset(scenario_name))
    config = replace(paper, **(changes or {}))
    return config.reduced(**(changes or {})) if quick else config


def training_tag(changes: dict[str, Any] | None) -> str:
    """The name tag of a configuration that differs from the paper's (``e20``: 20 epochs;
    ``fixed-w8``: the hinge at the fixed weight 8 instead of CARMA's multiplier;
    ``shift-3_5``: latent shifts clamped to (-3, 5), ``shift-flow``: to our flow's rule); quick
    artifacts live in a test home and share the paper's names, like every other quick
    artifact."""
    prefix = {"epochs": "e", "validity_weight": "w"}
    parts = [f"{prefix[k]}{v:g}" if k in prefix
             else _shift_tag(v) if k == "shift_bounds" else str(v)
             for k, v in sorted((changes or {}).items())]
    return "-".join(parts)


def _shift_tag(bounds: tuple[float, float] | None) -> str:
    return "shift-flow" if bounds is None else f"shift{bounds[0]:g}_{bounds[1]:g}"


@dataclass(frozen=True)
class PaperModels:
    """What ``ensure_paper_models`` did for one setup: the seeds' records and the selection."""

    elicitation: str
    cost_profile: str
    seeds: tuple[int, ...]
    members: tuple[ArtifactRecord, ...]
    selected: ArtifactRecord
    tag: str = ""

    @property
    def selected_seed(self) -> int:
        return int(self.selected.metadata["metrics"]["selected_seed"])

    def member_name(self, seed: int) -> str:
        return paper_model_name(self.elicitation, self.cost_profile, seed, self.tag)


@dataclass(frozen=True)
class _SelectionConfig:
    """The selected artifact's "configuration": which members it chose among."""

    members: tuple[tuple[str, str], ...]  # (name, fingerprint)
    member_config: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "selection": "lowest validation score (cost + 1 - validity)",
            "members": [list(m) for m in self.members],
            "member_config": self.member_config,
        }


def ensure_paper_models(
    scenario_name: str,
    elicitation: str,
    cost_profile: str,
    seeds: int,
    *,
    quick: bool = False,
    changes: dict[str, Any] | None = None,
    force: bool = False,
    progress: Progress | None = None,
    ensemble: bool = True,
) -> PaperModels:
    """Train (or find cached) the paper's models of one setup and select the best seed
    (``changes``: a variant of the paper's configuration, cached under its own names).
    ``ensemble``: the missing seeds train together as one batched ensemble
    (engine.recourse.icarma.ensemble; each model bit for bit its seed's own run's);
    False: one seed after another."""
    tag = training_tag(changes)
    scenario = get_scenario(scenario_name)
    deps_records = build_artifacts(
        scenario_name, quick=quick, only=("decision", "flow"), progress=progress
    )
    deps = {r.name: r.metadata["fingerprint"] for r in deps_records}
    names = tuple(paper_model_name(elicitation, cost_profile, seed, tag)
                  for seed in paper_seeds(seeds))
    configs = tuple(paper_config(scenario_name, elicitation, cost_profile, seed, quick, changes)
                    for seed in paper_seeds(seeds))
    if ensemble:
        label = f"{paper_model_name(elicitation, cost_profile, tag=tag)} ({seeds} seeds)"
        members = tuple(ensure_together(
            scenario, names, configs, deps, build_amortized_ensemble,
            quick=quick, force=force, progress=progress, label=label,
        ))
    else:  # one seed after another, each by train_amortized
        members = tuple(
            ensure_artifact(scenario, name, config, deps, quick=quick, force=force,
                            progress=progress)
            for name, config in zip(names, configs, strict=True)
        )
    name = paper_model_name(elicitation, cost_profile, tag=tag)
    selected = _select(scenario_name, name, members, quick)
    return PaperModels(elicitation, cost_profile, paper_seeds(seeds), members, selected, tag)


def benchmark_setups(
    methods: tuple[str, ...], training: str, elicitation: str, cost_profiles: tuple[str, ...]
) -> list[tuple[str, str]]:
    """The paper-model setups a benchmark of ``methods`` loads: none unless a method that
    loads iCARMA's models runs on the paper's training; binary elicitation: the ranking model
    with the constant profile (MethodUnavailableError: a method not installed here)."""
    from engine.recourse import METHODS, capabilities

    loads_icarma = any(a.startswith("icarma") for m in methods if m in METHODS
                       for a in capabilities(m).artifacts)
    if not loads_icarma or training != "paper":
        return []
    if elicitation == "binary":
        return [("ranking", "constant")]
    return [(elicitation, c) for c in cost_profiles]


def _select(
    scenario_name: str, name: str, members: tuple[ArtifactRecord, ...], quick: bool
) -> ArtifactRecord:
    """Write (or find) the selection artifact: a copy of the member with the lowest score."""
    scores = {int(r.metadata["config"]["seed"]): float(r.metadata["metrics"]["val_score"])
              for r in members}
    best = min(members, key=lambda r: float(r.metadata["metrics"]["val_score"]))
    config = _SelectionConfig(
        tuple((r.name, r.metadata["fingerprint"]) for r in members), best.metadata["config"]
    )
    fp = hashlib.sha256(json.dumps(config.to_dict(), sort_keys=True).encode()).hexdigest()
    with artifact_lock(scenario_name, name):
        meta = read_metadata(scenario_name, name)
        if meta is not None and meta.get("fingerprint") == fp:
            return ArtifactRecord(name, True, 0.0, meta)
        meta = {
            "name": name,
            "scenario": scenario_name,
            "fingerprint": fp,
            "depends": {r.name: r.metadata["fingerprint"] for r in members},
            "config": best.metadata["config"],
            "selection": config.to_dict(),
            "quick": quick,
            "metrics": {
                **best.metadata["metrics"],
                "selected_seed": int(best.metadata["config"]["seed"]),
                "val_scores": {str(k): v for k, v in sorted(scores.items())},
            },
            "seconds": sum(float(r.metadata["seconds"]) for r in members),
            "created": best.metadata["created"],
            "torch": best.metadata["torch"],
        }
        weights = weights_path(scenario_name, best.name).read_bytes()
        write_artifact(scenario_name, name, weights, meta)
    return ArtifactRecord(name, False, 0.0, meta)
