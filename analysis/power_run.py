"""Running a power analysis's simulated studies on Ray, results streamed to a file.

**Tasks** are (N, simulation) pairs (analysis.power.PowerTask), each one Ray task of one CPU:
simulate the study, fit it, decide. ``ray_cluster`` starts a local Ray on this machine's
cores (``workers`` of them; no dashboard, no usage statistics, a small object store: the
tasks pass a few kB each) or, with ``address``, joins an existing cluster (``host:port`` of
its head, or ``auto``), so the same command spreads over many machines; every machine
needs this package installed. Inside a task, BLAS, OpenMP and numba use one thread and
the sampler runs its chains one after another: a worker is one core, at the ordinary
priority (Ray's default niceness of 15 starves the workers beside any other work).

**Results stream** to ``results.jsonl`` (``ResultsLog``): one JSON line per finished task,
written and fsynced by the driver as soon as the task returns. Each line carries the run's
``fingerprint`` (the protocol, the effect and its rule, the sampler settings, the seed, the
analysis code and the library versions); a rerun reuses every finished line whose
fingerprint matches and submits only the rest, so an interrupted run (even ``kill -9``)
resumes without refitting finished studies. A task that raised is written with its
``error`` and run again by the next run.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from analysis.folder import code_hashes, versions
from analysis.power import PowerInputError, PowerTask, task_fields
from data.jsonio import dumps

# Modules whose code decides a power result (with analysis.folder's model modules).
_CODE = ("models.py", "splines.py", "ordinal.py", "predictor.py", "fit.py", "refit.py",
         "power.py")
OBJECT_STORE_BYTES = 80 * 1024 * 1024  # Ray's minimum is 75 MiB; tasks pass a few kB
WORKER_ENV = {**{name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                        "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")},
              # Ray runs workers at nice 15 (to keep its own processes responsive); here the
              # workers are the whole job, and at 15 any other work on the machine starves them
              # (docs/benchmarks.md, "Findings behind the code"). Ray's job supervisor does the
              # same.
              "RAY_worker_niceness": "0"}
# Never phone home, never serve a dashboard, never print Ray's banner into our stderr.
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_DISABLE_DOCKER_CPU_WARNING": "1",
           "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"}
Work = Callable[[PowerTask], dict[str, Any]]


def run_fingerprint(settings: dict[str, Any]) -> str:
    """SHA-256 of a run's settings with the analysis code and library versions."""
    doc = {"settings": settings, "code": code_hashes(_CODE), "versions": versions()}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


class ResultsLog:
    """``results.jsonl`` of the module docstring."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def records(self) -> list[dict[str, Any]]:
        """Every complete line (a line cut short by a kill is skipped)."""
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and "key" in record:
                out.append(record)
        return out

    def finished(self, fingerprint: str) -> dict[str, dict[str, Any]]:
        """Finished (not failed) results of runs with ``fingerprint``, by task key (the
        last one written wins)."""
        return {r["key"]: r for r in self.records()
                if r.get("fingerprint") == fingerprint and "error" not in r}

    def append(self, record: dict[str, Any]) -> None:
        """Write one line and make it durable before returning."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a+b") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() > 0:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":  # a line cut short by a kill: end it first
                    f.write(b"\n")
            f.write((dumps(record) + "\n").encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """A PowerInputError unless something listens at ``address`` (``host:port``,
    ``ray://host:port``; ``auto`` is left to Ray)."""
    if address == "auto":
        return
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise PowerInputError(f"--address must be host:port (or auto), got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as e:
        raise PowerInputError(f"cannot reach a Ray cluster at {address}: {e}") from e


@contextmanager
def ray_cluster(address: str | None = None, workers: int | None = None) -> Iterator[dict]:
    """A Ray session for the run (module docstring); shut down on the way out, whatever
    happens. Yields {address, cpus}."""
    for name, value in RAY_ENV.items():
        os.environ.setdefault(name, value)
    if address is not None:
        check_reachable(address)
    import ray

    options: dict[str, Any] = {"runtime_env": {"env_vars": WORKER_ENV},
                               "log_to_driver": False, "logging_level": "ERROR"}
    if address is None:
        options.update(num_cpus=workers or os.cpu_count() or 1, include_dashboard=False,
                       object_store_memory=OBJECT_STORE_BYTES)
    try:
        context = ray.init(address=address, **options)
    except (ConnectionError, ValueError, RuntimeError) as e:
        ray.shutdown()
        raise PowerInputError(f"cannot join the Ray cluster at {address}: {e}") from e
    try:
        yield {"address": address or "local", "cpus": int(ray.cluster_resources().get("CPU", 0)),
               "ray": context.address_info.get("address")}
    finally:
        ray.shutdown()


def _call(work: Work, task: PowerTask) -> dict[str, Any]:
    """One task in a worker; an exception becomes the record's ``error``."""
    try:
        return work(task)
    except Exception as e:  # noqa: BLE001 - one study's failure must not stop the run
        return {**task_fields(task), "error": " ".join(f"{type(e).__name__}: {e}".split())}


def run_tasks(tasks: Sequence[PowerTask], work: Work, log: ResultsLog, fingerprint: str,
              on_result: Callable[[dict[str, Any]], None], in_flight: int) -> None:
    """Run ``tasks`` on the current Ray session, at most ``in_flight`` queued at once,
    appending each result to ``log`` as it arrives (module docstring)."""
    import ray

    remote = ray.remote(num_cpus=1, max_retries=1)(_call)
    work_ref = ray.put(work)
    queue = iter(tasks)
    pending: dict[Any, PowerTask] = {}

    def submit() -> None:
        task = next(queue, None)
        if task is not None:
            pending[remote.remote(work_ref, task)] = task

    for _ in range(max(1, in_flight)):
        submit()
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            task = pending.pop(ref)
            try:
                record = ray.get(ref)
            except ray.exceptions.RayError as e:  # the worker died (out of memory, a node lost)
                record = {**task_fields(task), "error": " ".join(f"{type(e).__name__}: {e}".split())[:500]}
            record["fingerprint"] = fingerprint
            log.append(record)
            on_result(record)
            submit()
