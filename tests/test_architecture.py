"""The shape of the code (docs/architecture.md), read from the source.

The import graph of our packages, from every ``import`` statement (top level, inside a
function, and under ``if TYPE_CHECKING:``: an annotation's import is a dependency too): no
circle between modules, no upward import between layers (``LAYERS``; inside the engine,
``ENGINE_LAYERS``), and an import inside a function never reaches a higher layer (a late
import is no way around the order); the rooms of the engine kept apart, the papers' harness
(``engine.papers``) imported only by the commands that front it, Streamlit only in
``study_app.web``, DuckDB only in ``data``, torch nowhere in ``data``, ``protocols`` or
``analysis``. No module over 400 lines. Every package's ``__all__`` names resolve. Nobody
outside the method catalogue (engine/recourse) compares a value with a method's name:
callers ask capabilities. The checkers themselves are tested on a small planted package.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "protocols", "data", "analysis", "study_app")
# What each layer may import of ours (docs/architecture.md): imports only go downward.
ALLOWED = {
    "engine": {"engine"},
    "data": {"data"},
    "protocols": {"protocols", "engine", "data"},
    "analysis": {"analysis", "data", "engine"},
    "study_app": set(PACKAGES),
}
# Rooms that must not reach into others (what a study is, protocols.definition, knows
# nothing of how it runs, protocols.running): methods know nothing of synthetic
# people or the papers' harness, synthetic people nothing of the harness.
ROOMS_APART = {
    "engine.recourse": ("engine.synthetic", "engine.papers", "engine.workbench"),
    "engine.synthetic": ("engine.papers", "engine.workbench"),
    "protocols.definition": ("protocols.running",),
}
# The papers' harness (benchmarks, reproductions, the paper models): it imports the
# engine's computations, and of everything else only the commands that front it import it.
PAPER_ROOM = "engine.papers"
PAPER_FRONTS = tuple(f"study_app.cli.{m}" for m in (
    "bench_fairness", "bench_hare", "bench_recourse", "paper_needs", "reproduce",
    "reproduction_pages", "train_paper"))
# Third-party packages only some of our packages may import.
CONFINED = {
    "streamlit": ("study_app.web",),
    "duckdb": ("data",),
    "psycopg": ("data",),
    "torch": ("engine", "study_app"),
    # ArviZ, and PyMC and nutpie, which import it: only in analysis, whose __init__ writes
    # ArviZ's daily stamp before ArviZ's first import (analysis.arviz_stamp)
    "arviz": ("analysis",),
    "pymc": ("analysis",),
    "nutpie": ("analysis",),
}
MAX_LINES = 400
MAX_FUNCTION_LINES = 80
# The layers, lowest first: a module imports only its own layer or lower ones (ALLOWED says
# which packages of a lower layer), and a function body never imports a higher layer.
LAYERS = {"engine": 0, "data": 0, "protocols": 1, "analysis": 1, "study_app": 2}
# Inside the engine (the first prefix that matches; the rest is layer 0: scenarios, worlds,
# decision models, preferences, metrics, files and locks (engine.artifact_store), the
# trained-model registry engine.trained): the methods, then the artifacts that train and
# load their networks, then synthetic people, then what runs everything (the papers'
# harness, the workbench).
ENGINE_LAYERS = (
    ("engine.recourse", 1),
    ("engine.artifacts", 2), ("engine.artifact_builders", 2), ("engine.artifact_cache", 2),
    ("engine.artifact_shipped", 2), ("engine.artifact_plan", 2),
    ("engine.synthetic", 3),
    ("engine.papers", 4), ("engine.workbench", 4),
)


def _modules(root: Path = REPO, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    out = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


MODULES = _modules()


def _imports(tree: ast.AST) -> list[tuple[str, list[str], bool]]:
    """(module, names, inside a function) of every import, ``if TYPE_CHECKING:`` too."""
    out: list[tuple[str, list[str], bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.Import):
            out.extend((alias.name, [], in_function) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.module, [alias.name for alias in node.names], in_function))
        inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef
                                          | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, False)
    return out


Graph = tuple[dict[str, set[str]], dict[str, set[str]], dict[str, set[str]]]


def _graph(modules: dict[str, Path] = MODULES, packages: tuple[str, ...] = PACKAGES) -> Graph:
    """(edges between our modules, of them the ones imported inside a function, third-party
    top-level packages) per module."""
    edges: dict[str, set[str]] = {m: set() for m in modules}
    late: dict[str, set[str]] = {m: set() for m in modules}
    external: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for module, names, in_function in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            top = module.split(".")[0]
            if top not in packages:
                external[name].add(top)
                continue
            targets = [f"{module}.{n}" for n in names if f"{module}.{n}" in modules]
            if len(targets) < len(names) or not names:
                targets.append(module)  # names defined in the module itself
            found = {t for t in targets if t in modules and t != name}
            edges[name].update(found)
            if in_function:
                late[name].update(found)
    return edges, late, external


EDGES, LATE, EXTERNAL = _graph()


def _layer(module: str) -> tuple[int, int]:
    """(package layer, engine layer) of a module (``LAYERS``, ``ENGINE_LAYERS``)."""
    inner = next((n for prefix, n in ENGINE_LAYERS if _within(module, prefix)), 0)
    return LAYERS[module.split(".")[0]], inner if module.split(".")[0] == "engine" else 0


def _upward(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Imports of a higher layer than the importer's."""
    return sorted((m, t) for m, targets in edges.items() for t in targets
                  if _layer(t) > _layer(m))


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def test_the_graph_is_read_from_every_module() -> None:
    assert len(MODULES) > 100
    assert "protocols.running.session" in EDGES["study_app.simulator"]
    assert "engine.recourse.base" in EDGES["engine.recourse.oracle.method"]


