"""The long parameter-recovery study: >= 20 simulated studies of the reference size.

    .venv/bin/python scripts/recovery_study.py [--studies 20] [--draws 1000] [--json]
        [--json-file FILE]

Prints the coverage of every check (analysis.recovery); --json prints the whole result (all
rows) as one JSON object on stdout instead, --json-file writes it (progress: stderr).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.recovery import RecoveryConfig, recovery_study  # noqa: E402
from data.jsonio import dumps, write_json  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--studies", type=int, default=20)
    ap.add_argument("--participants", type=int, default=362)
    ap.add_argument("--plans", type=int, default=5)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--tune", type=int, default=None)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    ap.add_argument("--json-file", type=Path, default=None, help="also write it here")
    args = ap.parse_args()
    if min(args.studies, args.participants, args.plans, args.draws, args.chains, args.tune or 1) < 1:
        ap.error("every count must be >= 1")
    config = RecoveryConfig(args.studies, args.participants, args.plans, args.draws, args.tune,
                            args.chains, "nutpie", args.seed)

    def progress(s: int, rows: list) -> None:
        done = [r for r in rows if r["study"] == args.seed + s]
        failed = [f"{r['outcome']}:{r['check']}" for r in done if not r["passed"]]
        print(f"study {s + 1}/{args.studies}: missed {failed or 'nothing'}", file=sys.stderr,
              flush=True)

    result = recovery_study(config, on_study=progress)
    if args.json_file is not None:
        write_json(args.json_file, result)
    if args.json:
        print(dumps(result))
        return
    for key, value in result["coverage"].items():
        print(f"{key:32s} {value:.2f}")


if __name__ == "__main__":
    main()
