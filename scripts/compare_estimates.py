"""Are two analyses of one study the same up to Monte Carlo error? (analysis.same_estimates)

    python scripts/compare_estimates.py BEFORE/summary.json AFTER/summary.json [--json]

Run ``analyze`` on one study with the code before and after a change (the same seed and
sampler settings), then compare the two summaries: per model the largest difference of a
posterior mean in Monte Carlo standard errors, the LOO elpd difference in its standard
errors, parameter recovery's verdicts and R's Table S2. Exit 0 when everything is the same
within Monte Carlo error, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from analysis.same_estimates import Z_MAX, compare_summaries


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--json", action="store_true", help="Print the comparison as JSON.")
    args = parser.parse_args()
    found = compare_summaries(*(json.loads(p.read_text(encoding="utf-8"))
                                for p in (args.before, args.after)))
    if args.json:
        print(json.dumps(found))
    else:
        for m in found["models"]:
            elpd = "" if m["elpd_diff_in_se"] is None else f", elpd {m['elpd_diff_in_se']:.3f} se"
            print(f"{m['name']}: {m['means']} means, max |z| {m['max_abs_z']:.2f} "
                  f"({m['worst']}){elpd}{'' if m['same'] else f'  DIFFERS (|z| > {Z_MAX})'}")
        print(f"missing: {found['missing'] or 'none'}; recovery verdicts the same: "
              f"{found['recovery_same']}; mgcv max relative difference: "
              f"{found['mgcv_max_rel_diff']}")
        print("same within Monte Carlo error" if found["same"] else "DIFFERENT")
    return 0 if found["same"] else 1


if __name__ == "__main__":
    sys.exit(main())
