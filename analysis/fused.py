"""How our fused operations (``analysis.ordinal``, ``analysis.predictor``) reach PyTensor's
numba backend, which nutpie compiles: each operation's ``perform`` runs a numba kernel, and
``register_kernel`` hands the same kernel to the numba backend, so nutpie calls it inside its
compiled function. Its on-disk cache key is the operation's name and the source of the
kernel's whole module (the kernel and every helper it calls from there): an edited kernel or
helper is compiled afresh rather than read stale from the cache."""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable
from typing import Any

from pytensor.graph.op import Op
from pytensor.link.numba.dispatch import basic as numba_basic


def cache_key(name: str, kernel: Callable[..., Any]) -> str:
    """``name`` + "_" + the SHA-256 of the source of ``kernel``'s module."""
    module = inspect.getmodule(kernel)
    source = inspect.getsource(module if module is not None else kernel)
    return name + "_" + hashlib.sha256(source.encode()).hexdigest()


def register_kernel(op: type[Op], kernel: Callable[..., Any]) -> None:
    """PyTensor's numba backend runs ``kernel`` (called with the node's inputs, returning its
    outputs) for every node of ``op``."""

    def funcify(_op: Op, node: Any, **kwargs: Any) -> tuple[Any, str]:
        return (numba_basic.numba_njit(kernel, error_model="numpy"),
                cache_key(op.__name__, kernel))

    numba_basic.register_funcify_and_cache_key(op)(funcify)
