"""JSON documents the platform writes (summaries, manifests, command results).

Strict JSON: NaN and infinities become null (Python's ``json`` would write the invalid
tokens ``NaN`` / ``Infinity``), numpy scalars and arrays become numbers and lists, tuples
lists, paths strings. Files are written atomically: a reader sees the old file or the new
one, never half of one (a process killed mid-write leaves the old file).
"""

from __future__ import annotations

import json
import math
import os
import uuid
from pathlib import Path
from typing import Any

import numpy as np


def json_ready(value: Any) -> Any:
    """``value`` with every part made strict-JSON serializable (module docstring)."""
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_ready(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value


def dumps(doc: Any, *, indent: int | None = None) -> str:
    """``doc`` as strict JSON text."""
    return json.dumps(json_ready(doc), indent=indent, allow_nan=False)


def write_json(path: str | Path, doc: Any) -> Path:
    """Write ``doc`` to ``path`` (parents created) atomically; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = dumps(doc, indent=2)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.partial")
    try:
        tmp.write_text(text + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
