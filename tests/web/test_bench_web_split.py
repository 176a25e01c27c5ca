"""scripts/bench_web.py splits each browser transition at the websocket frames: the first
rerun request after the click, the first finished script run after that request."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "bench_web", Path(__file__).resolve().parents[2] / "scripts" / "bench_web.py")
assert _SPEC is not None and _SPEC.loader is not None
bench_web = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench_web)


def test_split_uses_the_frames_after_the_click() -> None:
    # a widget change's rerun (1.0 -> 1.2) before the click at 2.0 must not count
    sent, finished = [1.0, 2.05], [1.2, 2.25, 3.0]
    inp, server, drawing = bench_web._split(2.0, 0.4, sent, finished)
    assert (inp, server, drawing) == pytest.approx((0.05, 0.2, 0.15))


def test_split_is_none_without_a_request_or_when_the_run_ends_after_the_page() -> None:
    assert bench_web._split(2.0, 0.4, [1.0], [1.2]) is None
    assert bench_web._split(2.0, 0.4, [2.05], [2.5]) is None  # finished after it was drawn


def test_calibration_ratios() -> None:
    c = bench_web._calibration({"p50_ms": 50.0, "p95_ms": 90.0},
                               {"p50_ms": 40.0, "p95_ms": 100.0},
                               {"p50_ms": 200.0, "p95_ms": 300.0})
    assert c["ratio_to_browser_server"] == {"p50_ms": 1.25, "p95_ms": 0.9}
    assert c["ratio_to_browser_transition"] == {"p50_ms": 0.25, "p95_ms": 0.3}
