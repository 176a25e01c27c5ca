"""Trained modules read from disk once per process: the in-process cache of the artifact store.

``load_module(scenario, name)`` constructs the artifact's module from its metadata
(engine.artifact_builders.construct), loads its weights, puts it in eval mode with frozen
parameters and keeps it while its two files are unchanged (their mtime and size, checked at
every call: a cheap test that another process has not rebuilt it). ``forget`` drops a module
whose files were just rewritten. A missing or incomplete artifact raises
``ArtifactMissingError`` whose message says how to build it.
"""

from __future__ import annotations

import torch
from torch import nn

from engine.artifact_builders import construct
from engine.artifact_store import artifact_dir, metadata_path, read_metadata, weights_path
from engine.scenarios import get_scenario


class ArtifactMissingError(FileNotFoundError):
    """An artifact is not built (or is stale / corrupt); the message says how to build it.

    >>> import os, tempfile
    >>> from unittest import mock
    >>> from engine import ArtifactMissingError, get_scenario, load_classifier
    >>> with mock.patch.dict(os.environ, {"RECOURSE_STUDY_HOME": tempfile.mkdtemp()}):
    ...     try:
    ...         load_classifier(get_scenario("loan"))
    ...     except ArtifactMissingError as e:
    ...         print(str(e).split("; ")[-1])
    run `recourse-study train --scenario loan` first
    """


def train_command(scenario_name: str, name: str) -> str:
    """The command that builds artifact ``name``."""
    extra = " --icarma-training paper" if name.startswith("icarma-paper") else ""
    return f"recourse-study train --scenario {scenario_name}{extra}"


_CACHE: dict[tuple[str, str], tuple[tuple[int, ...], nn.Module]] = {}


def _stat_key(scenario_name: str, name: str) -> tuple[int, ...] | None:
    """(mtime, size) of both files: a cheap check that a cached module is still current."""
    try:
        a = weights_path(scenario_name, name).stat()
        b = metadata_path(scenario_name, name).stat()
    except FileNotFoundError:
        return None
    return (a.st_mtime_ns, a.st_size, b.st_mtime_ns, b.st_size)



def forget(scenario_name: str, name: str) -> None:
    """Drop the cached module of artifact ``name`` (its files were just rewritten)."""
    _CACHE.pop((str(artifact_dir(scenario_name)), name), None)


def load_module(scenario_name: str, name: str) -> nn.Module:
    """Artifact ``name`` of a scenario as a ready module (module docstring)."""
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
