"""Scenarios: one module per world (features, world model, display maps, data source).

Each registered name is one scenario setting: its world and where its data come from
(engine.scenarios.samples): the label rule and the samples are scenario-level choices.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.scenarios.base import DisplayMap, FeatureSpec, Role, Scenario
from engine.scenarios.loan import make_loan
from engine.scenarios.samples import CARMA_LOAN

_REGISTRY: dict[str, Callable[[], Scenario]] = {
    "loan": make_loan,
    "loan-carma": lambda: make_loan(
        "loan-carma", "Car loan (CARMA's published samples)", samples=CARMA_LOAN
    ),
    "loan-carma-reference": lambda: make_loan(
        "loan-carma-reference",
        "Car loan (CARMA's published samples, CARMA's classifier training)",
        samples=CARMA_LOAN,
        extras={"decision": "reference"},
    ),
    "loan-bernoulli": lambda: make_loan(
        "loan-bernoulli", "Car loan (Bernoulli labels)", label_rule="bernoulli"
    ),
}
_CACHE: dict[str, Scenario] = {}


class UnknownScenarioError(KeyError):
    """Asked for a scenario that is not registered."""

    def __str__(self) -> str:  # KeyError quotes its message; show it plainly
        return str(self.args[0])


def scenario_names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def get_scenario(name: str) -> Scenario:
    """The scenario registered under ``name`` (one shared instance per process)."""
    if name not in _REGISTRY:
        raise UnknownScenarioError(
            f"unknown scenario {name!r}; available: {', '.join(sorted(_REGISTRY))}"
        )
    if name not in _CACHE:
        _CACHE[name] = _REGISTRY[name]()
    return _CACHE[name]


__all__ = [
    "DisplayMap",
    "FeatureSpec",
    "Role",
    "Scenario",
    "UnknownScenarioError",
    "get_scenario",
    "scenario_names",
]
