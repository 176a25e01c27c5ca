"""Benchmark of the participant app in a real browser (Debian Chromium via Playwright).

Starts `recourse-study serve` on a free port, lets N participants complete the protocol one
after another at phone width (the test suite's browser participant: tests/web), and reports:

- page transitions: from the click on Continue to the next page's controls being rendered,
  over every page of every participant (target: p95 <= 500 ms);
- plans ready: from the click on Continue of the page whose answer makes the session
  generate the plans (the elicitation; the profile page when a protocol has none) to the
  next page being rendered (target: <= 1 s).

    .venv/bin/python scripts/bench_web.py --participants 5 [--quick] [--json]

``--quick`` serves with the reduced test artifacts (`train --quick`; the default home of the
test suite unless RECOURSE_STUDY_HOME is set); without it the full artifacts of
$RECOURSE_STUDY_HOME (default ./.recourse-study) are used, built first if missing. Timings
depend on the machine and on whatever else runs on it: report them as measured.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "web"))

TARGET_TRANSITION_P95_MS = 500.0
TARGET_PLANS_READY_MS = 1000.0


def run(protocol_id: str, participants: int, quick: bool) -> dict[str, Any]:
    from browser_harness import StudyServer, launch_chromium
    from browser_participant import BrowserParticipant
    from playwright.sync_api import sync_playwright

    from protocols.schema import load_protocol
    from study_app.web.load.run import latency_stats

    protocol = load_protocol(protocol_id)
    # the page whose answer makes the session generate the plans (protocols.pages: plans_needed)
    generating = ({f"elicitation_{protocol.elicitation.scheme}"}
                  if protocol.elicitation.scheme != "none" else {"profile_entry", "persona"})
    transitions: list[float] = []
    by_kind: dict[str, list[float]] = {}
    plans_ready: list[float] = []
    with tempfile.TemporaryDirectory(prefix="rs-bench-web-") as tmp:
        server = StudyServer(protocol_id, Path(tmp) / "bench.duckdb", Path(tmp) / "serve.log",
                             quick=quick)
        started = time.perf_counter()
        server.start(timeout=3600)
        startup = time.perf_counter() - started
        try:
            with sync_playwright() as pw:
                browser = launch_chromium(pw)
                for k in range(participants):
                    context = browser.new_context(viewport={"width": 390, "height": 844})
                    bot = BrowserParticipant(context.new_page(), protocol)
                    end = bot.run(start=bot.open(f"{server.url}/?PROLIFIC_PID=bench{k:04d}"))
                    if end[1] != "debrief":
                        raise RuntimeError(f"participant {k} ended on {end}")
                    for step in bot.steps:
                        transitions.append(step.seconds)
                        by_kind.setdefault(step.kind, []).append(step.seconds)
                        if step.kind in generating:
                            plans_ready.append(step.seconds)
                    context.close()
                browser.close()
        finally:
            server.stop()
    t, p = latency_stats(transitions), latency_stats(plans_ready)
    return {
        "protocol": protocol_id, "participants": participants, "quick_artifacts": quick,
        "server_start_s": round(startup, 1),
        "transitions": {**t, "by_kind": {k: latency_stats(v) for k, v in sorted(by_kind.items())}},
        "plans_ready": p,
        "targets": {"transition_p95_ms": TARGET_TRANSITION_P95_MS,
                    "plans_ready_ms": TARGET_PLANS_READY_MS},
        "meets_targets": bool(t.get("p95_ms", 1e9) <= TARGET_TRANSITION_P95_MS
                              and p.get("max_ms", 1e9) <= TARGET_PLANS_READY_MS),
        "machine": {"cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocol", default="icarma-personalization")
    parser.add_argument("--participants", type=int, default=5)
    parser.add_argument("--quick", action="store_true",
                        help="serve with the quick (test) artifacts")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if args.participants < 1:
        parser.error("--participants must be >= 1")
    if args.quick and not os.environ.get("RECOURSE_STUDY_HOME"):
        os.environ["RECOURSE_STUDY_HOME"] = str(REPO / ".recourse-study" / "test-home")
    result = run(args.protocol, args.participants, args.quick)
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
    if p["n"]:
        print(f"plans ready after the answer that generates them: p50 {p['p50_ms']} ms, max {p['max_ms']} ms "
              f"(target <= {TARGET_PLANS_READY_MS:.0f} ms)")
    print(f"load average {result['machine']['load_avg_1m']} on {result['machine']['cpus']} "
          "cpus; meets targets:", result["meets_targets"])


if __name__ == "__main__":
    main()
