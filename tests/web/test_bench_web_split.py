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
                               {"p50_ms": 200.0, "p95_ms": 300.0},
                               {"p50_ms": 62.5, "p95_ms": 75.0})
    assert c["ratio_to_browser_server_on_the_socket"] == {"p50_ms": 0.8, "p95_ms": 1.2}
    assert c["ratio_to_browser_server"] == {"p50_ms": 1.25, "p95_ms": 0.9}
    assert c["ratio_to_browser_transition"] == {"p50_ms": 0.25, "p95_ms": 0.3}


def _netlog(tmp_path: Path, events: list[tuple[int, str, int, dict]], cut: bool = False) -> Path:
    """A Chromium NetLog with the given (time ms, event type, source id, params) events."""
    import json

    types = {"WEBSOCKET_SENT_FRAME_HEADER": 1, "WEBSOCKET_RECV_FRAME_HEADER": 2,
             "SOCKET_BYTES_SENT": 3}
    body = json.dumps({"constants": {"logEventTypes": types}, "events": [
        {"time": str(t), "type": types[k], "source": {"id": src}, "params": p}
        for t, k, src, p in events]})
    if cut:  # as Chromium leaves it when killed: the events array not closed
        body = body[:-2] + ","
    path = tmp_path / "netlog.json"
    path.write_text(body)
    return path


def test_netlog_connections_keep_data_messages_in_order(tmp_path) -> None:
    """Per connection: the first frame of each sent data message, the final frame of each
    received one; control frames and other events are left out; a cut log still reads."""
    def frame(opcode: int, final: bool = True) -> dict:
        return {"opcode": opcode, "final": final, "payload_length": 10}

    sent, recv = "WEBSOCKET_SENT_FRAME_HEADER", "WEBSOCKET_RECV_FRAME_HEADER"
    events = [(1000, sent, 7, frame(2)), (1001, "SOCKET_BYTES_SENT", 7, {}),
              (1010, recv, 7, frame(2, final=False)), (1012, recv, 7, frame(0)),
              (1013, recv, 7, frame(9)),  # ping
              (1020, sent, 9, frame(2)),  # a second connection
              (1030, sent, 7, frame(2, final=False)), (1031, sent, 7, frame(0)),
              (1040, recv, 7, frame(2))]
    for cut in (False, True):
        conns = bench_web._netlog_connections(_netlog(tmp_path, events, cut=cut))
        assert conns == [{"sent": [1.0, 1.03], "received": [1.012, 1.04]},
                         {"sent": [1.02], "received": []}]


def test_network_split_matches_messages_by_order_and_skips_a_mismatch() -> None:
    frames = bench_web.Frames()
    frames.sent = [("other", 0.0), ("rerun", 2.01)]
    frames.received = [("other", 0.0), ("finished", 2.3)]
    step = type("Step", (), {"clicked": 2.0, "seconds": 0.4, "kind": "plan"})()
    conn = {"sent": [0.5, 2.02], "received": [0.6, 2.1]}  # the socket saw them earlier
    out = bench_web._network_split([(frames, [step])], [conn])
    assert [out[k] for k in ("input", "server", "drawing")] == [
        pytest.approx([0.02]), pytest.approx([0.08]), pytest.approx([0.3])]
    assert out["server_by_kind"] == {"plan": pytest.approx([0.08])}
    nothing = {"input": [], "server": [], "drawing": [], "server_by_kind": {}}
    short = {"sent": [2.02], "received": [0.6, 2.1]}  # a message missing: not matched
    assert bench_web._network_split([(frames, [step])], [short]) == nothing
    assert bench_web._network_split([(frames, [step])], []) == nothing
