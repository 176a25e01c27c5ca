"""CPU time of HARE's searches for N people alone and together (one thread).

    python scripts/bench_hare_batch.py --people 10 [--protocol hare-interactive] [--json]

Builds the protocol's HARE arm as ``serve`` does (the scenario's trained artifacts under
RECOURSE_STUDY_HOME), takes N rejected profiles of the world model and measures the thread
CPU time of (1) N session starts one after another, (2) N starts whose searches run together
(``defer=True`` + ``Hare.complete_sessions``, what the web server's batcher does for people
who arrive at once), and the same for "keep looking" after the first iteration's questions.
Checks that every session's state is the same both ways (exit 1 otherwise).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import torch


def _state(session) -> dict:
    data = json.loads(session.to_json())
    data["base"].pop("runtime", None)  # the base method's wall time
    return data


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--people", type=int, default=10)
    ap.add_argument("--protocol", default="hare-interactive")
    ap.add_argument("--arm", default="hare")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    from data.store import Store
    from protocols.definition.schema import load_protocol
    from protocols.running.session import Study

    proto = load_protocol(args.protocol)
    with Store(Path(tempfile.mkdtemp()) / "bench.duckdb") as store:
        resources = Study(proto, store).interactive.resources
        arm = proto.arm(args.arm)
        hare, ctx = resources.method(arm), resources.context(arm)
        x = ctx.world.sample(20 * args.people, seed=3)
        x = x[~ctx.classifier.decision(x.float()).bool()][: args.people]
        everybody = ctx.everybody(1)
        hare.start_session(x[:1], everybody, seed=1)  # libraries' first use

        def starts(defer: bool) -> tuple[list, float]:
            t0 = time.thread_time()
            out = [hare.start_session(x[i:i + 1], everybody, seed=100 + i, defer=defer)
                   for i in range(len(x))]
            if defer:
                hare.complete_sessions(out)
            return out, time.thread_time() - t0

        def go_on(states: list[str], defer: bool) -> tuple[list, float]:
            t0 = time.thread_time()
            out = [hare.resume_session(s, defer=defer) for s in states]
            for s in out:
                s.accept(False)
            if defer:
                hare.complete_sessions(out)
            return out, time.thread_time() - t0

        alone, t_alone = starts(False)
        together, t_together = starts(True)
        same = [_state(a) == _state(b) for a, b in zip(alone, together, strict=True)]
        for s in alone:
            while s.state.phase == "compare":
                s.answer(1)
        states = [s.to_json() for s in alone if s.state.phase == "accept"]
        on_alone, t_on_alone = go_on(states, False)
        on_together, t_on_together = go_on(states, True)
        same += [_state(a) == _state(b) for a, b in zip(on_alone, on_together, strict=True)]

    n, m = len(x), len(states)
    result = {
        "people": n, "start_alone_cpu_ms_per_person": round(1000 * t_alone / n, 1),
        "start_together_cpu_ms_per_person": round(1000 * t_together / n, 1),
        "keep_looking_people": m,
        "keep_looking_alone_cpu_ms_per_person": round(1000 * t_on_alone / max(m, 1), 1),
        "keep_looking_together_cpu_ms_per_person": round(1000 * t_on_together / max(m, 1), 1),
        "same_sessions": all(same),
    }
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:42s} {v}", file=sys.stderr)
    return 0 if all(same) else 1


if __name__ == "__main__":
    sys.exit(main())
