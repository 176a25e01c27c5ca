"""Scenario files -> ``Scenario`` objects: parse, validate, read tables, build the world.

``load_scenario_file(path)`` reads a YAML file (engine.scenarios.schema), follows its
``extends``, validates it, reads the CSV tables it names (relative paths are relative to the
file) and builds the ``Scenario``: an ``equations`` world imports its SCM class (a dotted
module, or a ``.py`` file next to the scenario file: a scenario file may run Python code of
its own, like a protocol names methods); a ``pool`` world reads its pool (or calls its
generator) and parses its rule; a ``data`` world reads its samples and labels and keeps the
graph; a ``tabular`` world reads a raw data set (engine.scenarios.tabular). Every problem is a (path, message) pair of ``ScenarioFileError``; nothing is trained
while loading.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
import yaml
from pydantic import ValidationError

from engine.scenarios.base import DisplayMap, FeatureSpec, Role, Scenario
from engine.scenarios.graph import parent_indices
from engine.scenarios.pool_world import PoolWorld, RuleFunction
from engine.scenarios.rules import parse_rule
from engine.scenarios.samples import PublishedSamples, SCMSamples, TableSamples
from engine.scenarios.schema import (
    DIRECTIONS,
    LEVEL_KINDS,
    DataWorld,
    DisplaySpec,
    EquationsWorld,
    FeatureFileSpec,
    GeneratorSpec,
    ScenarioFile,
)
from engine.scenarios.schema import (
    PoolWorld as PoolWorldSpec,
)
from engine.scenarios.schema_base import PROBLEMS, dotted
from engine.scenarios.tables import (
    TableError,
    check_columns,
    label_column,
    read_csv,
    to_model_units,
)
from engine.scenarios.tabular import TabularProblems, build_tabular
from engine.scenarios.tabular_schema import TabularWorld
from engine.scm import StructuralCausalModel

SCENARIO_DIR = Path(__file__).resolve().parent
_WORLD_KINDS = ("equations", "pool", "data", "tabular")


class ScenarioFileError(ValueError):
    """A scenario file with problems; ``problems`` holds (path, message) pairs."""

    def __init__(self, source: str, problems: list[tuple[str, str]]) -> None:
        self.source = source
        self.problems = problems
        listed = "; ".join(f"{p}: {m}" for p, m in problems)
        super().__init__(f"scenario file {source}: {listed}")

    def as_dicts(self) -> list[dict[str, str]]:
        return [{"path": p, "message": m} for p, m in self.problems]


# ---- reading and validating ------------------------------------------------------------
def read_raw(path: Path, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The file's mapping with its ``extends`` chain merged (this file's keys win)."""
    source = str(path)
    if not path.is_file():
        raise ScenarioFileError(source, [("(file)", "no such file")])
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise ScenarioFileError(source, [("(file)", f"not valid YAML: {e}")]) from None
    if not isinstance(raw, dict):
        raise ScenarioFileError(source, [("(top level)", "a scenario file is a mapping of "
                                          "fields (name, title, features, world, ...)")])
    base = raw.pop("extends", None)
    if base is None:
        return raw
    base_path = extends_path(path, base)
    if base_path.resolve() in _seen or base_path.resolve() == path.resolve():
        raise ScenarioFileError(source, [("extends", f"{base!r} extends itself")])
    if not base_path.is_file():
        raise ScenarioFileError(source, [("extends", f"no shipped scenario or file {base!r}")])
    return merge(read_raw(base_path, (*_seen, path.resolve())), raw)


def extends_path(path: Path, base: object) -> Path:
    """The file an ``extends: base`` in ``path`` names: a shipped scenario or a path relative
    to ``path``'s folder."""
    return shipped_file(str(base)) or (path.parent / str(base))


