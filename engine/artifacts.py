"""Trained artifacts per scenario: build, cache, load, fingerprint.

Artifacts live under ``$RECOURSE_STUDY_HOME/artifacts/<scenario>/`` (default home:
``./.recourse-study``):

- ``splits.npz``      the data splits they were trained on (``<role>_<split>_x`` / ``_y`` for
                      the roles decision, flow, recourse of engine.scenarios.samples);
- ``decision``        the decision model (engine.decision);
- ``flow``            the causal normalizing flow (engine.flows);
- ``icarma``          iCARMA for ranking / binary elicitation (engine.recourse.icarma.training);
- ``icarma-likert``   iCARMA for Likert-score elicitation (the paper's score-based setting);
- ``carma``           CARMA: population-level mask, constant cost profile;
- ``lr``, ``ann``     a tabular world's classifiers instead (engine.artifact_builders);
- ``vae``, ``csvae``  the latent-space base generators' VAE and CSVAE (engine.vaes).

Each model artifact is ``<name>.pt`` (state dict) plus ``<name>.json`` (metadata: config,
metrics, training time, the fingerprint and the SHA-256 of the .pt file). The fingerprint
hashes the scenario's data, the configuration and the fingerprints of the artifacts it was
trained with (iCARMA depends on the decision model and the flow), so changing any of them
rebuilds exactly what is stale, and an unchanged request is a cache hit; a stale or missing
artifact whose shipped copy has the fingerprint needed is copied from it instead of trained
(engine.artifact_shipped: a new home of the default scenario trains nothing). Files are written
to temporary names and renamed into place, under a lock file per artifact, so a killed build
or two processes building at once never leave a half-written artifact that loads (and two
processes may build different artifacts at the same time).

The paper's iCARMA models (one per elicitation scheme, cost profile and seed, and the
best-on-validation selection) are artifacts too: engine.papers.icarma.models.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from engine.artifact_builders import (
    CLASSIFIERS,
    GENERATIVE,
    Built,
    builder_for,
    decision_artifact,
    scenario_artifacts,
    scenario_configs,
)
from engine.artifact_cache import (  # part of this module's interface too
    ArtifactMissingError as ArtifactMissingError,
)
from engine.artifact_cache import (
    forget,
    load_module,
)
from engine.artifact_cache import (  # part of this module's interface too
    train_command as train_command,
)
from engine.artifact_shipped import install_shipped
from engine.artifact_store import (  # part of this module's interface too
    HOME_ENV as HOME_ENV,
)
from engine.artifact_store import (
    artifact_dir,
    artifact_lock,
    metadata_path,
    read_metadata,
    sha256_hex,
    torch_threads,
    weights_path,
    write_atomic,
)
from engine.artifact_store import (
    home as home,
)
from engine.decision import BayesDecision, Classifier, DecisionModel, RuleDecision
from engine.flows import CausalFlow
from engine.recourse.icarma.networks import AmortizedRecourse
from engine.scenarios import get_scenario
from engine.scenarios.base import Scenario
from engine.scenarios.samples import ROLES, SPLITS
from engine.trained import TrainedModels, register

# Torch threads while training: the models are small and batches of 128-256 rows, so a second
# thread only adds synchronization (docs/benchmarks.md, "Findings behind the code"); training
# processes can run side by side.
TRAINING_THREADS = 1
ARTIFACTS: tuple[str, ...] = (
    "decision", "flow", "icarma", "icarma-likert", "carma", "vae", "csvae")
AMORTIZED: tuple[str, ...] = ("icarma", "icarma-likert", "carma")  # AmortizedRecourse models
DEPENDS: dict[str, tuple[str, ...]] = {
    "decision": (),
    "flow": (),
    "icarma": ("decision", "flow"),
    "icarma-likert": ("decision", "flow"),
    "carma": ("decision", "flow"),
    "lr": (),
    "ann": (),
    "vae": (),
    "csvae": (),
}
# progress(artifact, done, total, note)
Progress = Callable[[str, int, int, str], None]


def data_fingerprint(scenario: Scenario) -> str:
    """Hash of the scenario's data splits (what every artifact is trained on)."""
    h = hashlib.sha256(scenario.name.encode())
    for role in ROLES:
        for split in SPLITS:
            x, y = scenario.data(role)[split]
            h.update(x.numpy().tobytes())
            h.update(y.numpy().tobytes())
    return h.hexdigest()


@dataclass(frozen=True)
class ArtifactRecord:
    """What ``build_artifacts`` did for one artifact (``shipped``: copied from the shipped
    artifacts, engine.artifact_shipped; a cache hit too)."""

    name: str
    cache_hit: bool
    seconds: float
    metadata: dict[str, Any]
    shipped: bool = False


def artifact_fingerprint(data_fp: str, config: dict[str, Any], deps: dict[str, str]) -> str:
    """The fingerprint of an artifact trained with ``config`` on the data of fingerprint
    ``data_fp`` and the artifacts of fingerprints ``deps`` (name -> fingerprint)."""
    payload = json.dumps({"data": data_fp, "config": config, "deps": deps}, sort_keys=True)
    return sha256_hex(payload.encode())


