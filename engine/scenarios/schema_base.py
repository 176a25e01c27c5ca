"""What every part of the scenario file format shares: the strict base model, located problems
(several reported at once, each at its path in the file) and the checks used by more than one
world (engine.scenarios.schema, engine.scenarios.tabular_schema)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

PROBLEMS = "scenario_problems"  # error type carrying several located problems

Problems = list[tuple[tuple[Any, ...], str]]


def report(problems: Problems) -> None:
    """Raise every (location, message) problem at once (the loader lists each at its path)."""
    if problems:
        summary = "; ".join(f"{dotted(loc)}: {msg}" for loc, msg in problems)
        raise PydanticCustomError(PROBLEMS, "{summary}", {"summary": summary,
                                                          "problems": problems})


def dotted(loc: tuple[Any, ...]) -> str:
    """``('features', 3, 'levels', 2)`` -> ``features[3].levels[2]``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_EDGE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*->\s*([A-Za-z_][A-Za-z0-9_]*)\s*$")


class CausalGraph(Strict):
    """A world's causal graph as edges ``parent -> child`` (``graph``); the checks across
    features are engine.scenarios.graph's."""

    graph: list[str] = Field(default_factory=list)

    def edges(self) -> list[tuple[int, str, str] | tuple[int, None, str]]:
        """(index, parent, child) per edge; (index, None, text) for a malformed one."""
        out: list[Any] = []
        for i, edge in enumerate(self.graph):
            m = _EDGE.match(edge)
            out.append((i, m.group(1), m.group(2)) if m else (i, None, edge))
        return out


def check_split(split: tuple[float, float, float]) -> tuple[float, float, float]:
    """Train / validation / test shares: positive, summing to 1."""
    if min(split) <= 0 or abs(sum(split) - 1.0) > 1e-9:
        raise ValueError(f"train / validation / test shares must be positive and sum to 1, "
                         f"got {list(split)}")
    return split


def labels_as_text(values: Any) -> Any:
    """Numbers are labels too (``[1, 2, 3]``); YAML's booleans are a trap worth naming."""
    if not isinstance(values, list):
        return values
    for i, value in enumerate(values):
        if isinstance(value, bool):
            report([((i,), f"{value!r} is not text: YAML reads unquoted yes/no/true/false/"
                     "on/off as booleans; quote the label (\"no\", \"yes\")")])
    return [str(v) if isinstance(v, (int, float)) else v for v in values]
