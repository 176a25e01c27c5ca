#!/usr/bin/env bash
# Tutorial "Bring your own data": a scenario file over a CSV, trained and benchmarked.
set -euo pipefail
SCENARIO=${SCENARIO:-docs/examples/my-applicants.yaml}
N=${N:-100}

# 1. Check the file (every problem by its path) and list it beside the shipped scenarios.
recourse-study scenarios "$SCENARIO"

# 2. Train its decision model, causal flow and iCARMA (--quick: a smoke run).
recourse-study train --scenario "$SCENARIO" --quick

# 3. Plans for its first N rejected applicants, every metric per method.
recourse-study benchmark recourse --scenario "$SCENARIO" --methods oracle,wachter \
    --icarma-training fast --n "$N" --speedup-sample 0
