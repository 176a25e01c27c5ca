"""Trained artifacts per scenario: build, cache, load, fingerprint.

Artifacts live under ``$RECOURSE_STUDY_HOME/artifacts/<scenario>/`` (default home:
``./.recourse-study``):

- ``splits.npz``      the data splits they were trained on (``<role>_<split>_x`` / ``_y`` for
                      the roles decision, flow, recourse of engine.scenarios.samples);
- ``decision``        the decision model (engine.decision);
- ``flow``            the causal normalizing flow (engine.flows);
- ``icarma``          iCARMA for ranking / binary elicitation (engine.recourse.icarma_training);
- ``icarma-likert``   iCARMA for Likert-score elicitation (the paper's score-based setting);
- ``carma``           CARMA: population-level mask, constant cost profile;
- ``vae``, ``csvae``  the latent-space base generators' VAE and CSVAE (engine.vaes).

Each model artifact is ``<name>.pt`` (state dict) plus ``<name>.json`` (metadata: config,
metrics, training time, the fingerprint and the SHA-256 of the .pt file). The fingerprint
hashes the scenario's data, the configuration and the fingerprints of the artifacts it was
trained with (iCARMA depends on the decision model and the flow), so changing any of them
rebuilds exactly what is stale, and an unchanged request is a cache hit. Files are written
to temporary names and renamed into place, under a lock file per artifact, so a killed build
or two processes building at once never leave a half-written artifact that loads (and two
processes may build different artifacts at the same time).

The paper's iCARMA models (one per elicitation scheme, cost profile and seed, and the
best-on-validation selection) are artifacts too: engine.paper_models.

``quick=True`` selects reduced configurations (for tests): same code, less training.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from engine.artifact_builders import GENERATIVE, Built, builder_for, configs, construct
from engine.decision import BayesDecision, Classifier, DecisionModel, RuleDecision
from engine.flows import CausalFlow
from engine.recourse.icarma_networks import AmortizedRecourse
from engine.scenarios import get_scenario
from engine.scenarios.base import Scenario
from engine.scenarios.samples import ROLES, SPLITS

HOME_ENV = "RECOURSE_STUDY_HOME"
# Torch threads while training: the models are small and batches of 128-256 rows, so a second
# thread only adds synchronization (one iCARMA epoch: 0.5 s on one thread, 3.3 s on two, on
# the 2-core development machine under load); training processes can run side by side.
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
    "vae": (),
    "csvae": (),
}
# progress(artifact, done, total, note)
Progress = Callable[[str, int, int, str], None]


class ArtifactMissingError(FileNotFoundError):
    """An artifact is not built (or is stale / corrupt); the message says how to build it."""


def home() -> Path:
    """``$RECOURSE_STUDY_HOME`` or ``./.recourse-study``, as an absolute path."""
    return Path(os.environ.get(HOME_ENV) or ".recourse-study").expanduser().resolve()


def artifact_dir(scenario_name: str) -> Path:
    return home() / "artifacts" / scenario_name


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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
    """What ``build_artifacts`` did for one artifact."""

    name: str
    cache_hit: bool
    seconds: float
    metadata: dict[str, Any]


def _metadata_path(scenario_name: str, name: str) -> Path:
    return artifact_dir(scenario_name) / f"{name}.json"


def weights_path(scenario_name: str, name: str) -> Path:
    return artifact_dir(scenario_name) / f"{name}.pt"


def read_metadata(scenario_name: str, name: str) -> dict[str, Any] | None:
    """The artifact's metadata if its files exist and agree (SHA-256), else None."""
    meta_path = _metadata_path(scenario_name, name)
    weights = weights_path(scenario_name, name)
    if not meta_path.exists() or not weights.exists():
        return None
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if meta.get("sha256") != _sha256(weights.read_bytes()):
        return None
    return meta


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the block with ``n`` torch threads, then restore the previous number."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextmanager
def artifact_lock(scenario_name: str, name: str) -> Iterator[None]:
    """An exclusive lock on one artifact (builds of different artifacts run in parallel)."""
    d = artifact_dir(scenario_name)
    d.mkdir(parents=True, exist_ok=True)
    with open(d / f".lock-{name}", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _fingerprint(data_fp: str, config: dict[str, Any], deps: dict[str, str]) -> str:
    payload = json.dumps({"data": data_fp, "config": config, "deps": deps}, sort_keys=True)
    return _sha256(payload.encode())


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
    """
    scenario = get_scenario(scenario_name)
    if scenario.pool is not None:  # a fixed rule, no world model: nothing to train
        return []
    wanted = set(ARTIFACTS if only is None else only)
    unknown = sorted(wanted - set(ARTIFACTS))
    if unknown:
        raise ValueError(f"unknown artifact(s) {', '.join(unknown)}; expected {ARTIFACTS}")
    for name in list(wanted):
        wanted |= set(DEPENDS[name])
    cfgs = configs(quick, scenario.extras.get("decision", "trained"))
    records: list[ArtifactRecord] = []
    fingerprints: dict[str, str] = {}
    for name in ARTIFACTS:
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
    scenario_name = scenario.name
    data_fp = data_fingerprint(scenario)
    fp = _fingerprint(data_fp, config.to_dict(), deps)
    with artifact_lock(scenario_name, name):
        _save_splits(scenario, data_fp)
        meta = read_metadata(scenario_name, name)
        if meta is not None and meta.get("fingerprint") == fp and not force:
            return ArtifactRecord(name, True, 0.0, meta)
        start = time.perf_counter()
        report = None if progress is None else (
            lambda _n, done, total, note: progress(name, done, total, note)
        )
        with torch_threads(TRAINING_THREADS):
            built: Built = builder_for(name)(
                scenario, config, report, lambda dep: _load(scenario_name, dep)
            )
        seconds = time.perf_counter() - start
        meta = {
            "name": name,
            "scenario": scenario_name,
            "fingerprint": fp,
            "depends": deps,
            "config": config.to_dict(),
            "quick": quick,
            "metrics": built.metrics,
            "seconds": seconds,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "torch": torch.__version__,
        }
        write_artifact(scenario_name, name, _state_bytes(built.module), meta)
    return ArtifactRecord(name, False, seconds, meta)


def write_artifact(scenario_name: str, name: str, weights: bytes, meta: dict[str, Any]) -> None:
    """Write ``<name>.pt`` and ``<name>.json`` (with the weights' SHA-256) atomically; the
    caller holds the artifact's lock."""
    meta = {**meta, "sha256": _sha256(weights)}
    _write_atomic(weights_path(scenario_name, name), weights)
    _write_atomic(_metadata_path(scenario_name, name), json.dumps(meta, indent=2).encode())
    _CACHE.pop((str(artifact_dir(scenario_name)), name), None)


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


_CACHE: dict[tuple[str, str], tuple[tuple[int, ...], nn.Module]] = {}


def _stat_key(scenario_name: str, name: str) -> tuple[int, ...] | None:
    """(mtime, size) of both files: a cheap check that a cached module is still current."""
    try:
        a = weights_path(scenario_name, name).stat()
        b = _metadata_path(scenario_name, name).stat()
    except FileNotFoundError:
        return None
    return (a.st_mtime_ns, a.st_size, b.st_mtime_ns, b.st_size)


def train_command(scenario_name: str, name: str) -> str:
    """The command that builds artifact ``name``."""
    extra = " --icarma-training paper" if name.startswith("icarma-paper") else ""
    return f"recourse-study train --scenario {scenario_name}{extra}"


def _load(scenario_name: str, name: str) -> nn.Module:
    key = _stat_key(scenario_name, name)
    cached = _CACHE.get((str(artifact_dir(scenario_name)), name))
    if cached is not None and key is not None and cached[0] == key:
        return cached[1]
    scenario = get_scenario(scenario_name)
    meta = read_metadata(scenario_name, name)
    if meta is None or key is None:
        raise ArtifactMissingError(
            f"the {name!r} artifact of scenario {scenario_name!r} is not built (or is "
            f"incomplete) in {artifact_dir(scenario_name)}; run "
            f"`{train_command(scenario_name, name)}` first"
        )
    module = construct(scenario, name, meta["config"])
    state = torch.load(weights_path(scenario_name, name), map_location="cpu", weights_only=True)
    module.load_state_dict(state)
    module.eval()
    for p in module.parameters():
        p.requires_grad_(False)
    _CACHE[(str(artifact_dir(scenario_name)), name)] = (key, module)
    return module


def load_classifier(scenario: Scenario, kind: str = "trained") -> Classifier:
    """A scenario's decision model: ``trained`` (its artifact; ArtifactMissingError says how
    to build it) or ``bayes`` (the exact Bayes rule under its SCM; no artifact). A pool
    world's decision is its fixed rule (RuleDecision) either way."""
    if scenario.pool is not None:
        return RuleDecision(scenario)
    if kind == "bayes":
        return BayesDecision(scenario)
    if kind != "trained":
        raise ValueError(f"unknown decision model {kind!r}; expected trained or bayes")
    return load_decision_model(scenario.name)


def load_decision_model(scenario_name: str) -> DecisionModel:
    """The scenario's trained decision model (ArtifactMissingError when not built)."""
    model = _load(scenario_name, "decision")
    assert isinstance(model, DecisionModel)
    return model


def load_flow(scenario_name: str) -> CausalFlow:
    """The scenario's trained causal flow (ArtifactMissingError when not built)."""
    flow = _load(scenario_name, "flow")
    assert isinstance(flow, CausalFlow)
    return flow


def load_generative(scenario_name: str, name: str) -> nn.Module:
    """A latent-space base generator's model: ``vae`` (TabularVAE) or ``csvae`` (CSVAE)."""
    if name not in GENERATIVE:
        raise ValueError(f"unknown generative artifact {name!r}; expected {GENERATIVE}")
    return _load(scenario_name, name)


def load_amortized(scenario_name: str, name: str) -> AmortizedRecourse:
    """A trained amortized recourse model: ``icarma``, ``icarma-likert``, ``carma`` (the fast
    configuration) or a paper model ``icarma-paper-...`` (engine.paper_models)."""
    if name not in AMORTIZED and not name.startswith("icarma-paper-"):
        raise ValueError(f"unknown amortized artifact {name!r}")
    model = _load(scenario_name, name)
    assert isinstance(model, AmortizedRecourse)
    return model
