"""Mutation testing of the core modules with mutmut: each module against only the tests that
cover it, the killed share per module, and the survivors listed.

    python scripts/mutation.py [--only metrics,scm] [--max-children 2] [--json]
    python scripts/mutation.py --only session --resume      # continue a stopped run
    python scripts/mutation.py --only session --survivors   # re-check survivors after new tests

For each core module (``MODULES``) a work folder ``.mutation/<name>/`` links the packages and
the tests and holds a pyproject.toml whose ``[tool.mutmut]`` section names that one module and
its covering test files; ``mutmut run`` there copies the code into ``mutants/``, records which
test reaches which function, and runs every mutant against only the tests that reach its
function (a mutant no test reaches is a survivor: "no tests"). A module may be restricted to
some functions (``functions``: mutant-name globs), e.g. the analysis' data preparation of
analysis/model_data.py without the smooth's draws.

The killed share counts killed and timed-out mutants over all mutants of the module
(``mutmut``'s own score leaves out only skipped ones; we skip none). Survivors are printed
(name and diff with ``--diff``) and written to ``.mutation/report.json``; the ones we judge
equivalent are explained in docs/mutation.md.

Artifacts: the runs use their own test home (``.mutation/test-home``, a copy of the test
suite's when there is one): a trampolined copy of training code hashes differently from the
sources (tests/conftest.py), and a retrain there must not touch the test suite's cache (nor
the user cache of test homes: ``RECOURSE_STUDY_TEST_CACHE=off``).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import math
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORK = REPO / ".mutation"
# mutmut verdicts that count as killed: a failing test, a timeout, a crash
KILLED = ("killed", "timeout", "segfault")
PACKAGES = ("engine", "data", "protocols", "analysis", "study_app")
PLUGIN = "mutation_plugin"  # scripts/mutation_plugin.py, copied beside the mutated packages
# One thread per process: mutmut runs ``--max-children`` mutants side by side, and torch's (or
# BLAS') thread pool in each of them would ask for every core as well; on a busy 2-core
# machine their spinning threads cost ten times the CPU of the tests themselves.
TIMEOUT_MULTIPLIER = 5.0
# mutmut's fork server also stops a mutant's run after half its CPU limit in wall-clock time.
# On a shared machine (other work, or our processes paused for minutes) that turns a slow but
# passing run into a "timeout", which counts as killed. We run mutmut with that limit raised
# to a guard against runs that wait without using CPU; a run that loops is stopped by its CPU
# limit (RLIMIT_CPU), whatever the machine's load.
_MUTMUT = """
import sys
import mutmut.workers.isolation as isolation
from mutmut.__main__ import cli
register = isolation.register_timeout
isolation.register_timeout = lambda pid, timeout_s: register(pid, 10 * timeout_s + 300)
sys.argv[0] = "mutmut"
cli()
"""
ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                     "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS")}


@dataclass(frozen=True)
class Module:
    name: str
    path: str  # the module's file, or several files separated by commas (one figure for all)
    tests: tuple[str, ...]
    functions: tuple[str, ...] = ()  # mutant-name globs; empty: every function of the file
    pytest_args: tuple[str, ...] = field(default_factory=tuple)


MODULES: tuple[Module, ...] = (
    Module("metrics", "engine/metrics.py",
           ("tests/engine/test_metrics.py", "tests/engine/test_preference_metrics.py")),
    Module("scm", "engine/scm.py", ("tests/engine/test_scm.py",)),
    Module("preferences", "engine/preferences.py",
           ("tests/engine/test_preferences.py", "tests/engine/test_preference_metrics.py")),
    Module("oracle", "engine/recourse/oracle/method.py", ("tests/engine/oracle",)),
    Module("oracle_grid", "engine/recourse/oracle/grid.py", ("tests/engine/oracle",)),
    # the state machine's own tests run on the exact Bayes rule (test_hare.py needs trained
    # artifacts and runs HARE end to end: minutes per mutant)
    Module("hare_state", "engine/recourse/hare/state.py",
           ("tests/engine/test_hare_budget.py", "tests/engine/test_hare_contenders.py",
            "tests/engine/test_hare_rounds.py")),
    Module("hare_config", "engine/recourse/hare/config.py",
           ("tests/engine/test_hare_budget.py", "tests/engine/test_hare_contenders.py",
            "tests/engine/test_hare_rounds.py")),
    Module("session", "protocols/running/session.py",
           ("tests/protocols/test_session.py", "tests/protocols/test_concurrency.py",
            "tests/protocols/test_two_writers.py", "tests/protocols/test_admission.py",
            "tests/protocols/test_hare_flow.py", "tests/protocols/test_hare_speculate.py"),
           # the subprocess version runs the same code path; PostgreSQL: the store's concern
           pytest_args=("-k", "not processes and not postgres")),
    # the store: data/store.py only picks a driver; the DuckDB driver and the contract's shared
    # code are the store (the PostgreSQL driver runs the same tests against a server: the
    # contract tests' PostgreSQL half is left out to keep a mutant's run to seconds)
    Module("store", "data/duckdb_store.py,data/contract.py",
           ("tests/data/test_store.py", "tests/data/test_store_contract.py",
            "tests/protocols/test_two_writers.py"),
           pytest_args=("-k", "not postgres and not processes")),
    Module("analysis_prepare", "analysis/model_data.py", ("tests/analysis/test_models.py",),
           functions=("analysis.model_data.x_prepare__mutmut_*",
                      "analysis.model_data.x_basis_size__mutmut_*",
                      "analysis.model_data.xǁModelDataǁ*"),
           pytest_args=("-k", "not recovery")),
)


def _pyproject(module: Module) -> str:
    """The repository's pytest settings plus a [tool.mutmut] section for one module."""
    import tomllib

    base = tomllib.loads((REPO / "pyproject.toml").read_text())
    pt = base["tool"]["pytest"]["ini_options"]

    def arr(values) -> str:
        return "[" + ", ".join(json.dumps(v) for v in values) + "]"

    return "\n".join([
        "[tool.pytest.ini_options]",
        f"testpaths = {arr(pt['testpaths'])}",
        f"pythonpath = {arr(pt['pythonpath'])}",
        f"markers = {arr(pt['markers'])}",
        f"timeout = {pt['timeout']}",
        "",
        "[tool.mutmut]",
        f"source_paths = {arr(PACKAGES)}",
        f"only_mutate = {arr(module.path.split(','))}",
        f"pytest_add_cli_args_test_selection = {arr(t for t in module.tests if (REPO / t).exists())}",
        # -p torch._dynamo: imported once in mutmut's fork server (torch's optimizers import it
        # lazily at first use, seconds that every forked test run would pay again);
        # -p mutation_plugin (scripts/mutation_plugin.py): gc.freeze() after the fork server's
        # warm-up, the selected tests fastest first
        f"pytest_add_cli_args = {arr(['-p', 'no:cacheprovider', '-p', 'torch._dynamo', '-p', PLUGIN, '-m', 'not slow', '-x', '-q', *module.pytest_args])}",
        f"also_copy = {arr([PLUGIN + '.py'])}",
        "process_isolation = \"forkserver\"",
        "use_git_change_detection = false",
        # a mutant's run may use 2 * TIMEOUT_MULTIPLIER * (its tests' measured time plus a second) of
        # CPU (mutmut's default multiplier, 15, lets a mutant that loops forever burn 30 times)
        f"timeout_multiplier = {TIMEOUT_MULTIPLIER}",
        "",
    ])


