"""A load test: start the servers, drive N participants C at a time, check the database.

``run_load`` starts `serve` (one process, or K workers behind HAProxy: study_app.web.cluster)
on a study of its own in the given store (``load-<protocol>-<time>``, so earlier runs in the
same database never count), lets N ``LoadParticipant``\\ s walk the protocol with at most C
in the study at once (each over its own websocket, as N browser tabs would), optionally
SIGKILLs one worker mid-run, stops the servers and checks the database
(study_app.web.load.audit).

Latency is measured per page transition: from sending the answer to the next page being
drawn (the same span as scripts/bench_web.py's click-to-rendered, minus the browser's own
rendering). ``think`` adds a participant's reading time between pages (exponential with
that mean); with 0 every participant clicks on at once, the worst case for the server.
``act`` adds the time each action on a page takes once it is read (each widget change,
button and the click on Continue; uniform between half and 1.5 times it): what lets a
server compute from the widgets' last state before the click (``Study.speculate``).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocols.definition.schema import Protocol
from study_app.web.cluster import Cluster
from study_app.web.load.participant import LoadParticipant
from study_app.web.process_tree import PeakMemory


def latency_stats(values_s: list[float]) -> dict[str, Any]:
    """n, p50, p95 (nearest rank) and max, in milliseconds."""
    ms = sorted(1000 * v for v in values_s)
    if not ms:
        return {"n": 0}
    p95 = ms[min(len(ms) - 1, max(0, round(0.95 * len(ms)) - 1))]
    return {"n": len(ms), "p50_ms": round(statistics.median(ms), 1), "p95_ms": round(p95, 1),
            "max_ms": round(ms[-1], 1)}


@dataclass
class LoadSettings:
    protocol: Protocol
    protocol_arg: str  # as given to serve (a shipped id or a file)
    participants: int
    concurrency: int
    db: str
    workers: int = 1
    think: float = 0.0
    quick: bool = False
    kill_one_at: float | None = None  # share of participants finished when one worker dies
    seed: int = 0
    timeout: float = 120.0
    widget_reruns: bool = True  # a script run per change outside a form, as a browser
    act: float = 0.0  # mean seconds per action on a page (LoadParticipant.act)
    linger_share: float = 0.0  # share who go away mid-study (LoadParticipant.linger_share)
    linger: float = 0.0  # seconds they stay away


def is_postgres(db: str) -> bool:
    return db.startswith(("postgresql://", "postgres://"))


async def drive(settings: LoadSettings, url: str, cluster: Cluster,
                 on_progress: Callable[[int, int], None] | None) -> dict[str, Any]:
    gate = asyncio.Semaphore(settings.concurrency)
    people = [LoadParticipant(k, settings.protocol, url, seed=settings.seed,
                              think=settings.think, timeout=settings.timeout,
                              widget_reruns=settings.widget_reruns, act=settings.act,
                              linger_share=settings.linger_share, linger=settings.linger)
              for k in range(settings.participants)]
    failures: dict[int, str] = {}
    done = 0
    killed: dict[str, Any] = {}
    finished = asyncio.Event()

    async def one(p: LoadParticipant) -> None:
        nonlocal done
        async with gate:
            try:
                await p.run()
            except Exception as e:  # every failure is a reported error, never a crash
                failures[p.number] = f"{type(e).__name__}: {e}"
        done += 1
        if on_progress is not None:
            on_progress(done, len(people))
        if (settings.kill_one_at is not None and not killed
                and done >= settings.kill_one_at * len(people)):
            finished.set()

    async def killer() -> None:
        await finished.wait()
        victim = cluster.workers[0]
        in_study = sum(1 for p in people if p.token is not None and p.end_kind is None)
        killed.update({"port": victim.port, "pid": victim.pid, "after_finished": done,
                       "participants_mid_study": in_study})
        await asyncio.to_thread(victim.kill)

    started = time.perf_counter()
    tasks = [asyncio.create_task(one(p)) for p in people]
    kill_task = asyncio.create_task(killer()) if settings.kill_one_at is not None else None
    await asyncio.gather(*tasks)
    wall = time.perf_counter() - started
    if kill_task is not None:
        kill_task.cancel()
    return {"people": people, "failures": failures, "wall_s": wall, "killed": killed or None}


def run_load(settings: LoadSettings, workdir: Path,
             on_progress: Callable[[int, int], None] | None = None,
             on_status: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the load test (module docstring); the result document."""
    from data.store import Store
    from study_app.web.load.audit import check

    status = on_status or (lambda _m: None)
    study_id = f"load-{settings.protocol.id[:12]}-{int(time.time() * 1000) % 10**10}"
    serve_args = ["--protocol", settings.protocol_arg, "--db", settings.db, "--study", study_id,
                  *(["--quick"] if settings.quick else [])]
    cluster = Cluster(serve_args, settings.workers, workdir)
    load_before = os.getloadavg()
    status(f"starting {settings.workers} server process(es)")
    t0 = time.perf_counter()
    cluster.start()
    startup = time.perf_counter() - t0
    status(f"serving at {cluster.url}; {settings.participants} participants, "
           f"{settings.concurrency} at a time")
    try:
        cpu_before = [w.cpu_seconds() for w in cluster.workers]
        sampler = PeakMemory([w.pid for w in cluster.workers if w.pid is not None]).start()
        try:
            driven = asyncio.run(drive(settings, cluster.url, cluster, on_progress))
        finally:
            peak_memory = sampler.stop()
        load_during = os.getloadavg()
        cpu_used = sum(max(0.0, w.cpu_seconds() - b)
                       for w, b in zip(cluster.workers, cpu_before, strict=True))
    finally:
        cluster.stop()
    people: list[LoadParticipant] = driven["people"]
    status("checking the database")
    with Store(settings.db) as store:
        audit = check(store, study_id, people)
    steps = [s for p in people for s in p.steps]
    by_kind: dict[str, list[float]] = {}
    for s in steps:
        by_kind.setdefault(s.kind, []).append(s.seconds)
    complete = sum(1 for p in people if p.end_kind == "debrief")
    timed_out = sum(1 for p in people if p.ending == "timed_out")
    errors = [{"participant": k, "error": v} for k, v in sorted(driven["failures"].items())]
    return {
        "protocol": settings.protocol.id, "study_id": study_id,
        "backend": "postgresql" if is_postgres(settings.db) else "duckdb",
        "participants": settings.participants, "concurrency": settings.concurrency,
        "workers": settings.workers, "think_s": settings.think, "act_s": settings.act,
        "widget_reruns": settings.widget_reruns,
        "quick_artifacts": settings.quick, "server_start_s": round(startup, 1),
        "wall_s": round(driven["wall_s"], 1),
        "pages_per_s": round(len(steps) / driven["wall_s"], 2) if driven["wall_s"] else None,
        # the servers' CPU time per page transition, their search workers' included (a
        # killed worker's share is lost): what a page costs, whatever else the machine runs;
        # 1000 / it = pages/s per core
        "server_cpu_ms_per_page": round(1000 * cpu_used / len(steps), 1) if steps else None,
        # the largest memory the server processes and every process they started held at
        # once while participants walked (study_app.web.process_tree: RSS and PSS)
        "server_memory": peak_memory.as_dict(),
        "complete": complete, "lingered": sum(p.lingered for p in people),
        "timed_out": timed_out, "errors": len(errors), "error_list": errors[:20],
        "reconnects": sum(p.reconnects for p in people),
        "transitions": {**latency_stats([s.seconds for s in steps]),
                        "by_kind": {k: latency_stats(v) for k, v in sorted(by_kind.items())}},
        "first_page": latency_stats([p.opened for p in people if p.opened is not None]),
        "killed_worker": driven["killed"],
        "database_check": audit,
        "machine": {"cpus": os.cpu_count(),
                    "load_avg_1m_before": round(load_before[0], 2),
                    "load_avg_1m_end": round(load_during[0], 2)},
    }
