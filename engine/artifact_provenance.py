"""Which code trained an artifact: the hash of the training code and the library versions.

``training_code_files`` follows the imports of the modules that build artifacts
(engine.artifacts, engine.artifact_builders, engine.papers.icarma.models) through the engine,
transitively, and adds the scenario modules and files (scenario files name their modules by
string); ``training_code_hash`` is the SHA-256 of their paths and contents. The test home is
kept per hash (tests/conftest.py), and the shipped artifacts record the hash of the code that
trained them (engine.artifact_shipped).
"""

from __future__ import annotations

import ast
import hashlib
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]  # the folder holding the engine package
TRAINING_ROOTS = ("engine/artifacts.py", "engine/artifact_builders.py",
                  "engine/papers/icarma/models.py")
LIBRARIES = ("torch", "zuko", "numpy", "scipy")  # what the training computes with


def _engine_imports(path: Path, root: Path) -> set[Path]:
    """The engine modules (files) one module imports."""
    out: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            if not name.startswith("engine"):
                continue
            base = root / Path(*name.split("."))
            for cand in (base.with_suffix(".py"), base / "__init__.py"):
                if cand.is_file():
                    out.add(cand)
    return out


def training_code_files(root: Path = ROOT) -> list[Path]:
    """Every engine module the artifact builders depend on, and the scenario modules and
    files (the scenario files name them by string)."""
    scenarios = root / "engine" / "scenarios"
    todo = [root / p for p in TRAINING_ROOTS] + sorted(scenarios.glob("*.py"))
    todo += sorted(scenarios.glob("*.yaml"))  # the scenario files
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        if path.suffix == ".py":
            todo.extend(_engine_imports(path, root) - seen)
    return sorted(seen)


def training_code_hash(root: Path = ROOT) -> str:
    """SHA-256 of the training code's files (their paths below ``root`` and contents)."""
    h = hashlib.sha256()
    for path in training_code_files(root):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def library_versions() -> dict[str, Any]:
    """Python's, the training libraries' and the machine's versions."""
    out: dict[str, Any] = {"python": platform.python_version(), "platform": platform.platform(),
                           "machine": platform.machine()}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out
