"""Every problem of a protocol at once: structural and cross-field, with suggestions.

Pydantic stops at the first layer that fails: a model's ``after`` validators (an arm's
method exists, the checks across blocks of ``Protocol``) run only once every field of that
model is sound. A researcher fixing a file would then see the problems in rounds. So when
validation fails, ``collect`` builds a *lenient* copy of the data (every field that
validates on its own keeps its value; a broken block is rebuilt field by field; a broken
scalar falls back to its default) and runs every ``after`` validator of every block of it,
each on its own (one that cannot run on the lenient copy is skipped). The union of both
rounds, without repeats, is every problem of the file.

Messages name what is allowed and, for a near miss, what was probably meant:
``unknown field 'mehtod'; did you mean 'method'? (allowed: id, method, ...)``.
"""

from __future__ import annotations

import difflib
import re
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import PydanticCustomError

from protocols.definition.problems import PROBLEMS, dotted

Loc = tuple[Any, ...]


@dataclass(frozen=True)
class Finding:
    """One problem (or warning) at a location of the protocol file."""

    loc: Loc
    message: str
    suggestions: tuple[str, ...] = ()
    line: int | None = None

    @property
    def path(self) -> str:
        return dotted(self.loc)

    def where(self) -> str:
        return self.path + (f" (line {self.line})" if self.line is not None else "")

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "message": self.message,
                "suggestions": list(self.suggestions)}


def suggest(name: object, allowed: typing.Iterable[str]) -> tuple[str, ...]:
    """Near misses of ``name`` among ``allowed`` (best first)."""
    if not isinstance(name, str):
        return ()
    allowed = list(allowed)
    lowered = {a.lower(): a for a in allowed}
    if name.lower() in lowered and lowered[name.lower()] != name:
        return (lowered[name.lower()],)
    return tuple(difflib.get_close_matches(name, allowed, n=3, cutoff=0.6))


def with_suggestions(message: str, name: object, allowed: typing.Sequence[str]) -> str:
    """``message; did you mean 'x'? (allowed: ...)``."""
    close = suggest(name, allowed)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return f"{message}{hint} (allowed: {', '.join(allowed)})"


# ---- pydantic errors as findings ----------------------------------------------------------
def findings(error: ValidationError, root: type[BaseModel]) -> list[Finding]:
    """Every problem of a ValidationError of ``root``, one finding each."""
    out: list[Finding] = []
    for err in error.errors():
        loc = tuple(err["loc"])
        if err["type"] == PROBLEMS:
            out += [_registry_finding(loc + tuple(sub), msg) for sub, msg in err["ctx"]["problems"]]
        else:
            out.append(_finding(root, loc, err))
    return out


_KNOWN_LISTS = re.compile(r"(?:available:|expected one of|allowed:) (.+)$")


def _registry_finding(loc: Loc, message: str) -> Finding:
    """A validator's message; names listed after ``available:``/``expected one of`` give
    the suggestions for the value that was not found (quoted in the message)."""
    listed = _KNOWN_LISTS.search(message)
    quoted = re.search(r"'([^']+)'", message)
    if listed and quoted:
        allowed = [a.strip() for a in listed.group(1).split(",")]
        close = suggest(quoted.group(1), allowed)
        if close:
            message = f"{message}; did you mean {' or '.join(map(repr, close))}?"
        return Finding(loc, message, close)
    if listed and loc:
        allowed = [a.strip() for a in listed.group(1).split(",")]
        close = suggest(loc[-1], allowed)
        if close:
            return Finding(loc, f"{message}; did you mean {' or '.join(map(repr, close))}?",
                           close)
    return Finding(loc, message)


def _finding(root: type[BaseModel], loc: Loc, err: dict[str, Any]) -> Finding:
    kind = err["type"]
    if kind == "extra_forbidden":
        owner = model_at(root, loc[:-1])
        allowed = list(owner.model_fields) if owner is not None else []
        name = loc[-1]
        close = suggest(name, allowed)
        return Finding(loc, with_suggestions(f"unknown field {name!r}", name, allowed), close)
    if kind == "missing":
        return Finding(loc, "required field is missing")
    if kind in ("literal_error", "enum"):
        allowed = re.findall(r"'([^']*)'", err.get("ctx", {}).get("expected", ""))
        value = err.get("input")
        return Finding(loc, with_suggestions(f"{value!r} is not allowed", value, allowed),
                       suggest(value, allowed))
    if kind == "value_error":
        return _registry_finding(loc, str(err["ctx"]["error"]))
    return Finding(loc, err["msg"])


