"""Are two analyses of one study the same up to Monte Carlo error? (analysis.same_estimates)

    python scripts/compare_estimates.py BEFORE/summary.json AFTER/summary.json [--json]
    python scripts/compare_estimates.py BEFORE/summary.json AFTER/summary.json --exact

Run ``analyze`` on one study with the code before and after a change (the same seed and
sampler settings), then compare the two summaries: per model the largest difference of a
posterior mean in Monte Carlo standard errors, the LOO elpd difference in its standard
errors, parameter recovery's verdicts and R's Table S2. Exit 0 when everything is the same
within Monte Carlo error, 1 otherwise. ``--exact``: bit-identical instead (a reshaping of the
code that changes no computation): every value of the two summaries but the run's times,
fingerprints and report outcome, listed where they differ; exit 0 for no difference.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from analysis.same_estimates import Z_MAX, compare_summaries, exact_differences


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--json", action="store_true", help="Print the comparison as JSON.")
    parser.add_argument("--exact", action="store_true",
                        help="Bit-identical values instead of Monte Carlo error.")
    args = parser.parse_args()
    summaries = [json.loads(p.read_text(encoding="utf-8")) for p in (args.before, args.after)]
    if args.exact:
        differ = exact_differences(*summaries)
        values = sum(1 for _ in _leaves(summaries[0]))
        print(json.dumps({"values": values, "differences": len(differ), "paths": differ})
              if args.json else "\n".join([*differ, f"{len(differ)} differences in {values} "
                                                      "values"]))
        return 0 if not differ else 1
    found = compare_summaries(*summaries)
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


def _leaves(value: object):  # noqa: ANN202 - a generator of the summary's scalars
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


if __name__ == "__main__":
    sys.exit(main())