def _prepare(module: Module, resume: bool = False) -> Path:
    """The module's work folder; ``resume`` keeps the last run's verdicts (mutmut re-runs only
    the mutants without one, and every mutant of a function whose source changed)."""
    work = WORK / module.name
    if work.exists() and not resume:
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    for name in (*PACKAGES, "tests", "README.md", f"scripts/{PLUGIN}.py"):
        link = work / Path(name).name
        if not link.is_symlink():
            link.symlink_to(REPO / name)
    (work / "pyproject.toml").write_text(_pyproject(module))
    return work


def _results(work: Path, module: Module) -> dict:
    """Per-mutant verdicts from mutmut's meta file (exit codes)."""
    codes: dict[str, int | None] = {}
    for path in module.path.split(","):
        meta = work / "mutants" / (path + ".meta")
        codes.update(json.loads(meta.read_text())["exit_code_by_key"])
    if module.functions:
        import fnmatch

        codes = {k: v for k, v in codes.items()
                 if any(fnmatch.fnmatch(k, g) for g in module.functions)}
    from mutmut.stats import status_by_exit_code

    status = {k: status_by_exit_code[c] for k, c in codes.items()}
    killed = [k for k, s in status.items() if s in KILLED]
    survived = sorted(k for k in status if k not in killed)
    return {"module": module.path, "mutants": len(codes), "killed": len(killed),
            "killed_share": round(len(killed) / len(codes), 4) if codes else None,
            "timeouts": sum(s == "timeout" for s in status.values()),
            "survived": {k: status[k] for k in survived}}


