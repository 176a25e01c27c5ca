"""Parallel first imports on a new machine: three processes import ``analysis`` and then ArviZ
at the same moment with an empty user cache, and all three succeed.

ArviZ writes its daily stamp through a temporary file of a fixed name and renames it; without
analysis.arviz_stamp two of three such processes fail with ``FileNotFoundError``. Each
process runs under a wrapper that holds every rename into the user cache until all three
processes have written their file (or a minute passed), so the writes and renames of the
processes interleave every time instead of by chance.
"""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path

import matplotlib

from analysis.arviz_stamp import STAMP_NAME, write_arviz_stamp

REPO = Path(__file__).resolve().parents[2]
PROCESSES = 3

# argv: the rendezvous folder, the user cache, the number of processes. ``import arviz``
# stands for the modules that import it (analysis.models imports PyMC, which imports ArviZ)
# without compiling PyTensor's C modules in an empty home.
SLOWED_IMPORT = r"""
import os, sys, time

rendezvous, cache, processes = sys.argv[1], sys.argv[2], int(sys.argv[3])
replace = os.replace

def held_replace(src, dst, *args, **kwargs):
    if os.path.abspath(os.fspath(dst)).startswith(cache + os.sep):
        open(os.path.join(rendezvous, str(os.getpid())), "w").close()
        deadline = time.monotonic() + 60
        while len(os.listdir(rendezvous)) < processes and time.monotonic() < deadline:
            time.sleep(0.02)
    return replace(src, dst, *args, **kwargs)

os.replace = held_replace
import analysis
import arviz
"""


def test_parallel_first_imports_on_an_empty_cache_all_succeed(tmp_path: Path) -> None:
    home, cache, rendezvous = tmp_path / "home", tmp_path / "cache", tmp_path / "rendezvous"
    for folder in (home, cache, rendezvous):
        folder.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(cache),
           "PYTHONPATH": str(REPO)}
    # Matplotlib's font list is built once per cache under its own lock file: the user's is
    # reused, so that each process does not spend a second and a half rebuilding it
    env["MPLCONFIGDIR"] = matplotlib.get_cachedir()
    today = datetime.date.today().isoformat()
    procs = [subprocess.Popen([sys.executable, "-c", SLOWED_IMPORT, str(rendezvous), str(cache),
                               str(PROCESSES)],
                              cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
             for _ in range(PROCESSES)]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    failed = [err for code, err in results if code != 0]
    assert failed == [], "\n\n".join(failed)
    # every process wrote (the rendezvous saw three), and no temporary file is left behind
    assert len(os.listdir(rendezvous)) == PROCESSES
    arviz_dir = cache / "arviz"
    assert sorted(os.listdir(arviz_dir)) == [STAMP_NAME]
    assert (arviz_dir / STAMP_NAME).read_text().strip() == today


def test_the_stamp_is_written_once_a_day(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delitem(sys.modules, "arviz", raising=False)
    stamp = tmp_path / "arviz" / STAMP_NAME
    assert write_arviz_stamp(datetime.date(2026, 1, 2)) == stamp
    assert stamp.read_text() == "2026-01-02"
    stamp.write_text("2026-01-01")  # yesterday's: today's replaces it
    assert write_arviz_stamp(datetime.date(2026, 1, 2)) == stamp
    assert stamp.read_text() == "2026-01-02"
    assert sorted(os.listdir(stamp.parent)) == [STAMP_NAME]