def model_at(root: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    """The model class found at ``loc`` below ``root`` (list indices skipped)."""
    current: Any = root
    for part in loc:
        if isinstance(part, int):
            continue
        model = model_of(current)
        if model is None or part not in model.model_fields:
            return None
        current = model.model_fields[part].annotation
    return model_of(current)


def model_of(annotation: Any) -> type[BaseModel] | None:
    """The BaseModel inside ``annotation`` (itself, a list of it, or an optional one)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = model_of(arg)
        if found is not None:
            return found
    return None


# ---- the lenient second round ------------------------------------------------------------
def collect(root: type[BaseModel], data: Any) -> tuple[BaseModel | None, list[Finding]]:
    """The validated model, or None and every finding (module docstring)."""
    try:
        return root.model_validate(data), []
    except ValidationError as e:
        first = findings(e, root)
    broken: dict[int, list[str]] = {}
    lenient = _lenient(root, data, broken)
    more = _after_checks(lenient, (), broken) if lenient is not None else []
    out: list[Finding] = []
    seen: set[tuple[Loc, str]] = set()
    for f in first + more:  # the first round's order (pydantic's: by field)
        if (f.loc, f.message) not in seen:
            seen.add((f.loc, f.message))
            out.append(f)
    return None, out


def _lenient(cls: type[BaseModel], raw: Any, broken: dict[int, list[str]]) -> BaseModel | None:
    """``raw`` as an unvalidated ``cls``: sound fields validated, broken blocks rebuilt
    leniently, a broken scalar at its default (its name recorded in ``broken``)."""
    if not isinstance(raw, dict):
        return None
    values: dict[str, Any] = {}
    bad: list[str] = []
    for name, info in cls.model_fields.items():
        if name not in raw:
            continue  # model_construct fills the default
        value = raw[name]
        try:
            values[name] = TypeAdapter(info.annotation).validate_python(value)
        except (ValidationError, TypeError, ValueError):
            repaired = _lenient_value(info, value, broken)
            if repaired is _BROKEN:
                bad.append(name)
            else:
                values[name] = repaired
    obj = cls.model_construct(**values)
    broken[id(obj)] = bad
    return obj


_BROKEN = object()


def _lenient_value(info: Any, value: Any, broken: dict[int, list[str]]) -> Any:
    model = model_of(info.annotation)
    if model is not None and isinstance(value, list) and typing.get_origin(info.annotation) is list:
        items = []
        for item in value:
            try:
                items.append(model.model_validate(item))
            except ValidationError:
                items.append(_lenient(model, item, broken))
        return items
    if model is not None and isinstance(value, dict):
        return _lenient(model, value, broken)
    return _BROKEN


def _after_checks(obj: Any, loc: Loc, broken: dict[int, list[str]]) -> list[Finding]:
    """Every ``after`` validator of obj and its blocks, each on its own. A block's own
    validators are skipped when one of its fields is broken (its default would give false
    alarms); the checks across blocks (``CROSS_CHECKS``) run with the defaults."""
    if obj is None:
        return []
    out: list[Finding] = []
    if isinstance(obj, BaseModel):
        checks = getattr(type(obj), "CROSS_CHECKS", None)
        if checks is not None:
            for check in checks:
                out += _run(lambda c=check: _as_problems(c(obj)), loc, value_errors=False)
        elif not broken.get(id(obj)):
            for dec in type(obj).__pydantic_decorators__.model_validators.values():
                if dec.info.mode == "after":
                    out += _run(lambda d=dec: d.func(obj), loc)
        for name in type(obj).model_fields:
            value = obj.__dict__.get(name)
            if isinstance(value, BaseModel):
                out += _after_checks(value, loc + (name,), broken)
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, BaseModel):
                        out += _after_checks(item, loc + (name, i), broken)
    return out


class _Located(Exception):
    def __init__(self, problems: list[tuple[Loc, str]]) -> None:
        self.problems = problems


def _as_problems(problems: list[tuple[Loc, str]]) -> None:
    if problems:
        raise _Located(problems)


def _run(call: typing.Callable[[], Any], loc: Loc, value_errors: bool = True) -> list[Finding]:
    """The problems a check raised (a crash of a check on the lenient copy counts as none;
    a block's validator states a problem as a ValueError, a cross check never does)."""
    try:
        call()
    except _Located as e:
        return [_registry_finding(loc + tuple(sub), msg) for sub, msg in e.problems]
    except PydanticCustomError as e:
        if e.type == PROBLEMS:
            ctx = e.context or {}
            return [_registry_finding(loc + tuple(sub), msg) for sub, msg in ctx["problems"]]
    except ValueError as e:
        return [Finding(loc, str(e))] if value_errors else []
    except Exception:  # noqa: BLE001 - a check that cannot run on the lenient copy is skipped
        return []
    return []