def _diff(work: Path, mutant: str) -> str:
    """The survivor's change (``mutmut show``), the changed lines only."""
    mutmut = str(Path(sys.executable).with_name("mutmut"))
    out = subprocess.run([mutmut, "show", mutant], cwd=work, capture_output=True, text=True)
    lines = [ln for ln in out.stdout.splitlines()
             if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    return "\n".join("        " + ln for ln in lines)


def run_module(module: Module, max_children: int, resume: bool = False,
               survivors: bool = False) -> dict:
    """``survivors``: run again only the last run's survivors (after tests were added; the
    other verdicts stand, as with ``resume``)."""
    names = list(module.functions)
    if survivors:
        names = list(_results(WORK / module.name, module)["survived"])
        resume = True
    work = _prepare(module, resume)
    # its own test home, and none of it in the user cache (tests/conftest.py)
    env = {**os.environ, **ONE_THREAD, "RECOURSE_STUDY_TEST_HOME": str(WORK / "test-home"),
           "RECOURSE_STUDY_TEST_CACHE": "off"}
    env.pop("MUTANT_UNDER_TEST", None)
    cmd = [sys.executable, "-c", _MUTMUT, "run", "--max-children", str(max_children), *names]
    log = (work / "mutmut.log").open("a" if resume else "w")
    with _Usage() as usage:
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
        # this child's own CPU time (and its waited-for descendants'), whatever runs beside it
        _, status, rusage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        usage.cpu = rusage.ru_utime + rusage.ru_stime
    out = _results(work, module)
    out.update(usage.figures())
    out["exit_code"] = proc.returncode
    return out


def _test_home() -> None:
    """The runs' test home: a copy of the test suite's (trained artifacts) when there is one."""
    home = WORK / "test-home"
    suite_home = Path(os.environ.get("RECOURSE_STUDY_TEST_HOME")
                      or REPO / ".recourse-study" / "test-home")
    if not home.exists() and suite_home.is_dir():
        shutil.copytree(suite_home, home)


class _Usage:
    """Wall time, CPU time (``cpu``, set by the caller: mutmut, its fork server and every
    mutant's run) and the machine's 1-minute load average, sampled every 15 s (a shared
    machine: the load says how much of it the run had)."""

    cpu: float | None = None

    def __enter__(self) -> _Usage:
        self.start = time.monotonic()
        self.loads: list[float] = [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(15):
            self.loads.append(os.getloadavg()[0])

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.seconds = time.monotonic() - self.start

    def figures(self) -> dict:
        return {"seconds": round(self.seconds, 1),
                "cpu_seconds": None if self.cpu is None else round(self.cpu, 1),
                "load_mean": round(sum(self.loads) / len(self.loads), 2),
                "load_max": round(max(self.loads), 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated module names")
    ap.add_argument("--jobs", type=int, default=None,
                    help="modules run side by side (default: 2 when there are several)")
    ap.add_argument("--max-children", type=int, default=None,
                    help="mutants run side by side per module (default: 2 / jobs)")
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    ap.add_argument("--report-only", action="store_true",
                    help="summarize the last run's results without running anything")
    ap.add_argument("--diff", action="store_true", help="print each survivor's diff")
    ap.add_argument("--resume", action="store_true",
                    help="continue a stopped run: keep the verdicts already in .mutation/<module>")
    ap.add_argument("--survivors", action="store_true",
                    help="run only the last run's survivors again (e.g. after adding tests)")
    args = ap.parse_args()
    wanted = [m for m in MODULES if not args.only or m.name in args.only.split(",")]
    if not wanted:
        print(f"no module named {args.only!r}; known: {[m.name for m in MODULES]}", file=sys.stderr)
        return 2
    WORK.mkdir(exist_ok=True)
    _test_home()
    report: dict[str, dict] = {}
    path = WORK / "report.json"
    lock = threading.Lock()
    # Two modules side by side, one mutant at a time each (the machine's two cores), rather
    # than one module with two: while a module collects its test map and runs its tests
    # clean (one process each), or finishes its slowest mutants, the other keeps a core busy.
    jobs = args.jobs or (1 if args.report_only or len(wanted) == 1 else 2)
    max_children = args.max_children or max(1, 2 // jobs)

    def one(m: Module) -> None:
        if args.report_only:
            r = _results(WORK / m.name, m)
        else:
            print(f"mutation: {m.name} ({m.path}) ...", file=sys.stderr, flush=True)
            r = run_module(m, max_children, args.resume, args.survivors)
        share = "n/a" if r["killed_share"] is None else f"{100 * r['killed_share']:.1f}%"
        lines = [f"mutation: {m.name}: {r['killed']}/{r['mutants']} killed ({share}); "
                 f"survivors: {len(r['survived'])}"]
        for name, status in r["survived"].items():
            lines.append(f"    {name} ({status})")
            if args.diff:
                lines.append(_diff(WORK / m.name, name))
        with lock:
            report[m.name] = r
            print("\n".join(lines), file=sys.stderr, flush=True)
            old = json.loads(path.read_text()) if path.exists() else {}
            # after each module; a report-only summary keeps the run's time figures
            path.write_text(json.dumps({**old, m.name: {**old.get(m.name, {}), **r}}, indent=2))

    # the dearest modules first (CPU seconds of the last run; unknown ones first of all), so
    # that the last module to finish is a short one
    last = json.loads(path.read_text()) if path.exists() else {}
    order = sorted(wanted, key=lambda m: -(last.get(m.name, {}).get("cpu_seconds") or math.inf))
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for future in [pool.submit(one, m) for m in order]:
            future.result()
    report = {m.name: report[m.name] for m in wanted}
    total = round(time.monotonic() - start, 1)
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{'module':18} {'mutants':>8} {'killed':>8} {'share':>8} {'timeouts':>8} "
              f"{'wall s':>8} {'CPU s':>8} {'load':>5}")
        for name, r in report.items():
            share = "n/a" if r["killed_share"] is None else f"{100 * r['killed_share']:.1f}%"
            print(f"{name:18} {r['mutants']:>8} {r['killed']:>8} {share:>8} {r['timeouts']:>8} "
                  f"{r.get('seconds', ''):>8} {r.get('cpu_seconds', ''):>8} "
                  f"{r.get('load_mean', ''):>5}")
        if not args.report_only:
            print(f"total: {total} s wall, {jobs} module(s) at a time, "
                  f"{max_children} mutant(s) at a time each")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
