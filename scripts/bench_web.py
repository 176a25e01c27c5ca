"""Benchmark of the participant app in a real browser (Debian Chromium via Playwright).

Starts `recourse-study serve` on a free port, lets N participants complete the protocol one
after another at phone width (the test suite's browser participant: tests/web), and reports:

- page transitions: from the click on Continue to the next page's controls being rendered,
  over every page of every participant (target: p95 <= 500 ms);
- plans ready: from the click on Continue of the page whose answer makes the session
  generate the plans (the elicitation; the profile page when a protocol has none) to the
  next page being rendered (target: <= 1 s);
- the split of each transition, from the websocket frames the page sends and receives:
  ``input`` (click to the rerun request leaving the browser: Playwright's actionability
  checks and Streamlit's click handling), ``server`` (request sent to the frame in which the
  server says its script run finished — ``script_finished``, not the early finish of an
  ``st.rerun``: the span ``recourse-study loadtest`` measures without a browser) and
  ``drawing`` (the rest: the browser's rendering and the harness's polling). This split
  calibrates the load generator: its concurrency-1 figures should match ``server``; a
  participant's browser adds ``input`` and ``drawing``.

Two clocks for the frames. DevTools' ``Network.webSocketFrameSent`` / ``Received`` events are
stamped in the renderer, when the page's main thread hands a message to or takes it from its
WebSocket: a frame that arrives while the page is still drawing the deltas before it is
stamped when the drawing is done (``split``). Chromium's NetLog (``--log-net-log``) stamps
every frame header where the network service writes or reads it on the socket
(``split_network``, millisecond resolution): the span a client on the wire sees, which is what the
load generator measures. Frames are matched by their order on the connection (the n-th data
message in the NetLog is the n-th the page saw), so DevTools says which message is a rerun
request or a finished run and the NetLog when it crossed the socket.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests" / "web"), str(REPO)]  # the harness, and tests.cli_process it uses

TARGET_TRANSITION_P95_MS = 500.0
TARGET_PLANS_READY_MS = 1000.0


def _separate_cores() -> tuple[str, ...]:
    """Give the server the last CPU and this process (the harness, Playwright's driver and
    Chromium, which inherit it) the others; the launcher that starts the server there."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("--separate-cores needs at least 2 CPUs")
    os.sched_setaffinity(0, cpus[:-1])
    return ("taskset", "-c", str(cpus[-1]), str(Path(sys.executable).with_name("recourse-study")))


