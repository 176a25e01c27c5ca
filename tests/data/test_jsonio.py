"""data.jsonio: strict JSON (NaN -> null, numpy -> numbers) written atomically."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from data.jsonio import dumps, json_ready, write_json


def test_strict_json_from_numpy_and_nan() -> None:
    doc = {"a": float("nan"), "b": np.float32(1.5), "c": np.arange(3), "d": (1, np.inf),
           "e": [np.int64(7), {"f": -math.inf}], "g": Path("x/y"), 3: np.bool_(True)}
    text = dumps(doc)
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text) == {"a": None, "b": 1.5, "c": [0, 1, 2], "d": [1, None],
                                "e": [7, {"f": None}], "g": "x/y", "3": True}
    assert json_ready([1.0, 2]) == [1.0, 2]


def test_write_is_atomic_and_leaves_no_partial_file(tmp_path, monkeypatch) -> None:
    path = tmp_path / "sub" / "doc.json"
    write_json(path, {"v": 1})
    assert json.loads(path.read_text()) == {"v": 1}

    def boom(*_a, **_k):
        raise OSError("disk full")

    monkeypatch.setattr("data.jsonio.os.replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_json(path, {"v": 2})
    assert json.loads(path.read_text()) == {"v": 1}  # the old file, whole
    assert [p.name for p in path.parent.iterdir()] == ["doc.json"]
