"""nutpie's compilation of a PyMC model, with C wrappers that numba caches on disk.

``nutpie.compile_pymc_model`` builds PyTensor's log-density-with-gradient and expansion
functions (numba code that PyTensor caches on disk, keyed by the graph) and wraps each in a
numba ``cfunc`` that nutpie's sampler calls with the parameters and a pointer to its *user
data*: the address, size and shape of every data array. nutpie's wrappers hold the arrays
as typed constants, so numba cannot cache them, and every process compiled them again with
every numba overload they use: most of a compilation's time (docs/benchmarks.md).

``compile_model`` has nutpie build wrappers of ours instead: Python source generated per
model that views each array at its address with its shape (nothing of the data is in the
code, so the same wrapper serves new data) and calls the same PyTensor function. The
source is registered with PyTensor's numba cache under a key of the source, the wrapped
function's own PyTensor cache key and the numba and nutpie versions, so a model of the same
graph (the same family and shapes) compiles from disk in any later process. When PyTensor
cannot key the wrapped function, or its numba cache is off (``pytensor.config.numba__cache``),
nutpie compiles as it always did.

The record nutpie passes as user data (``nutpie.compile_pymc.make_user_data``) is read as
one flat uint64 array: the K arrays' addresses, then their sizes, then every array's shape
entries in the same order (every field is 8 bytes; checked, else nutpie's own wrappers).
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import numpy as np

VERSION = "1"  # of the wrappers' source: part of every cache key
_LOCK = threading.Lock()  # nutpie's module functions are swapped while one model compiles


class _Uncacheable(Exception):
    """A wrapper cannot be keyed: compile with nutpie's own wrappers."""


def compile_model(model: Any) -> Any:
    """``nutpie.compile_pymc_model(model)`` with cacheable wrappers (module docstring)."""
    import nutpie
    import nutpie.compile_pymc as nutpie_pymc
    from pytensor import config

    if not config.numba__cache:
        return nutpie.compile_pymc_model(model)
    with _LOCK:
        own = nutpie_pymc._make_c_logp_func, nutpie_pymc._make_c_expand_func
        nutpie_pymc._make_c_logp_func, nutpie_pymc._make_c_expand_func = _logp_wrapper, \
            _expand_wrapper
        try:
            return nutpie.compile_pymc_model(model, cache=True)
        except _Uncacheable:
            pass
        finally:
            nutpie_pymc._make_c_logp_func, nutpie_pymc._make_c_expand_func = own
    return nutpie.compile_pymc_model(model)


def _logp_wrapper(n_dim: int, logp_fn: Any, user_data: np.ndarray, names: list[str],
                  shared_data: dict[str, np.ndarray]) -> tuple[Any, Any]:
    """nutpie's ``_make_c_logp_func`` contract: the wrapper and its C signature."""
    from numba import types as t

    sig = t.int64(t.uint64, t.CPointer(t.double), t.CPointer(t.double), t.CPointer(t.double),
                  t.voidptr)
    return _wrapper("logp", logp_fn, user_data, names, shared_data), sig


def _expand_wrapper(n_dim: int, n_expanded: int, expand_fn: Any, user_data: np.ndarray,
                    names: list[str], shared_data: dict[str, np.ndarray]) -> tuple[Any, Any]:
    """nutpie's ``_make_c_expand_func`` contract: the wrapper and its C signature."""
    from numba import types as t

    sig = t.int64(t.uint64, t.uint64, t.CPointer(t.double), t.CPointer(t.double), t.voidptr)
    return _wrapper("expand", expand_fn, user_data, names, shared_data), sig


def _wrapper(kind: str, inner: Any, user_data: np.ndarray, names: list[str],
             shared_data: dict[str, np.ndarray]) -> Any:
    """The wrapper of ``inner`` (a PyTensor numba function of the parameters and the arrays
    ``names``) as a Python function registered with PyTensor's cache; _Uncacheable when
    ``inner`` has no PyTensor cache key or the user data is not all 8-byte fields."""
    import numba
    import nutpie
    from nutpie.compile_pymc import address_as_void_pointer
    from pytensor.link.numba.cache import CACHED_SRC_FUNCTIONS, compile_numba_function_src

    inner_key = CACHED_SRC_FUNCTIONS.get(getattr(inner, "py_func", None))
    if inner_key is None or user_data.dtype.itemsize != 8 * _words(shared_data):
        raise _Uncacheable(kind)
    source = wrapper_source(kind, names, shared_data)
    key = hashlib.sha256("\0".join([VERSION, source, inner_key, numba.__version__,
                                    nutpie.__version__]).encode()).hexdigest()
    env = {"__name__": __name__, "np": np, "carray": numba.carray,
           "void_ptr": address_as_void_pointer, "inner": inner}
    return compile_numba_function_src(source, "wrapper", env, cache_key=key)


def _words(arrays: dict[str, np.ndarray]) -> int:
    """The 8-byte words of nutpie's user-data record over ``arrays``: an address and a size
    per array, then every shape entry (module docstring)."""
    return 2 * len(arrays) + sum(a.ndim for a in arrays.values())


def wrapper_source(kind: str, names: list[str], arrays: dict[str, np.ndarray]) -> str:
    """The source of a ``kind`` ("logp" or "expand") wrapper that calls ``inner`` with the
    parameters and the arrays ``names``, found in the flat user data of ``arrays`` (all the
    model's arrays, in the record's order; module docstring). Return codes are nutpie's:
    0 ok, 1 / -2 an error, 3 a non-finite gradient, 4 a non-finite log-density."""
    order = list(arrays)
    first_shape = 2 * len(order)
    lines, args = [f"        u = carray(user_data_, ({_words(arrays)},), np.uint64)"], ["x"]
    for j, name in enumerate(names):
        i, a = order.index(name), arrays[name]
        start = first_shape + sum(arrays[n].ndim for n in order[:i])
        shape = "".join(f"u[{start + d}], " for d in range(a.ndim))
        lines.append(f"        a{j} = carray(void_ptr(u[{i}]), ({shape}), np.{a.dtype.name})")
        args.append(f"a{j}")
    unpack = "\n".join(lines)
    call = f"inner({', '.join(args)})"
    if kind == "logp":
        return (
            "def wrapper(dim, x_, out_, logp_, user_data_):\n"
            "    try:\n"
            f"{unpack}\n"
            "        x = carray(x_, (dim,))\n"
            "        out = carray(out_, (dim,))\n"
            "        logp = carray(logp_, ())\n"
            f"        logp_val, grad = {call}\n"
            "        logp[()] = logp_val\n"
            "        out[...] = grad\n"
            "        if not np.all(np.isfinite(out)):\n"
            "            return 3\n"
            "        if not np.isfinite(logp_val):\n"
            "            return 4\n"
            "    except Exception:\n"
            "        return 1\n"
            "    return 0\n")
    return (
        "def wrapper(dim, expanded, x_, out_, user_data_):\n"
        "    try:\n"
        f"{unpack}\n"
        "        x = carray(x_, (dim,))\n"
        "        out = carray(out_, (expanded,))\n"
        f"        (values,) = {call}\n"
        "        out[...] = values\n"
        "    except Exception:\n"
        "        return -2\n"
        "    return 0\n")