def run(protocol_id: str, participants: int, quick: bool,
        calibrate: bool = False, separate_cores: bool = False) -> dict[str, Any]:
    from browser_harness import StudyServer, launch_chromium
    from browser_participant import BrowserParticipant
    from playwright.sync_api import sync_playwright

    from protocols.definition.schema import load_protocol
    from study_app.web.load.participant import LoadParticipant
    from study_app.web.load.run import latency_stats

    protocol = load_protocol(protocol_id)
    # the page whose answer makes the session generate the plans (protocols.running.pages: plans_needed)
    generating = ({f"elicitation_{protocol.elicitation.scheme}"}
                  if protocol.elicitation.scheme != "none" else {"profile_entry", "persona"})
    transitions: list[float] = []
    by_kind: dict[str, list[float]] = {}
    plans_ready: list[float] = []
    split = _empty_split()
    loadtest: list[float] = []
    loadtest_by_kind: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="rs-bench-web-") as tmp:
        server = StudyServer(protocol_id, Path(tmp) / "bench.duckdb", Path(tmp) / "serve.log",
                             quick=quick,
                             launcher=_separate_cores() if separate_cores else None)
        started = time.perf_counter()
        server.start(timeout=3600)
        startup = time.perf_counter() - started
        try:
            netlog = Path(tmp) / "netlog.json"
            pages: list[tuple[Frames, list[Any]]] = []
            with sync_playwright() as pw:
                browser = launch_chromium(pw, extra_args=(f"--log-net-log={netlog}",))
                for k in range(participants):
                    context = browser.new_context(viewport={"width": 390, "height": 844})
                    page = context.new_page()
                    frames = _watch_frames(page)
                    bot = BrowserParticipant(page, protocol)
                    end = bot.run(start=bot.open(f"{server.url}/?PROLIFIC_PID=bench{k:04d}"))
                    if end[1] != "debrief":
                        raise RuntimeError(f"participant {k} ended on {end}")
                    for step in bot.steps:
                        transitions.append(step.seconds)
                        by_kind.setdefault(step.kind, []).append(step.seconds)
                        if step.kind in generating:
                            plans_ready.append(step.seconds)
                    _add_split(split, bot.steps, frames.sent_times("rerun"),
                               frames.received_times("finished"))
                    pages.append((frames, list(bot.steps)))
                    context.close()
                    if calibrate:  # the load generator's participant, on the same server
                        twin = LoadParticipant(k, protocol, server.url, seed=0xCA1)
                        # Playwright's sync API owns this thread's event loop
                        with ThreadPoolExecutor(1) as pool:
                            pool.submit(asyncio.run, twin.run()).result()
                        if twin.end_kind != "debrief":
                            raise RuntimeError(f"load participant {k} ended on {twin.end_kind}")
                        for step in twin.steps:
                            loadtest.append(step.seconds)
                            loadtest_by_kind.setdefault(step.kind, []).append(step.seconds)
                browser.close()  # writes the NetLog out
            network = _network_split(pages, _netlog_connections(netlog))
        finally:
            server.stop()
    t, p = latency_stats(transitions), latency_stats(plans_ready)
    return {
        "protocol": protocol_id, "participants": participants, "quick_artifacts": quick,
        "server_start_s": round(startup, 1),
        "transitions": {**t, "by_kind": {k: latency_stats(v) for k, v in sorted(by_kind.items())}},
        "plans_ready": p,
        "split": {"input": latency_stats(split["input"]),
                  "server": {**latency_stats(split["server"]),
                             "by_kind": {k: latency_stats(v)
                                         for k, v in sorted(split["server_by_kind"].items())}},
                  "drawing": latency_stats(split["drawing"])},
        "split_network": {**{name: latency_stats(network[name])
                             for name in ("input", "server", "drawing")},
                          "server_by_kind": {k: latency_stats(v) for k, v in
                                             sorted(network["server_by_kind"].items())}},
        "calibration": {**_calibration(latency_stats(loadtest), latency_stats(split["server"]),
                                       t, latency_stats(network["server"])),
                        "loadtest_by_kind": {k: latency_stats(v)
                                             for k, v in sorted(loadtest_by_kind.items())}}
        if calibrate else None,
        "targets": {"transition_p95_ms": TARGET_TRANSITION_P95_MS,
                    "plans_ready_ms": TARGET_PLANS_READY_MS},
        "meets_targets": bool(t.get("p95_ms", 1e9) <= TARGET_TRANSITION_P95_MS
                              and p.get("max_ms", 1e9) <= TARGET_PLANS_READY_MS),
        "machine": {"cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2),
                    "separate_cores": separate_cores},
    }


class Frames:
    """Every data message of one page's websocket, in order: what it was (a sent message: its
    BackMsg type, e.g. ``rerun``; a received one: ``finished`` for the end of a script run,
    else ``other``) and its DevTools time (seconds on CLOCK_MONOTONIC)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, float]] = []
        self.received: list[tuple[str, float]] = []

    def sent_times(self, kind: str) -> list[float]:
        return [t for k, t in self.sent if k == kind]

    def received_times(self, kind: str) -> list[float]:
        return [t for k, t in self.received if k == kind]


def _watch_frames(page: Any) -> Frames:
    """The page's websocket messages on the renderer's clock: the ``timestamp`` of the DevTools
    protocol's ``Network.webSocketFrameSent`` / ``Received`` events (module docstring). A
    run ended early by ``st.rerun`` is not ``finished``: the next run follows at once.
    (Playwright's ``framesent`` / ``framereceived`` events reach a synchronous script only
    while it waits inside a Playwright call, so a time taken in their handlers is when the
    harness got round to them.) Chromium's monotonic clock and ``time.perf_counter()`` are
    both CLOCK_MONOTONIC on Linux, so the times compare with the harness's click times."""
    import base64

    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    from study_app.web.load.streamlit_client import run_finished

    frames = Frames()

    def payload(params: dict[str, Any]) -> bytes | None:
        frame = params["response"]
        return base64.b64decode(frame["payloadData"]) if frame.get("opcode") in (1, 2) else None

    def received(params: dict[str, Any]) -> None:
        raw = payload(params)
        if raw is None:
            return
        msg = ForwardMsg()
        msg.ParseFromString(raw)
        kind = "finished" if run_finished(msg) else "other"
        frames.received.append((kind, float(params["timestamp"])))

    def sending(params: dict[str, Any]) -> None:
        raw = payload(params)
        if raw is None:
            return
        msg = BackMsg()
        msg.ParseFromString(raw)
        kind = "rerun" if msg.WhichOneof("type") == "rerun_script" else "other"
        frames.sent.append((kind, float(params["timestamp"])))

    cdp = page.context.new_cdp_session(page)
    cdp.on("Network.webSocketFrameReceived", received)
    cdp.on("Network.webSocketFrameSent", sending)
    cdp.send("Network.enable")
    return frames