def extends_chain(path: Path) -> list[Path]:
    """``path`` and the files its ``extends`` chain reads (what a cached load depends on);
    stops at an unreadable or cyclic link, which ``read_raw`` reports."""
    chain = [path]
    while True:
        try:
            raw = yaml.safe_load(chain[-1].read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError, UnicodeDecodeError):
            return chain
        base = raw.get("extends") if isinstance(raw, dict) else None
        if base is None:
            return chain
        nxt = extends_path(chain[-1], base)
        if not nxt.is_file() or nxt.resolve() in {p.resolve() for p in chain}:
            return chain
        chain.append(nxt)


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Mappings merge key by key (recursively); anything else in ``over`` replaces, and so
    does a mapping of another kind (a different ``kind`` of world or ``source`` of samples)."""
    out = dict(base)
    for k, v in over.items():
        old = out.get(k)
        same_kind = isinstance(old, dict) and all(
            old.get(tag, v.get(tag)) == v.get(tag, old.get(tag)) for tag in ("kind", "source"))
        out[k] = merge(old, v) if isinstance(v, dict) and same_kind else v  # type: ignore[arg-type]
    return out


def parse_scenario_file(path: str | Path) -> ScenarioFile:
    """The validated file (ScenarioFileError lists every problem by its path)."""
    path = Path(path)
    raw = read_raw(path)
    try:
        return ScenarioFile.model_validate(raw)
    except ValidationError as e:
        raise ScenarioFileError(str(path), validation_problems(e, raw)) from None


def validation_problems(error: ValidationError, raw: Any) -> list[tuple[str, str]]:
    """(path, message) per pydantic error; the world's kind tag is dropped from paths
    (``world.pool.rule`` is ``world.rule`` in the file)."""
    out: list[tuple[str, str]] = []
    for err in error.errors():
        loc = _file_loc(tuple(err["loc"]))
        if err["type"] == PROBLEMS:
            out += [(dotted(loc + tuple(sub)), msg) for sub, msg in err["ctx"]["problems"]]
        elif err["type"] == "missing":
            out.append((dotted(loc), "required field is missing"))
        elif err["type"] == "extra_forbidden":
            out.append((dotted(loc), f"unknown field {loc[-1]!r}"))
        elif err["type"] == "union_tag_invalid":
            out.append((dotted(loc), f"unknown kind {err['input'].get('kind')!r}; expected one "
                        f"of {', '.join(_WORLD_KINDS)}" if loc == ("world",) else err["msg"]))
        elif err["type"] == "union_tag_not_found":
            out.append((dotted(loc), f"needs a kind: {', '.join(_WORLD_KINDS)}"
                        if loc == ("world",) else err["msg"]))
        else:
            msg = err["msg"].removeprefix("Value error, ")
            out.append((dotted(loc), msg))
    return out


def _file_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """Drop the tags pydantic adds for discriminated unions (world kind, samples source)."""
    out: list[Any] = []
    for i, part in enumerate(loc):
        prev = loc[i - 1] if i else None
        if (prev == "world" and part in _WORLD_KINDS) or \
                (prev == "samples" and part in ("scm", "published")):
            continue
        out.append(part)
    return tuple(out)


# ---- building the scenario ----------------------------------------------------------------
def load_scenario_file(path: str | Path) -> Scenario:
    """The Scenario of a file (module docstring)."""
    path = Path(path).resolve()
    spec = parse_scenario_file(path)
    features = tuple(feature_spec(f) for f in spec.features)
    common: dict[str, Any] = {
        "name": spec.name, "title": spec.title, "about": spec.about, "features": features,
        "story": spec.story.strip(),
        "favourable_label": spec.outcome.favourable,
        "unfavourable_label": spec.outcome.unfavourable, "source": path,
        "persona_limits": spec.personas.limits(),
    }
    world = spec.world
    try:
        if isinstance(world, EquationsWorld):
            return _equations(world, common, path)
        if isinstance(world, PoolWorldSpec):
            return _pool(world, spec, common, path)
        if isinstance(world, TabularWorld):
            return build_tabular(world, common, path)
        return _data(world, common, path)
    except (_Problems, TabularProblems) as p:
        raise ScenarioFileError(str(path), p.problems) from None


class _Problems(Exception):
    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems


def feature_spec(f: FeatureFileSpec) -> FeatureSpec:
    """The engine's FeatureSpec of a file's feature (level features: codes 0..k-1)."""
    if f.kind in LEVEL_KINDS:
        display = DisplayMap("categorical", "", categories=tuple(f.levels or ()))
        lo = hi = None
    else:
        d = f.display or _IDENTITY
        # a declared conversion multiplies the whole map (affine and exp alike)
        factor = d.converted_from.factor if d.converted_from is not None else 1.0
        display = DisplayMap("affine" if d.map == "affine" else "exp", d.unit, scale=d.scale,
                             offset=d.offset, rate=d.rate, decimals=d.decimals,
                             codes=tuple(sorted(d.codes.items())), per_data_unit=factor)
        lo, hi = d.min, d.max
    return FeatureSpec(f.name, f.title, Role(f.role), display, help=f.help.strip(),
                       direction=DIRECTIONS[f.direction],
                       discrete=f.kind in ("binary", "categorical"), display_min=lo,
                       display_max=hi, kind=f.kind, range=f.range, in_plan=f.in_plan,
                       derived_from=(None if f.derived_from is None else
                                     (f.derived_from.feature, f.derived_from.factor)),
                       max_change=f.max_change)


_IDENTITY = DisplaySpec()


def import_object(ref: str, base_dir: Path, where: str) -> Any:
    """``module:name`` or (for ``where`` world.scm) module + name: a dotted module or a .py
    file relative to ``base_dir``."""
    module_ref, _, name = ref.rpartition(":")
    try:
        module = import_module(module_ref, base_dir)
        return getattr(module, name)
    except (ImportError, AttributeError, FileNotFoundError, SyntaxError) as e:
        raise _Problems([(where, f"cannot import {ref!r}: {e}")]) from None


def import_module(ref: str, base_dir: Path) -> Any:
    if ref.endswith(".py"):
        file = (base_dir / ref).resolve()
        if not file.is_file():
            raise FileNotFoundError(f"no file {str(file)!r}")
        name = f"_scenario_module_{abs(hash(str(file)))}"
        if name in sys.modules:
            return sys.modules[name]
        loader_spec = importlib.util.spec_from_file_location(name, file)
        module = importlib.util.module_from_spec(loader_spec)  # type: ignore[arg-type]
        sys.modules[name] = module
        loader_spec.loader.exec_module(module)  # type: ignore[union-attr]
        return module
    return importlib.import_module(ref)


def _scm(world: EquationsWorld, path: Path, where: str) -> StructuralCausalModel:
    cls = import_object(f"{world.module}:{world.scm}", path.parent, where)
    if not (inspect.isclass(cls) and issubclass(cls, StructuralCausalModel)):
        raise _Problems([(where, f"{world.scm!r} of {world.module!r} is not a "
                          "StructuralCausalModel subclass")])
    return cls()


def _equations(world: EquationsWorld, common: dict[str, Any], path: Path) -> Scenario:
    scm = _scm(world, path, "world.scm")
    names = tuple(f.name for f in common["features"])
    if tuple(scm.feature_names) != names:
        raise _Problems([("features", f"the SCM's features are {', '.join(scm.feature_names)}"
                          f" (in that order); the file lists {', '.join(names)}")])
    s = world.samples
    if s.source == "scm":
        samples: Any = SCMSamples(n=s.n, split=s.split, seed=s.seed)
    else:
        folder = (path.parent / s.folder).resolve()
        if not folder.is_dir():
            raise _Problems([("world.samples.folder", f"no folder {str(folder)!r}")])
        samples = PublishedSamples(folder, source=s.note)
    extras = {"decision": "reference"} if world.decision_training == "reference" else {}
    return Scenario(**common, scm=scm, samples=samples, label_rule=world.label_rule,
                    world_kind="equations", extras=extras)


def _table(ref: str, path: Path, where: str) -> pd.DataFrame:
    try:
        return read_csv((path.parent / ref).resolve())
    except TableError as e:
        raise _Problems([(where, m) for m in e.problems]) from None


def _model_units(table: pd.DataFrame, features: tuple[FeatureSpec, ...], where: str,
                 label: str, extra: tuple[str, ...] = ()) -> np.ndarray:
    try:
        check_columns(table, features, extra)
        return to_model_units(table, features)
    except TableError as e:
        raise _Problems([(where, f"{label}: {m}") for m in e.problems]) from None


def _pool(world: PoolWorldSpec, spec: ScenarioFile, common: dict[str, Any],
          path: Path) -> Scenario:
    features: tuple[FeatureSpec, ...] = common["features"]
    table, label = _pool_table(world.pool, path, "world.pool")
    source = (f"generator {world.pool.generator} (seed {world.pool.seed})"
              if isinstance(world.pool, GeneratorSpec) else world.pool)
    x = _model_units(table, features, "world.pool", label)
    rule_spec = world.rule_spec
    rule: RuleFunction
    if rule_spec.expression is not None:
        rule = parse_rule(rule_spec.expression, {f.name: f.levels for f in features}).decide
        text = rule_spec.expression
    else:
        rule = import_object(rule_spec.function, path.parent, "world.rule.function")
        text = rule_spec.function  # type: ignore[assignment]
    pool = PoolWorld(torch.from_numpy(x), table, rule, rule_spec.description or text, source)
    columns = {f.name: np.asarray(f.display.to_display(x[:, j]), dtype=float)
               for j, f in enumerate(features)}
    try:
        y = pool.decide(columns)
    except Exception as e:  # a researcher's function
        raise _Problems([("world.rule", f"the rule fails on the pool: {type(e).__name__}: "
                          f"{e}")]) from None
    people = None
    if world.applicants is not None:
        a_table, a_label = _pool_table(world.applicants, path, "world.applicants")
        a_x = _model_units(a_table, features, "world.applicants", a_label)
        a_columns = {f.name: np.asarray(f.display.to_display(a_x[:, j]), dtype=float)
                     for j, f in enumerate(features)}
        people = (torch.from_numpy(a_x), torch.from_numpy(pool.decide(a_columns).astype(float)))
    samples = TableSamples(torch.from_numpy(x), torch.from_numpy(y.astype(float)), label,
                           split=None, people=people)
    return Scenario(**common, scm=None, samples=samples, world_kind="pool", pool=pool)


def _pool_table(ref: str | GeneratorSpec, path: Path, where: str) -> tuple[pd.DataFrame, str]:
    """(the table in display units, its label) of a CSV file or a generator."""
    if isinstance(ref, GeneratorSpec):
        make = import_object(ref.generator, path.parent, f"{where}.generator")
        try:
            return pd.DataFrame(make(seed=ref.seed)).astype(str), ref.generator
        except Exception as e:  # a researcher's generator: report, never crash the loader
            raise _Problems([(f"{where}.generator", f"{ref.generator} failed: "
                              f"{type(e).__name__}: {e}")]) from None
    return _table(ref, path, where), Path(ref).name


def _data(world: DataWorld, common: dict[str, Any], path: Path) -> Scenario:
    features: tuple[FeatureSpec, ...] = common["features"]
    table = _table(world.data, path, "world.data")
    label = Path(world.data).name
    x = _model_units(table, features, "world.data", label, (world.label,))
    try:
        y = label_column(table.rename(columns=lambda c: str(c).strip()), world.label,
                         common["favourable_label"], common["unfavourable_label"])
    except TableError as e:
        raise _Problems([("world.label", f"{label}: {m}") for m in e.problems]) from None
    truth = None if world.truth is None else _truth_scm(world.truth, features)
    samples = TableSamples(torch.from_numpy(x), torch.from_numpy(y), label, split=world.split)
    return Scenario(**common, scm=None, samples=samples, world_kind="data",
                    graph=parent_indices(world.edges(), features), truth=world.truth,
                    truth_scm=truth)


def _truth_scm(truth: str, features: tuple[FeatureSpec, ...]) -> StructuralCausalModel:
    """The exact SCM of the shipped equations scenario ``truth`` (same features)."""
    file = shipped_file(truth)
    if file is None:
        raise _Problems([("world.truth", f"unknown scenario {truth!r}; expected a shipped "
                          "scenario with an equations world")])
    spec = parse_scenario_file(file)
    if not isinstance(spec.world, EquationsWorld):
        raise _Problems([("world.truth", f"{truth!r} is a {spec.world.kind} world; the truth "
                          "is an exact SCM (an equations world)")])
    if spec.feature_names != tuple(f.name for f in features):
        raise _Problems([("world.truth", f"{truth!r} has features "
                          f"{', '.join(spec.feature_names)}; this file lists "
                          f"{', '.join(f.name for f in features)}")])
    return _scm(spec.world, file, "world.truth")


def shipped_files() -> dict[str, Path]:
    """Shipped scenario files by name (``engine/scenarios/<name>.yaml``)."""
    files = sorted(SCENARIO_DIR.glob("*.yaml"),
                   key=lambda p: (p.stem.split("-")[0], "-" in p.stem, p.stem))
    return {p.stem: p for p in files}


def shipped_file(name: str) -> Path | None:
    return shipped_files().get(name)
