#!/usr/bin/env bash
# Tutorial "From a pilot to a data package": pilot, power from the pilot, preregistration,
# the study, its analysis against the preregistration, and a Psych-DS package.
# N (participants of the pilot and of the study), OUT (the working folder), SIZES and SIMS
# (the power analysis's sample sizes and simulated studies per size) may be set from outside.
set -euo pipefail
N=${N:-40}
OUT=${OUT:-tutorial-package}
SIZES=${SIZES:-60,120,240}
SIMS=${SIMS:-100}
PROTOCOL=${PROTOCOL:-docs/examples/pilot-power.yaml}
mkdir -p "$OUT"

# 1. The pilot (here synthetic participants; with people: serve the protocol to a few).
recourse-study simulate --protocol "$PROTOCOL" --participants "$N" \
    --db "$OUT/pilot.duckdb" --seed 1

# 2. How many participants, given what the pilot showed: each simulated study rates as its
#    own draw of the pilot's posterior.
recourse-study power --from "$OUT/pilot.duckdb" --participants "$SIZES" --sims "$SIMS" \
    --effect action.distance --out "$OUT/power"

# 3. The preregistration, with the power analysis as the sample size's justification.
recourse-study prereg --protocol "$PROTOCOL" --power "$OUT/power/power.json" \
    --no-gaussian --out "$OUT/prereg"

# 4. The study. With people: `recourse-study serve --protocol "$PROTOCOL" --db study.duckdb`;
#    here synthetic participants stand in, one in ten of them a speeder.
recourse-study simulate --protocol "$PROTOCOL" --participants "$N" \
    --db "$OUT/study.duckdb" --seed 2 --speeders 0.1

# 5. The analysis against the preregistration: leaving out the speeders was not planned, so
#    the report lists it as a deviation.
recourse-study analyze --db "$OUT/study.duckdb" --out "$OUT/report" --no-gaussian \
    --mgcv off --exclude speeders --prereg "$OUT/prereg/prereg.json"

# 6. The data package another lab re-analyses (analysis/primary.R refits the main model).
recourse-study export --db "$OUT/study.duckdb" --format psych-ds --out "$OUT/package"
