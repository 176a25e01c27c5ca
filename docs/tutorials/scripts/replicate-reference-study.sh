#!/usr/bin/env bash
# Tutorial "Replicate the reference study": the car-loan study of Tominaga et al. with
# synthetic participants, analysed as the paper did.
set -euo pipefail
N=${N:-362}
OUT=${OUT:-tutorial-tominaga}
mkdir -p "$OUT"

recourse-study validate tominaga-replication
recourse-study simulate --protocol tominaga-replication --participants "$N" \
    --db "$OUT/tominaga.duckdb" --seed 1
recourse-study analyze --db "$OUT/tominaga.duckdb" --out "$OUT/report"
