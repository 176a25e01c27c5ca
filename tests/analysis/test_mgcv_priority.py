"""R runs below the sampler's CPU priority (analysis.mgcv.NICENESS): analyze fits R's GAMMs
while the Bayesian models sample, and the sampler, not R, is what the analysis waits for.
And R ends with the process that started it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from analysis import mgcv


def test_r_runs_below_the_samplers_cpu_priority():
    status = mgcv.r_status()
    assert status["available"], f"{status['reason']}: run `make install` (scripts/install_r.sh)"
    # field 19 of /proc/<pid>/stat: the process's niceness (Linux)
    code = "cat(strsplit(readLines('/proc/self/stat'), ' ')[[1]][19])"
    r = subprocess.run(mgcv.r_command(["--vanilla", "-e", code]), capture_output=True,
                       text=True, check=True)
    # nice adds to the caller's niceness (a test run may itself be niced), up to 19
    assert mgcv.NICENESS == 10
    assert int(r.stdout) == min(19, os.nice(0) + mgcv.NICENESS)


def test_r_ends_with_the_process_that_started_it(tmp_path):
    """A killed analysis (SIGKILL: no cleanup of its own runs) leaves no R behind."""
    status = mgcv.r_status()
    assert status["available"], f"{status['reason']}: run `make install` (scripts/install_r.sh)"
    pid_file = tmp_path / "r.pid"
    code = f"writeLines(as.character(Sys.getpid()), '{pid_file}'); Sys.sleep(120)"
    starter = ("import subprocess, sys\n"
               "from analysis import mgcv\n"
               f"subprocess.run(mgcv.r_command(['--vanilla', '-e', {code!r}]))\n")
    parent = subprocess.Popen([sys.executable, "-c", starter])
    try:
        deadline = time.monotonic() + 60
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert time.monotonic() < deadline, "R did not start"
            time.sleep(0.1)
        r_pid = int(pid_file.read_text())
        assert _alive(r_pid)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 30
        while _alive(r_pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(r_pid), "R kept running after the process that started it died"
    finally:
        parent.kill()


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"
