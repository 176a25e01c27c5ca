"""The reference study's three findings over several seeds: `reproduce tominaga` per seed.

    python scripts/tominaga_seeds.py [--seeds 1 2 3 4 5] [--participants 362]
                                     [--keep DIR] [--out FILE.json]

Runs study_app.cli.reproduce_tominaga.run (simulate ``tominaga-replication``, the paper's
exclusion, mgcv's four GAMMs) once per seed, one after the other, and prints one row per
seed: the p values each finding rests on (finding 1: both acceptance smooths; finding 2:
both action smooths and their EDF; finding 3: the largest participant-term p over the four
models) and whether each finding holds. ``--keep`` keeps each seed's simulated study
(``DIR/seed-S.duckdb``); ``--out`` writes every seed's findings and Table S2 rows as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from analysis import table_s2

_p = table_s2.format_p  # the paper's way of printing a p value


def summary_row(seed: int, doc: dict[str, Any]) -> dict[str, Any]:
    """One seed's p values and verdicts (module docstring)."""
    by = {table_s2.model_label(m["outcome"], m["distance"]): m for m in doc["models"]}
    row: dict[str, Any] = {"seed": seed}
    for label, m in sorted(by.items()):
        row[f"{label} smooth p"] = m["smooth"]["p"]
        row[f"{label} smooth edf"] = m["smooth"]["edf"]
        row[f"{label} r.i. p"] = m["participant_intercept"]["p"]
        row[f"{label} r.s. p"] = m["participant_slope"]["p"]
    for f in doc["findings"]:
        row[f"finding {f['finding']}"] = f["holds"]
    row["mean acceptance"] = by["Model-1"]["intercept"]["estimate"]
    row["mean action"] = by["Model-3"]["intercept"]["estimate"]
    row["seconds"] = doc["seconds"]
    return row


def print_table(rows: list[dict[str, Any]]) -> None:
    print("| seed | acc L0 p | acc L1 p | act L0 p (EDF) | act L1 p (EDF) | max r.i. p | "
          "r.s. p (M1/M2/M3/M4) | F1 | F2 | F3 | mean acc / act |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    yes = {True: "holds", False: "fails", None: "-"}
    for r in rows:
        ri = max(r[f"Model-{i} r.i. p"] for i in range(1, 5))
        rs = " / ".join(_p(r[f"Model-{i} r.s. p"]) for i in range(1, 5))
        print(f"| {r['seed']} | {_p(r['Model-1 smooth p'])} | {_p(r['Model-2 smooth p'])} | "
              f"{_p(r['Model-3 smooth p'])} ({r['Model-3 smooth edf']:.2f}) | "
              f"{_p(r['Model-4 smooth p'])} ({r['Model-4 smooth edf']:.2f}) | {_p(ri)} | {rs} | "
              f"{yes[r['finding 1']]} | {yes[r['finding 2']]} | {yes[r['finding 3']]} | "
              f"{r['mean acceptance']:.2f} / {r['mean action']:.2f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--participants", type=int, default=362)
    parser.add_argument("--keep", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    from study_app.cli.reproduce_tominaga import run

    rows, docs = [], []
    for seed in args.seeds:
        db = None
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            db = args.keep / f"seed-{seed}.duckdb"
            db.unlink(missing_ok=True)
        doc = run(participants=args.participants, seed=seed, db=db)
        rows.append(summary_row(seed, doc))
        docs.append({"seed": seed, "findings": doc["findings"], "table_s2": doc["table_s2"]})
        print(f"seed {seed}: {[f['holds'] for f in doc['findings']]}", file=sys.stderr)
    print_table(rows)
    if args.out is not None:
        args.out.write_text(json.dumps({"rows": rows, "seeds": docs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