def test_no_import_cycle() -> None:
    assert _cycles(EDGES) == []


def test_the_cycle_finder_finds_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_of_a_higher_layer_inside_a_function() -> None:
    assert _upward(LATE) == []


def test_the_engine_imports_only_downward() -> None:
    assert [(m, t) for m, t in _upward(EDGES) if m.startswith("engine")] == []


def test_the_checkers_find_a_planted_circle_and_a_late_upward_import(tmp_path: Path) -> None:
    """A tiny package: a circle closed only under TYPE_CHECKING and inside a function, and
    an engine method importing the artifact store inside a function."""
    files = {
        "engine/__init__.py": "",
        "engine/recourse/__init__.py": "",
        "engine/recourse/m.py": ("def load():\n    from engine.artifacts import load_flow\n"
                                 "    return load_flow\n"),
        "engine/artifacts.py": "from engine.recourse import m\n",
        "protocols/__init__.py": "",
        "protocols/a.py": "from protocols import b\n",
        "protocols/b.py": ("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                           "    from protocols.c import C\n"),
        "protocols/c.py": "class C:\n    def f(self):\n        import protocols.a\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    edges, late, _ = _graph(_modules(tmp_path, ("engine", "protocols")), ("engine", "protocols"))
    assert _cycles(edges) == [["engine.artifacts", "engine.recourse.m"],
                              ["protocols.a", "protocols.b", "protocols.c"]]
    assert _upward(late) == [("engine.recourse.m", "engine.artifacts")]
    assert _upward(edges) == [("engine.recourse.m", "engine.artifacts")]


def test_imports_only_go_downward() -> None:
    upward = [(m, t) for m, targets in EDGES.items() for t in targets
              if t.split(".")[0] not in ALLOWED[m.split(".")[0]]]
    assert upward == []


def test_engine_rooms_keep_apart() -> None:
    crossing = [(m, t) for m, targets in EDGES.items() for t in targets
                for room, banned in ROOMS_APART.items()
                if _within(m, room) and any(_within(t, b) for b in banned)]
    assert crossing == []


def test_only_the_commands_that_front_it_import_the_paper_harness() -> None:
    importers = {m for m, targets in EDGES.items() if not _within(m, PAPER_ROOM)
                 if any(_within(t, PAPER_ROOM) for t in targets)}
    assert importers == set(PAPER_FRONTS)


def test_the_paper_harness_is_a_room_of_its_own() -> None:
    """Its modules sit in one package, above the methods, artifacts and synthetic people."""
    room = [m for m in MODULES if _within(m, PAPER_ROOM)]
    assert {"engine.papers.reproduce", "engine.papers.icarma.models",
            "engine.papers.hare.benchmark"} <= set(room)
    assert {_layer(m) for m in room} == {(0, 4)}
    assert not [m for m in MODULES if m.startswith(("engine.benchmarks", "engine.paper_"))]


@pytest.mark.parametrize("package", sorted(CONFINED))
def test_third_party_packages_stay_in_their_layer(package: str) -> None:
    where = CONFINED[package]
    outside = [m for m, ext in EXTERNAL.items()
               if package in ext and not any(_within(m, w) for w in where)]
    assert outside == []


def test_no_module_over_400_lines() -> None:
    long = {m: n for m, p in MODULES.items()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def _long_functions(tree: ast.AST, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    """Functions (methods too, by ``Class.name``) longer than ``limit`` lines, from the
    ``def`` (decorators left out) to the last line of the body."""
    out: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = f"{prefix}{getattr(child, 'name', '')}"
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                if (n := child.end_lineno - child.lineno + 1) > limit:  # type: ignore[operator]
                    out[name] = n
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def test_no_function_over_80_lines() -> None:
    long = {f"{m}.{f}": n for m, p in MODULES.items()
            for f, n in _long_functions(ast.parse(p.read_text(encoding="utf-8"))).items()}
    assert long == {}
    planted = "def f():\n" + "    x = 1\n" * 80 + "class C:\n    def g(self):\n        pass\n"
    assert _long_functions(ast.parse(planted)) == {"f": 81}


@pytest.mark.parametrize("package", [m for m in MODULES if MODULES[m].name == "__init__.py"])
def test_every_package_exports_its_public_names(package: str) -> None:
    module = importlib.import_module(package)
    names = getattr(module, "__all__", None)
    assert names, f"{package} has no __all__"
    missing = [n for n in names if getattr(module, n, None) is None]
    assert missing == []


def _name_comparisons(tree: ast.AST, names: set[str]) -> list[int]:
    """Lines comparing something with one of ``names`` (==, !=, in, not in)."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        consts = [c for o in operands
                  for c in (o.elts if isinstance(o, ast.Tuple | ast.List | ast.Set) else [o])]
        if any(isinstance(c, ast.Constant) and c.value in names for c in consts):
            lines.append(node.lineno)
    return lines


def test_no_method_name_comparisons_outside_the_catalogue() -> None:
    from engine.recourse import METHODS

    found = {m: lines for m, path in MODULES.items() if not _within(m, "engine.recourse")
             if (lines := _name_comparisons(ast.parse(path.read_text(encoding="utf-8")),
                                            set(METHODS)))}
    assert found == {}
    assert _name_comparisons(ast.parse('x = a.method == "hare"'), {"hare"}) == [1]


def test_no_model_family_name_comparisons_outside_the_catalogue() -> None:
    """Outside analysis.families, the analysis and the app ask a family's attributes
    (analysis.FAMILIES), never compare its name (the engine's "ordinal" is a feature kind)."""
    from analysis import FAMILIES

    found = {m: lines for m, path in MODULES.items()
             if m.split(".")[0] in ("analysis", "study_app") and not _within(m, "analysis.families")
             if (lines := _name_comparisons(ast.parse(path.read_text(encoding="utf-8")),
                                            set(FAMILIES)))}
    assert found == {}
