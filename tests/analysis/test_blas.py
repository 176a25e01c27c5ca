"""PyTensor links a BLAS (make install's scripts/install_blas.sh provides Debian's OpenBLAS):
without it PyMC's sampler warns "could not link to a BLAS installation" and runs slowly."""

from __future__ import annotations

import subprocess
import sys


def test_pytensor_links_a_blas_without_warning():
    r = subprocess.run(
        [sys.executable, "-W", "error", "-c",
         "import pytensor; print(pytensor.config.blas__ldflags)"],
        capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "BLAS" not in r.stderr, r.stderr
    assert "-l" in r.stdout, f"PyTensor found no BLAS: {r.stdout!r} (run `make install`)"
