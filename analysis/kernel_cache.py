"""The on-disk cache key of a numba kernel that PyTensor's numba backend compiles for one of
our fused operations (``analysis.ordinal``, ``analysis.predictor``): the operation's name and
the source of every function compiled into it, so an edited kernel or wrapper is compiled
afresh rather than read stale from the cache."""

from __future__ import annotations

import hashlib
import inspect
from typing import Any


def cache_key(name: str, *code: Any) -> str:
    """``name`` + "_" + the SHA-256 of the source of every function in ``code``."""
    source = "".join(inspect.getsource(c) for c in code).encode()
    return name + "_" + hashlib.sha256(source).hexdigest()
