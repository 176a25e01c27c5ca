"""Lazy public names for a package's ``__init__`` (PEP 562 module ``__getattr__``).

``import engine`` must stay cheap (the CLI starts in a fraction of a second; a study's data
layer never needs torch), yet ``engine.load`` should just work. A package lists the modules
defining its public names; a name is imported on first access and then cached in the
package:

    __getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
        "engine.workbench": ("load", "Workbench"),
        "engine.scenarios": ("Scenario",),
    })
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, namespace: dict[str, Any], modules: dict[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """(``__getattr__``, ``__dir__``, ``__all__``) of ``package`` exporting the names of
    ``modules`` (module -> names it defines)."""
    names = {name: module for module, defined in modules.items() for name in defined}

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *names})

    return __getattr__, __dir__, sorted(names)
