"""R runs below the sampler's CPU priority (analysis.mgcv.NICENESS): analyze fits R's GAMMs
while the Bayesian models sample, and the sampler, not R, is what the analysis waits for."""

from __future__ import annotations

import os
import subprocess

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