def _splits_fingerprint(path: Path) -> str | None:
    try:
        with np.load(path) as f:
            return str(f["data_fingerprint"])
    except (OSError, KeyError, ValueError):
        return None


def _save_splits(scenario: Scenario, data_fp: str) -> None:
    """Write ``splits.npz`` unless it already holds exactly these data."""
    path = artifact_dir(scenario.name) / "splits.npz"
    if _splits_fingerprint(path) == data_fp:
        return
    arrays: dict[str, Any] = {"data_fingerprint": np.array(data_fp)}
    for role in ROLES:
        for split in SPLITS:
            x, y = scenario.data(role)[split]
            arrays[f"{role}_{split}_x"], arrays[f"{role}_{split}_y"] = x.numpy(), y.numpy()
    tmp = path.with_name(f".splits.{os.getpid()}.tmp.npz")
    np.savez_compressed(tmp, feature_names=np.array(scenario.feature_names), **arrays)
    os.replace(tmp, path)


def build_artifacts(
    scenario_name: str,
    *,
    quick: bool = False,
    force: bool = False,
    only: tuple[str, ...] | None = None,
    progress: Progress | None = None,
) -> list[ArtifactRecord]:
    """Build every stale or missing artifact (``only``: these and what they depend on).

    ``force`` rebuilds the requested ones even when the cache is fresh. ``scenario_name`` may
    be a scenario file's path. A pool world has nothing to train (an empty list).

    ``quick=True`` selects reduced configurations (for tests): same code, less training. Files,
    locks and the home folder: engine.artifact_store.
    """
    scenario = get_scenario(scenario_name)
    names = scenario_artifacts(scenario, ARTIFACTS)  # a pool world: nothing to train
    if not names:
        return []
    wanted = set(names if only is None else only)
    unknown = sorted(wanted - set(names))
    if unknown:
        raise ValueError(f"unknown artifact(s) {', '.join(unknown)} for scenario "
                         f"{scenario.name!r}; expected some of {', '.join(names)}")
    for name in list(wanted):
        wanted |= set(DEPENDS[name])
    cfgs = scenario_configs(scenario, quick)
    records: list[ArtifactRecord] = []
    fingerprints: dict[str, str] = {}
    for name in names:
        if name not in wanted:
            continue
        forced = force and (only is None or name in only)
        deps = {d: fingerprints[d] for d in DEPENDS[name]}
        record = ensure_artifact(
            scenario, name, cfgs[name], deps, quick=quick, force=forced, progress=progress
        )
        fingerprints[name] = record.metadata["fingerprint"]
        records.append(record)
    return records


def ensure_artifact(
    scenario: Scenario,
    name: str,
    config: Any,
    deps: dict[str, str],
    *,
    quick: bool = False,
    force: bool = False,
    progress: Progress | None = None,
) -> ArtifactRecord:
    """One artifact trained with ``config`` on the fingerprinted ``deps`` (name -> fingerprint
    of the artifacts it is trained with): a cache hit when its fingerprint is unchanged, else
    built under the artifact's lock and written atomically. ``name`` picks the builder
    (artifact_builders.builder_for)."""
    builder = builder_for(name)
    return ensure_together(
        scenario, (name,), (config,), deps,
        lambda sc, cfgs, report, load: [builder(sc, cfgs[0], report, load)],
        quick=quick, force=force, progress=progress,
    )[0]


# build(scenario, configs, progress, load_dep) -> one Built per configuration
BuildMany = Callable[[Scenario, list[Any], Any, Callable[[str], nn.Module]], list[Built]]


