#!/usr/bin/env bash
# R with mgcv and ordinal from Debian: the second analysis engine (analysis/mgcv.py runs
# Rscript on analysis/gamm.R), the reference study's own tools for its GAMMs (Table S2).
#
# r-base-core (Rscript), r-cran-mgcv, r-cran-ordinal (clmm, the cross-check of the ordinal
# model) and r-cran-jsonlite (the bridge's JSON). Without them `analyze` still runs the
# Bayesian models and says the mgcv part was skipped. Idempotent: does nothing when Rscript
# loads all three packages.
#
# usage: scripts/install_r.sh [STAMP]   (STAMP: a file touched when Rscript loads all three,
#        so that make skips this check next time)
set -euo pipefail

STAMP="${1:-}"
loaded() {
    echo "r: $1"
    if [ -n "$STAMP" ]; then mkdir -p "$(dirname "$STAMP")" && touch "$STAMP"; fi
}

# Prints the versions, fails when a package is missing (one start of R: make runs it once per
# virtualenv).
check() {
    command -v Rscript >/dev/null 2>&1 && Rscript --vanilla -e \
        'for (p in c("mgcv", "ordinal", "jsonlite")) if (!requireNamespace(p, quietly = TRUE)) quit(status = 1)
         cat(R.version.string, "| mgcv", format(packageVersion("mgcv")), "| ordinal", format(packageVersion("ordinal")))' \
        2>/dev/null
}

if versions="$(check)"; then
    loaded "$versions"
    exit 0
fi
status=0
bash "$(dirname "$0")/apt_install.sh" r-base-core r-cran-mgcv r-cran-ordinal r-cran-jsonlite \
    || status=$?
if [ "$status" -eq 3 ]; then
    echo "install_r: R not installed; analyze will skip its mgcv part (Table S2)" >&2
    exit 0  # the Bayesian analysis does not need R: do not block the install
elif [ "$status" -ne 0 ]; then
    exit "$status"
fi
if versions="$(check)"; then
    loaded "$versions"
else
    echo "install_r: installed R but Rscript cannot load mgcv, ordinal and jsonlite" >&2
    exit 1
fi
