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
analysis/models.py without its PyMC model builder.

The killed share counts killed and timed-out mutants over all mutants of the module
(``mutmut``'s own score leaves out only skipped ones; we skip none). Survivors are printed
(name and diff with ``--diff``) and written to ``.mutation/report.json``; the ones we judge
equivalent are explained in docs/mutation.md.

Artifacts: the runs use their own test home (``.mutation/test-home``, a copy of the test
suite's when there is one): a trampolined copy of training code hashes differently from the
sources (tests/conftest.py), and a retrain there must not touch the test suite's cache.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORK = REPO / ".mutation"
# mutmut verdicts that count as killed: a failing test, a timeout, a crash
KILLED = ("killed", "timeout", "segfault")
PACKAGES = ("engine", "data", "protocols", "analysis", "study_app")


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
    Module("oracle", "engine/recourse/oracle.py", ("tests/engine/test_oracle.py",)),
    Module("oracle_grid", "engine/recourse/oracle_grid.py", ("tests/engine/test_oracle.py",)),
    # the state machine's own tests run on the exact Bayes rule (test_hare.py needs trained
    # artifacts and runs HARE end to end: minutes per mutant)
    Module("hare_state", "engine/recourse/hare_state.py", ("tests/engine/test_hare_budget.py",)),
    Module("session", "protocols/session.py",
           ("tests/protocols/test_session.py", "tests/protocols/test_concurrency.py",
            "tests/protocols/test_two_writers.py"),
           # the subprocess version runs the same code path; PostgreSQL: the store's concern
           pytest_args=("-k", "not processes and not postgres")),
    # the store: data/store.py only picks a driver; the DuckDB driver and the contract's shared
    # code are the store (the PostgreSQL driver runs the same tests against a server: the
    # contract tests' PostgreSQL half is left out to keep a mutant's run to seconds)
    Module("store", "data/duckdb_store.py,data/contract.py",
           ("tests/data/test_store.py", "tests/data/test_store_contract.py",
            "tests/protocols/test_two_writers.py"),
           pytest_args=("-k", "not postgres and not processes")),
    Module("analysis_prepare", "analysis/models.py", ("tests/analysis/test_models.py",),
           functions=("analysis.models.x_prepare__mutmut_*",
                      "analysis.models.x_basis_size__mutmut_*",
                      "analysis.models.xǁModelDataǁ*"),
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
        # lazily at first use, 5-20 s that every forked test run would pay again)
        f"pytest_add_cli_args = {arr(['-p', 'no:cacheprovider', '-p', 'torch._dynamo', '-m', 'not slow', '-x', '-q', *module.pytest_args])}",
        "process_isolation = \"forkserver\"",
        "use_git_change_detection = false",
        "",
    ])


def _prepare(module: Module, resume: bool = False) -> Path:
    """The module's work folder; ``resume`` keeps the last run's verdicts (mutmut re-runs only
    the mutants without one, and every mutant of a function whose source changed)."""
    work = WORK / module.name
    if work.exists() and not resume:
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    for name in (*PACKAGES, "tests", "README.md"):
        if not (work / name).is_symlink():
            (work / name).symlink_to(REPO / name)
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
    env = dict(os.environ)
    home = WORK / "test-home"
    suite_home = Path(os.environ.get("RECOURSE_STUDY_TEST_HOME")
                      or REPO / ".recourse-study" / "test-home")
    if not home.exists() and suite_home.is_dir():
        shutil.copytree(suite_home, home)
    env["RECOURSE_STUDY_TEST_HOME"] = str(home)
    env.pop("MUTANT_UNDER_TEST", None)
    mutmut = str(Path(sys.executable).with_name("mutmut"))
    cmd = [mutmut, "run", "--max-children", str(max_children), *names]
    start = time.monotonic()
    log = (work / "mutmut.log").open("a" if resume else "w")
    proc = subprocess.run(cmd, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
    out = _results(work, module)
    out["seconds"] = round(time.monotonic() - start, 1)
    out["exit_code"] = proc.returncode
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated module names")
    ap.add_argument("--max-children", type=int, default=2)
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
    report = {}
    path = WORK / "report.json"
    for m in wanted:
        if args.report_only:
            r = _results(WORK / m.name, m)
        else:
            print(f"mutation: {m.name} ({m.path}) ...", file=sys.stderr, flush=True)
            r = run_module(m, args.max_children, args.resume, args.survivors)
        report[m.name] = r
        share = "n/a" if r["killed_share"] is None else f"{100 * r['killed_share']:.1f}%"
        print(f"mutation: {m.name}: {r['killed']}/{r['mutants']} killed ({share}); "
              f"survivors: {len(r['survived'])}", file=sys.stderr, flush=True)
        for name, status in r["survived"].items():
            print(f"    {name} ({status})", file=sys.stderr)
            if args.diff:
                print(_diff(WORK / m.name, name), file=sys.stderr)
        old = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**old, m.name: r}, indent=2))  # after each module
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{'module':18} {'mutants':>8} {'killed':>8} {'share':>8}")
        for name, r in report.items():
            share = "n/a" if r["killed_share"] is None else f"{100 * r['killed_share']:.1f}%"
            print(f"{name:18} {r['mutants']:>8} {r['killed']:>8} {share:>8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
