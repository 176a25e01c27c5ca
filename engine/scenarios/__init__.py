"""Scenarios: scenario files (YAML) and their loader, the worlds they name, their data.

A scenario is a file (engine.scenarios.schema; reference: docs/scenarios.md): features,
scenario text and one of four worlds (exact equations, a pool + fixed rule, data + causal
graph, a real data set without a graph). Shipped files live here (``engine/scenarios/<name>.yaml``); ``get_scenario`` takes a
shipped name or the path of a file of one's own (which then is known by its name too, in
this process). Each name is one setting: its world and where its data come from
(engine.scenarios.samples).
"""

from __future__ import annotations

from pathlib import Path

from engine.scenarios.base import DisplayMap, FeatureSpec, Role, Scenario
from engine.scenarios.loader import (
    ScenarioFileError,
    extends_chain,
    load_scenario_file,
    parse_scenario_file,
    shipped_files,
)
from engine.scenarios.pool_world import PoolWorld

_CACHE: dict[str, tuple[tuple[float, ...], Scenario]] = {}
_USER_FILES: dict[str, Path] = {}  # name -> path of files loaded by path in this process


class UnknownScenarioError(KeyError):
    """Asked for a scenario that is neither shipped nor a scenario file.

    >>> from engine import UnknownScenarioError, get_scenario
    >>> try:
    ...     get_scenario("mortgage")
    ... except UnknownScenarioError as e:
    ...     print("mortgage" in str(e))
    True
    """

    def __str__(self) -> str:  # KeyError quotes its message; show it plainly
        return str(self.args[0])


def scenario_names() -> tuple[str, ...]:
    """Shipped scenarios, then files loaded by path in this process.

    >>> from engine import scenario_names
    >>> {"loan", "loan-carma", "adult", "compas", "german-credit"} <= set(scenario_names())
    True
    """
    shipped = tuple(shipped_files())
    return shipped + tuple(n for n in _USER_FILES if n not in shipped)


def is_scenario_path(ref: str) -> bool:
    """Whether ``ref`` names a file rather than a registered scenario."""
    return ref.endswith((".yaml", ".yml")) or "/" in ref or "\\" in ref


def scenario_file(ref: str) -> Path:
    """The file of a shipped name, a name loaded by path, or a path."""
    shipped = shipped_files()
    if ref in shipped:
        return shipped[ref]
    if ref in _USER_FILES:
        return _USER_FILES[ref]
    if is_scenario_path(ref):
        path = Path(ref).expanduser()
        if not path.is_file():
            raise UnknownScenarioError(f"no scenario file {ref!r}")
        return path.resolve()
    raise UnknownScenarioError(
        f"unknown scenario {ref!r}; available: {', '.join(scenario_names())} (or the path "
        "of a scenario file)")


def get_scenario(ref: str) -> Scenario:
    """The scenario of a shipped name or a file path (one shared instance per process and
    file version). Raises UnknownScenarioError or ScenarioFileError.

    >>> from engine import get_scenario
    >>> get_scenario("loan").title
    'Car loan'
    >>> get_scenario("loan") is get_scenario("loan")      # one shared instance
    True
    """
    path = scenario_file(ref)
    stamp = _stamp(path)
    key = str(path)
    cached = _CACHE.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    scenario = load_scenario_file(path)
    shipped = shipped_files()
    if scenario.name in shipped and shipped[scenario.name].resolve() != path:
        raise ScenarioFileError(str(path), [("name", f"{scenario.name!r} is a shipped "
                                             "scenario; give your file another name")])
    if path not in {p.resolve() for p in shipped.values()}:
        _USER_FILES[scenario.name] = path
    _CACHE[key] = (stamp, scenario)
    return scenario


def _stamp(path: Path) -> tuple[float, ...]:
    """Modification time and size of the file and of every file its ``extends`` chain
    reads: editing a base file reloads the scenarios built on it."""
    out: list[float] = []
    for f in extends_chain(path):
        st = f.stat()
        out += [st.st_mtime, float(st.st_size)]
    return tuple(out)


__all__ = [
    "DisplayMap",
    "FeatureSpec",
    "PoolWorld",
    "Role",
    "Scenario",
    "ScenarioFileError",
    "UnknownScenarioError",
    "get_scenario",
    "is_scenario_path",
    "load_scenario_file",
    "parse_scenario_file",
    "scenario_file",
    "scenario_names",
]
