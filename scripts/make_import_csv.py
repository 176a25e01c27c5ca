"""Write a ratings CSV in the shape `recourse-study import-ratings` reads, with known truth.

    .venv/bin/python scripts/make_import_csv.py --participants 362 --plans 5 --out r.csv \
        [--seed 0] [--arms a,b] [--no-satisfaction] [--no-violation] [--truth truth.json]

Ratings come from the synthetic participants' rating model (engine.synthetic.rating_model, the
reference behaviour; analysis.simdata.simulate_import documents how l0 relates to l1);
--truth writes that behaviour's parameters, the ones an analysis should recover.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.simdata import simulate_import  # noqa: E402
from data.jsonio import write_json  # noqa: E402
from engine.synthetic.rating_model import RatingBehaviour  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--participants", type=int, default=362)
    ap.add_argument("--plans", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--arms", default="a,b", help="comma-separated; empty: no arm column")
    ap.add_argument("--no-satisfaction", action="store_true")
    ap.add_argument("--no-violation", action="store_true")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--truth", type=Path, default=None)
    args = ap.parse_args()
    if args.participants < 2 or args.plans < 1:
        ap.error("need at least 2 participants and 1 plan each")
    behaviour = RatingBehaviour.reference()
    frame = simulate_import(
        args.participants, args.plans, seed=args.seed, behaviour=behaviour,
        arms=tuple(a for a in args.arms.split(",") if a.strip()),
        satisfaction=not args.no_satisfaction, violation=not args.no_violation)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out, index=False)
    if args.truth is not None:
        write_json(args.truth, {"behaviour": dataclasses.asdict(behaviour), "seed": args.seed,
                                "participants": args.participants, "plans": args.plans})
    print(f"{len(frame)} ratings of {args.participants} participants -> {args.out}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
