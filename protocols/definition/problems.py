"""Several located problems raised at once from one pydantic validator.

A validator with several problems raises them together (``report``) as one error of type
``PROBLEMS`` carrying (location, message) pairs; ``protocols.definition.validation`` lists each at its
own path (``dotted``) and line.
"""

from __future__ import annotations

from typing import Any

from pydantic_core import PydanticCustomError

Problems = list[tuple[tuple[Any, ...], str]]

PROBLEMS = "protocol_problems"  # error type carrying several located problems


def report(problems: Problems) -> None:
    """Raise every (location, message) problem of one spec at once (``parse_protocol``
    reports each at its own path; ``str(ValidationError)`` lists them too)."""
    if problems:
        summary = "; ".join(f"{dotted(loc)}: {msg}" for loc, msg in problems)
        raise PydanticCustomError(PROBLEMS, "{summary}",
                                  {"summary": summary, "problems": problems})


def dotted(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"