def _netlog_connections(path: Path) -> list[dict[str, list[float]]]:
    """Per websocket connection of a Chromium NetLog, in the order they opened, the times
    (seconds, CLOCK_MONOTONIC) at which each data message was written to the socket
    (``sent``: its first frame) or read in full (``received``: its final frame). Control
    frames (ping, pong, close) are left out. A NetLog cut short by a crash (no closing
    brackets) is read as far as it goes."""
    raw = path.read_text()
    try:
        log = json.loads(raw)
    except json.JSONDecodeError:
        log = json.loads(raw.rstrip().rstrip(",") + "]}")
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    conns: dict[int, dict[str, list[float]]] = {}
    opening: dict[int, bool] = {}  # per connection and direction: inside a fragmented message
    for event in log["events"]:
        kind = names.get(event["type"], "")
        direction = {"WEBSOCKET_SENT_FRAME_HEADER": "sent",
                     "WEBSOCKET_RECV_FRAME_HEADER": "received"}.get(kind)
        if direction is None:
            continue
        params, source = event["params"], event["source"]["id"]
        if params["opcode"] >= 8:  # control frame
            continue
        conn = conns.setdefault(source, {"sent": [], "received": []})
        t = int(event["time"]) / 1000.0
        key = source * 2 + (direction == "sent")
        if direction == "sent" and not opening.get(key):
            conn["sent"].append(t)
        opening[key] = not params["final"]
        if direction == "received" and params["final"]:
            conn["received"].append(t)
    return list(conns.values())


def _network_split(pages: list[tuple[Frames, list[Any]]],
                   connections: list[dict[str, list[float]]]) -> dict[str, Any]:
    """(input, server, drawing) of every transition on the NetLog's clock, and the server
    span by page kind (``server_by_kind``): each page's messages matched by order to the
    NetLog connection of the same rank (pages ran one after another, one websocket each). A
    page whose message counts differ from its connection's (a reconnect) is left out rather
    than matched wrongly."""
    out = _empty_split()
    if len(connections) != len(pages):
        return out
    for (frames, steps), conn in zip(pages, connections, strict=True):
        if (len(frames.sent) != len(conn["sent"])
                or len(frames.received) != len(conn["received"])):
            continue
        sent = [t for (k, _), t in zip(frames.sent, conn["sent"], strict=True) if k == "rerun"]
        finished = [t for (k, _), t in zip(frames.received, conn["received"], strict=True)
                    if k == "finished"]
        _add_split(out, steps, sent, finished)
    return out


def _empty_split() -> dict[str, Any]:
    return {"input": [], "server": [], "drawing": [], "server_by_kind": {}}


def _add_split(out: dict[str, Any], steps: list[Any], sent: list[float],
               finished: list[float]) -> None:
    """Add each of a page's transitions to ``out`` split as ``_split`` does (on the clock of
    ``sent`` / ``finished``), its server span also under its page kind."""
    for step in steps:
        parts = _split(step.clicked, step.seconds, sent, finished)
        if parts is not None:
            for name, value in zip(("input", "server", "drawing"), parts, strict=True):
                out[name].append(value)
            out["server_by_kind"].setdefault(step.kind, []).append(parts[1])