def ensure_together(
    scenario: Scenario,
    names: tuple[str, ...],
    configs: tuple[Any, ...],
    deps: dict[str, str],
    build: BuildMany,
    *,
    quick: bool = False,
    force: bool = False,
    progress: Progress | None = None,
    label: str | None = None,
) -> list[ArtifactRecord]:
    """Artifacts ``names`` (trained with ``configs`` on the same ``deps``) as
    ``ensure_artifact`` makes each, the stale ones built by one call of ``build`` (e.g. the
    seeds of a configuration trained together) under the locks of all of them (taken in name
    order, so overlapping requests cannot deadlock). Each built artifact records the build's
    wall time divided among them, and ``trained_together`` {members, seconds} when several
    were built at once; the fingerprints are ``ensure_artifact``'s, so either way of building
    satisfies the other's cache. ``label``: the progress name (default: the first stale
    artifact's)."""
    scenario_name = scenario.name
    data_fp = data_fingerprint(scenario)
    fps = [artifact_fingerprint(data_fp, c.to_dict(), deps) for c in configs]
    records: dict[int, ArtifactRecord] = {}
    with ExitStack() as locks:
        for name in sorted(names):
            locks.enter_context(artifact_lock(scenario_name, name))
        _save_splits(scenario, data_fp)
        for i, (name, fp) in enumerate(zip(names, fps, strict=True)):
            if force:
                continue
            meta = read_metadata(scenario_name, name)
            if meta is not None and meta.get("fingerprint") == fp:
                records[i] = ArtifactRecord(name, True, 0.0, meta)
            elif (shipped := install_shipped(scenario_name, name, fp)) is not None:
                records[i] = ArtifactRecord(name, True, 0.0, shipped, shipped=True)
        stale = [i for i in range(len(names)) if i not in records]
        if not stale:
            return [records[i] for i in range(len(names))]
        start = time.perf_counter()
        shown = label or names[stale[0]]
        report = None if progress is None else (
            lambda _n, done, total, note: progress(shown, done, total, note)
        )
        with torch_threads(TRAINING_THREADS):
            built = build(scenario, [configs[i] for i in stale], report,
                          lambda dep: load_module(scenario_name, dep))
        seconds = time.perf_counter() - start
        share = seconds / len(stale)
        for i, b in zip(stale, built, strict=True):
            meta = {
                "name": names[i],
                "scenario": scenario_name,
                "fingerprint": fps[i],
                "depends": deps,
                "config": configs[i].to_dict(),
                "quick": quick,
                "metrics": b.metrics,
                "seconds": share,
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "torch": torch.__version__,
            }
            if len(stale) > 1:
                meta["trained_together"] = {"members": len(stale), "seconds": seconds}
            write_artifact(scenario_name, names[i], _state_bytes(b.module), meta)
            records[i] = ArtifactRecord(names[i], False, share, meta)
    return [records[i] for i in range(len(names))]


def write_artifact(scenario_name: str, name: str, weights: bytes, meta: dict[str, Any]) -> None:
    """Write ``<name>.pt`` and ``<name>.json`` (with the weights' SHA-256) atomically; the
    caller holds the artifact's lock."""
    meta = {**meta, "sha256": sha256_hex(weights)}
    write_atomic(weights_path(scenario_name, name), weights)
    write_atomic(metadata_path(scenario_name, name), json.dumps(meta, indent=2).encode())
    forget(scenario_name, name)


def ensure_artifacts(
    scenario_name: str, quick: bool = False, progress: Progress | None = None
) -> list[ArtifactRecord]:
    """Build whatever is missing or stale (a cache hit when everything is fresh)."""
    return build_artifacts(scenario_name, quick=quick, progress=progress)


def _state_bytes(module: nn.Module) -> bytes:
    import io

    buf = io.BytesIO()
    torch.save(module.state_dict(), buf)
    return buf.getvalue()


def load_classifier(scenario: Scenario, kind: str = "trained") -> Classifier:
    """A scenario's decision model: ``trained`` (its artifact; ArtifactMissingError says how
    to build it; a tabular world's: the classifier its file names), ``lr`` / ``ann`` (a
    tabular world's logistic regression / network) or ``bayes`` (the exact Bayes rule under
    its SCM; no artifact). A pool world's decision is its fixed rule (RuleDecision).

    >>> from engine import get_scenario, load_classifier
    >>> type(load_classifier(get_scenario("loan"), "bayes")).__name__
    'BayesDecision'
    """
    if scenario.pool is not None:
        return RuleDecision(scenario)
    if kind == "bayes":
        return BayesDecision(scenario)
    if kind not in ("trained", *CLASSIFIERS):
        raise ValueError(f"unknown decision model {kind!r}; expected trained, bayes, "
                         f"{' or '.join(CLASSIFIERS)}")
    return load_decision_model(scenario.name, kind)


def load_decision_model(scenario_name: str, kind: str = "trained") -> DecisionModel:
    """The scenario's trained decision model (``kind``: as ``load_classifier``;
    ArtifactMissingError when not built)."""
    model = load_module(scenario_name, decision_artifact(get_scenario(scenario_name), kind))
    assert isinstance(model, DecisionModel)
    return model


def load_flow(scenario_name: str) -> CausalFlow:
    """The scenario's trained causal flow (ArtifactMissingError when not built)."""
    flow = load_module(scenario_name, "flow")
    assert isinstance(flow, CausalFlow)
    return flow


def load_generative(scenario_name: str, name: str) -> nn.Module:
    """A latent-space base generator's model: ``vae`` (TabularVAE) or ``csvae`` (CSVAE)."""
    if name not in GENERATIVE:
        raise ValueError(f"unknown generative artifact {name!r}; expected {GENERATIVE}")
    return load_module(scenario_name, name)


def load_amortized(scenario_name: str, name: str) -> AmortizedRecourse:
    """A trained amortized recourse model: ``icarma``, ``icarma-likert``, ``carma`` (the fast
    configuration) or a paper model ``icarma-paper-...`` (engine.papers.icarma.models)."""
    if name not in AMORTIZED and not name.startswith("icarma-paper-"):
        raise ValueError(f"unknown amortized artifact {name!r}")
    model = load_module(scenario_name, name)
    assert isinstance(model, AmortizedRecourse)
    return model


# The methods and world models load trained models through engine.trained, never from here.
register(TrainedModels(flow=load_flow, amortized=load_amortized, generative=load_generative))
