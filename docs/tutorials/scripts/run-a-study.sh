#!/usr/bin/env bash
# Tutorial "Run a study": check, preview, pilot, analyse and export a protocol.
# N (participants) and OUT (the working folder) may be set from outside.
set -euo pipefail
N=${N:-60}
OUT=${OUT:-tutorial-study}
PROTOCOL=${PROTOCOL:-docs/examples/pilot-falling-ratings.yaml}
mkdir -p "$OUT"

# 1. Every problem of the file at once, or the resolved protocol.
recourse-study validate "$PROTOCOL"

# 2. A pilot with synthetic participants (their hidden behaviour: the protocol's simulation block).
recourse-study simulate --protocol "$PROTOCOL" --participants "$N" \
    --db "$OUT/pilot.duckdb" --seed 0

# 3. The analysis: models, diagnostics, "truth vs recovered" and OUT/report/report.html.
recourse-study analyze --db "$OUT/pilot.duckdb" --out "$OUT/report"

# 4. The data as CSV with its codebook.
recourse-study export --db "$OUT/pilot.duckdb" --format csv --out "$OUT/export"
