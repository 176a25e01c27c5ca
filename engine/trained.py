"""Where recourse methods and world models find trained models, without importing the store.

The artifact store (engine.artifacts) builds and loads the methods' networks, so it imports
them; a method that imported the store back would close a circle. Instead the store
registers its loaders here when it is imported (``register``), and methods and world
models ask ``trained()`` for them. Whatever loads a trained decision model has imported the
store, so a method that needs a trained model finds it; asking before any store was imported
raises ``LookupError`` saying what to import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TrainedModels:
    """The loaders of trained models, each by scenario name (and artifact name)."""

    flow: Callable[[str], Any]  # scenario -> its causal flow (engine.flows.CausalFlow)
    amortized: Callable[[str, str], Any]  # (scenario, icarma | carma | icarma-paper-...)
    generative: Callable[[str, str], Any]  # (scenario, vae | csvae) -> the latent model


_REGISTERED: list[TrainedModels] = []


def register(models: TrainedModels) -> None:
    """Make ``models`` the loaders every method uses (the last registration wins)."""
    _REGISTERED[:] = [models]


def trained() -> TrainedModels:
    """The registered loaders (LookupError when no artifact store was imported)."""
    if not _REGISTERED:
        raise LookupError("no trained-model store is loaded: import engine.artifacts (it "
                          "registers its loaders) before asking a method for trained models")
    return _REGISTERED[0]
