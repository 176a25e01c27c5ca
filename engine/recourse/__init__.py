"""The recourse-method catalogue: one module or package per method, all behind ``RecourseMethod``.

``get_method(name, context, **options)`` builds a method by its catalogue name (modules are
imported lazily, so asking for the Oracle never imports the neural methods);
``capabilities(name)`` says what a method is without building it, ``option_names(name)``
which options it takes. Callers outside this package ask capabilities, never names.
"""

from __future__ import annotations

import importlib
from typing import Any

from engine.recourse.base import Capabilities, RecourseContext, RecourseMethod
from engine.recourse.batch import RecourseBatch
from engine.recourse.plan_rules import PlanRules

# catalogue name -> "module:Class"; each class is constructed as Class(context, **options).
METHODS: dict[str, str] = {
    "oracle": "engine.recourse.oracle.method:CausalOracle",
    "icarma": "engine.recourse.icarma.method:ICarma",
    "carma": "engine.recourse.icarma.method:Carma",
    "wachter": "engine.recourse.gradient:Wachter",
    "gs": "engine.recourse.gradient:GrowingSpheres",
    "pool": "engine.recourse.pool:PoolSamples",
    "pool-profiles": "engine.recourse.pool_profiles:PoolProfiles",
    "hare": "engine.recourse.hare.method:Hare",
    "face": "engine.recourse.face:Face",
    "cchvae": "engine.recourse.latent:CCHVAE",
    "clue": "engine.recourse.latent:Clue",
    "cruds": "engine.recourse.cruds:Cruds",
}


class UnknownMethodError(KeyError):
    """A method name that is not in the catalogue (``METHODS``).

    >>> from engine.recourse import UnknownMethodError, method_class
    >>> try:
    ...     method_class("dice")
    ... except UnknownMethodError as e:
    ...     print("dice" in str(e))
    True
    """

    def __str__(self) -> str:
        return str(self.args[0])


class MethodUnavailableError(RuntimeError):
    """A known method cannot be built here: its module does not import, a trained artifact
    it needs is missing, or the options do not fit it.

    >>> from engine import BayesDecision, MethodUnavailableError, RecourseContext, get_scenario
    >>> from engine.recourse import build_method
    >>> loan = get_scenario("loan")
    >>> try:
    ...     build_method("oracle", RecourseContext(loan, BayesDecision(loan)), bins="many")
    ... except MethodUnavailableError as e:
    ...     print(type(e).__name__)
    MethodUnavailableError
    """


def method_class(name: str) -> type[RecourseMethod]:
    """The class registered under ``name`` (UnknownMethodError for an unknown name,
    MethodUnavailableError when its module cannot be imported here).

    >>> from engine.recourse import method_class
    >>> method_class("oracle").__name__, method_class("gs").__name__
    ('CausalOracle', 'GrowingSpheres')
    """
    if name not in METHODS:
        raise UnknownMethodError(
            f"unknown recourse method {name!r}; available: {', '.join(sorted(METHODS))}"
        )
    module_name, cls_name = METHODS[name].split(":")
    try:
        return getattr(importlib.import_module(module_name), cls_name)
    except (ImportError, AttributeError) as e:
        raise MethodUnavailableError(
            f"method {name!r} is not available in this installation ({e})"
        ) from e


def capabilities(name: str) -> Capabilities:
    """What the method ``name`` is (``Capabilities``), without building it.

    >>> from engine import capabilities
    >>> capabilities("hare").interactive, capabilities("hare").wraps_base
    (True, True)
    """
    return method_class(name).capabilities


def option_names(name: str) -> tuple[str, ...]:
    """The options the method ``name`` takes.

    >>> from engine.recourse import option_names
    >>> "bins" in option_names("oracle"), "repair" in option_names("icarma")
    (True, True)
    """
    return method_class(name).option_names()


def get_method(name: str, context: RecourseContext, **options: Any) -> RecourseMethod:
    """Construct the method ``name`` for ``context`` with method-specific ``options``.

    >>> from engine import BayesDecision, RecourseContext, get_method, get_scenario
    >>> loan = get_scenario("loan")
    >>> oracle = get_method("oracle", RecourseContext(loan, BayesDecision(loan)), bins=11)
    >>> type(oracle).__name__
    'CausalOracle'
    """
    return method_class(name)(context, **options)


def build_method(
    name: str, context: RecourseContext, *, what: str = "", **options: Any
) -> RecourseMethod:
    """``get_method``, with every reason it cannot be built here as MethodUnavailableError
    (``what`` names the caller's use, e.g. ``arm 'a'``, at the start of the message).

    >>> from engine import BayesDecision, MethodUnavailableError, RecourseContext, get_scenario
    >>> from engine.recourse import build_method
    >>> loan = get_scenario("loan")
    >>> ctx = RecourseContext(loan, BayesDecision(loan))
    >>> type(build_method("oracle", ctx)).__name__
    'CausalOracle'
    >>> try:
    ...     build_method("oracle", ctx, what="arm 'a'", colour="red")
    ... except MethodUnavailableError as e:
    ...     print(str(e).startswith("arm 'a'"))
    True
    """
    prefix = f"{what}: " if what else ""
    try:
        return get_method(name, context, **options)
    except MethodUnavailableError as e:
        raise MethodUnavailableError(f"{prefix}{e}") from e
    except FileNotFoundError as e:  # a trained artifact is missing (the message says how)
        raise MethodUnavailableError(f"{prefix}method {name!r} cannot be built: {e}") from e
    except TypeError as e:
        raise MethodUnavailableError(f"{prefix}bad options for {name!r}: {e}") from e


__all__ = [
    "METHODS",
    "Capabilities",
    "MethodUnavailableError",
    "PlanRules",
    "RecourseBatch",
    "RecourseContext",
    "RecourseMethod",
    "UnknownMethodError",
    "build_method",
    "capabilities",
    "get_method",
    "method_class",
    "option_names",
]
