#!/usr/bin/env bash
# A BLAS PyTensor can link (PyMC's own NUTS sampler compiles its C code against it).
#
# pip's PyTensor finds no BLAS: NumPy's and SciPy's wheels bundle OpenBLAS only under
# renamed symbols (scipy_dgemm_, ...), which PyTensor's C code cannot call, so it warns
# "could not link to a BLAS installation" and runs its matrix products through NumPy
# instead of its C BLAS ops (README: what that costs our models). Debian's OpenBLAS
# (libopenblas-dev) plus the Fortran runtime's link library (libgfortran-<gcc>-dev) is what
# PyTensor's own detection looks for (-lopenblas -lgfortran -lgomp); nothing of ours has to
# be configured. Idempotent: does nothing when PyTensor already links a BLAS.
#
# usage: scripts/install_blas.sh PYTHON [STAMP]   (the virtualenv's python; STAMP: a file
#        touched when PyTensor links a BLAS, so that make skips this check next time)
set -euo pipefail

PY="${1:?usage: install_blas.sh PYTHON [STAMP]}"
STAMP="${2:-}"
linked() { echo "blas: PyTensor links $1"; if [ -n "$STAMP" ]; then touch "$STAMP"; fi; }
# Prints the link flags, fails without them; -W error: PyTensor's "could not link" warning
# becomes a failure too. One import of PyTensor (seconds): make runs it once per virtualenv.
check() { "$PY" -W error -c "import pytensor, sys; f = pytensor.config.blas__ldflags; print(f); sys.exit(0 if f else 1)" 2>/dev/null; }

if flags="$(check)"; then
    linked "$flags"
    exit 0
fi
if [ -z "$("$PY" -c "import pytensor; print(pytensor.config.cxx)" 2>/dev/null)" ]; then
    echo "blas: no C++ compiler, so PyTensor compiles nothing and links no BLAS" >&2
    exit 0
fi

GCC_MAJOR="$(gcc -dumpversion 2>/dev/null | cut -d. -f1 || true)"
PACKAGES=(libopenblas-dev)
if [ -n "$GCC_MAJOR" ]; then
    PACKAGES+=("libgfortran-${GCC_MAJOR}-dev")
fi
status=0
bash "$(dirname "$0")/apt_install.sh" "${PACKAGES[@]}" || status=$?
if [ "$status" -eq 3 ]; then
    echo "install_blas: PyTensor will warn that it links no BLAS; continuing" >&2
    exit 0  # only speed depends on it: do not block the install
elif [ "$status" -ne 0 ]; then
    exit "$status"
fi
if flags="$(check)"; then
    linked "$flags"
else
    echo "install_blas: installed ${PACKAGES[*]} but PyTensor still finds no BLAS" >&2
    exit 1
fi
