"""Recourse methods, one module each, all behind ``RecourseMethod`` (engine.recourse.base).

``get_method(name, context, **options)`` builds a method by its catalogue name; modules are
imported lazily so that asking for the Oracle never imports the neural methods.
"""

from __future__ import annotations

import importlib
from typing import Any

from engine.recourse.base import RecourseBatch, RecourseContext, RecourseMethod

# catalogue name -> "module:Class"; each class is constructed as Class(context, **options).
METHODS: dict[str, str] = {
    "oracle": "engine.recourse.oracle:CausalOracle",
    "icarma": "engine.recourse.icarma:ICarma",
    "carma": "engine.recourse.icarma:Carma",
    "wachter": "engine.recourse.gradient:Wachter",
    "gs": "engine.recourse.gradient:GrowingSpheres",
    "pool": "engine.recourse.pool:PoolSamples",
    "hare": "engine.recourse.hare:Hare",
}


class UnknownMethodError(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def method_class(name: str) -> type[RecourseMethod]:
    """The class registered under ``name``."""
    if name not in METHODS:
        raise UnknownMethodError(
            f"unknown recourse method {name!r}; available: {', '.join(sorted(METHODS))}"
        )
    module_name, cls_name = METHODS[name].split(":")
    return getattr(importlib.import_module(module_name), cls_name)


def get_method(name: str, context: RecourseContext, **options: Any) -> RecourseMethod:
    """Construct the method ``name`` for ``context`` with method-specific ``options``."""
    return method_class(name)(context, **options)


__all__ = [
    "METHODS",
    "RecourseBatch",
    "RecourseContext",
    "RecourseMethod",
    "UnknownMethodError",
    "get_method",
    "method_class",
]
