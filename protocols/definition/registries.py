"""What a protocol may name, checked against the engine's registries in one place.

A protocol names a scenario, recourse methods (with options and, for a method that wraps
another, a base method) and a preference distribution for its synthetic participants. These
functions answer for the schema's validators (protocols.definition.schema): every registry question a
protocol raises is asked here, the same for a YAML file and a protocol built in Python.
Problems are (location relative to the spec, message) pairs.
"""

from __future__ import annotations

from typing import Any

from engine.preferences import PREFERENCE_DISTRIBUTIONS
from engine.recourse import (
    METHODS,
    Capabilities,
    MethodUnavailableError,
    capabilities,
    method_class,
    option_names,
)
from engine.scenarios import (
    ScenarioFileError,
    UnknownScenarioError,
    get_scenario,
    is_scenario_path,
    scenario_names,
)
from protocols.definition.problems import Problems  # noqa: E402 - re-exported for the validators


def scenario_problem(name: str) -> str | None:
    """None for a shipped scenario or a sound scenario file (a path); else what is wrong."""
    if name in scenario_names():
        return None
    if not is_scenario_path(name):
        return f"unknown scenario {name!r}; available: {', '.join(scenario_names())}"
    try:
        get_scenario(name)
    except (UnknownScenarioError, ScenarioFileError) as e:
        return str(e)
    return None


def actionable_count(scenario: str) -> int | None:
    """How many globally actionable features the scenario has (None: unknown scenario)."""
    if scenario_problem(scenario) is not None:
        return None
    return len(get_scenario(scenario).actionable)


def entered_features(scenario: str) -> set[str] | None:
    """The features a participant can enter on the profile page (None: unknown scenario)."""
    if scenario_problem(scenario) is not None:
        return None
    return {f.name for f in get_scenario(scenario).features if f.derived_from is None}


def method_capabilities(name: str) -> Capabilities | None:
    """The capabilities of a known method (None: unknown, or not importable here)."""
    if name not in METHODS:
        return None
    try:
        return capabilities(name)
    except MethodUnavailableError:
        return None


def is_interactive(name: str) -> bool:
    caps = method_capabilities(name)
    return caps is not None and caps.interactive


def method_problems(name: str, options: dict[str, Any], field: str = "method") -> Problems:
    """An unknown method (at ``field``), or options it does not take (at ``<field's
    options>.<option>``). A known method that cannot be imported here is let through: the
    study reports it when it starts."""
    key = "options" if field == "method" else f"{field}_options"
    if name not in METHODS:
        return [((field,), f"unknown recourse method {name!r}; available: "
                 f"{', '.join(sorted(METHODS))}")]
    try:
        allowed = option_names(name)
    except MethodUnavailableError:
        return []
    unknown = [((key, opt), f"unknown option for {name}; expected one of {', '.join(allowed)}")
               for opt in options if opt not in allowed]
    return unknown or [((key,), f"{name}: {problem}")
                       for problem in method_class(name).option_problems(options)]


def base_problems(
    method: str, base: str | None, base_options: dict[str, Any]
) -> Problems:
    """A method that wraps a base method needs one that does not wrap a base itself; other
    methods take none."""
    caps = method_capabilities(method)
    if caps is None:
        return []
    if not caps.wraps_base:
        if base is not None or base_options:
            return [(("base",), f"only an arm whose method wraps a base method (not {method}) "
                     "has a base method")]
        return []
    if base is None:
        return [(("base",), f"a {method} arm needs a base method")]
    base_caps = method_capabilities(base)
    if base_caps is not None and base_caps.wraps_base:
        return [(("base",), f"{base} cannot be the base of {method}: it wraps a base itself")]
    return method_problems(base, base_options, "base")


def distribution_problem(name: str) -> str | None:
    if name in PREFERENCE_DISTRIBUTIONS:
        return None
    return (f"unknown preference distribution {name!r}; expected one of "
            f"{', '.join(PREFERENCE_DISTRIBUTIONS)}")