def _calibration(load: dict[str, Any], server: dict[str, Any], browser: dict[str, Any],
                 network: dict[str, Any] | None = None) -> dict[str, Any]:
    """The load generator's transitions against the browser's server span (renderer clock;
    ``network``: on the socket, NetLog) and whole transition: ratios load / browser of the
    p50s and p95s."""
    def ratio(a: dict[str, Any], b: dict[str, Any], q: str) -> float | None:
        return round(a[q] / b[q], 2) if a.get(q) and b.get(q) else None

    qs = ("p50_ms", "p95_ms")
    return {"loadtest": load,
            "ratio_to_browser_server_on_the_socket": {q: ratio(load, network or {}, q)
                                                      for q in qs},
            "ratio_to_browser_server": {q: ratio(load, server, q) for q in qs},
            "ratio_to_browser_transition": {q: ratio(load, browser, q) for q in qs}}


def _split(clicked: float, seconds: float, sent: list[float],
           finished: list[float]) -> tuple[float, float, float] | None:
    """(input, server, drawing) seconds of the transition clicked at ``clicked`` that took
    ``seconds``: the first rerun request after the click, the first finished run after it."""
    request = next((t for t in sent if t >= clicked), None)
    if request is None:
        return None
    done = next((t for t in finished if t > request), None)
    if done is None or done - clicked > seconds:
        return None
    return request - clicked, done - request, clicked + seconds - done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocol", default="icarma-personalization")
    parser.add_argument("--participants", type=int, default=5)
    parser.add_argument("--quick", action="store_true",
                        help="serve with the quick (test) artifacts")
    parser.add_argument("--calibrate", action="store_true",
                        help="also walk the study with the load generator after each browser "
                        "participant and compare")
    parser.add_argument("--separate-cores", action="store_true",
                        help="the server on the last CPU, the browser and harness on the "
                        "others (a participant's browser runs on their own machine)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if args.participants < 1:
        parser.error("--participants must be >= 1")
    if args.quick and not os.environ.get("RECOURSE_STUDY_HOME"):
        os.environ["RECOURSE_STUDY_HOME"] = str(REPO / ".recourse-study" / "test-home")
    result = run(args.protocol, args.participants, args.quick, args.calibrate,
                 args.separate_cores)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    t, p = result["transitions"], result["plans_ready"]
    print(f"{args.participants} participants of {args.protocol} in Chromium "
          f"(server start {result['server_start_s']} s)")
    print(f"page transitions: n={t['n']} p50 {t['p50_ms']} ms, p95 {t['p95_ms']} ms, "
          f"max {t['max_ms']} ms (target p95 <= {TARGET_TRANSITION_P95_MS:.0f} ms)")
    for kind, s in t["by_kind"].items():
        print(f"  {kind:22s} n={s['n']:3d} p50 {s['p50_ms']:7.1f} ms  p95 {s['p95_ms']:7.1f} ms")
    for clock in ("split", "split_network"):
        print("  on the renderer's clock (DevTools):" if clock == "split" else
              "  on the socket (NetLog):")
        for name, what in (("input", "click to rerun request"),
                           ("server", "request to finished run: what `loadtest` measures"),
                           ("drawing", "finished run to page ready")):
            q = result[clock][name]
            if q["n"]:
                print(f"    {name:8s} p50 {q['p50_ms']:7.1f} ms  p95 {q['p95_ms']:7.1f} ms  "
                      f"({what})")
    c = result["calibration"]
    if c is not None:
        lt = c["loadtest"]
        print(f"loadtest on the same server: p50 {lt['p50_ms']} ms, p95 {lt['p95_ms']} ms; "
              "ratio to the browser's server span on the socket p50 "
              f"{c['ratio_to_browser_server_on_the_socket']['p50_ms']}, p95 "
              f"{c['ratio_to_browser_server_on_the_socket']['p95_ms']}; on the renderer's clock "
              f"p50 {c['ratio_to_browser_server']['p50_ms']}, p95 "
              f"{c['ratio_to_browser_server']['p95_ms']}; to its whole transition p50 "
              f"{c['ratio_to_browser_transition']['p50_ms']}, p95 "
              f"{c['ratio_to_browser_transition']['p95_ms']}")
    if p["n"]:
        print(f"plans ready after the answer that generates them: p50 {p['p50_ms']} ms, max {p['max_ms']} ms "
              f"(target <= {TARGET_PLANS_READY_MS:.0f} ms)")
    print(f"load average {result['machine']['load_avg_1m']} on {result['machine']['cpus']} "
          "cpus; meets targets:", result["meets_targets"])


if __name__ == "__main__":
    main()
