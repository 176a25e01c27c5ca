"""Write engine/scenarios/data/loan-data.csv: the samples of the `loan-data` scenario.

10,000 draws of the exact Loan SCM (engine/scenarios/loan.py) at seed 2026, in display units
(gender as female/male, age and education in years, money in dollars, the duration in
months), each number rounded to 8 significant digits; the label column ``approved`` is the
Loan world's deterministic label rule, 1[l(x) >= 0], computed on the rounded values (so the
file's labels are exactly the exact world's). Run `python scripts/make_loan_data.py` from the
repository root; it rewrites the file byte for byte (tests check that).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

N, SEED = 10_000, 2026
OUT = ROOT / "engine" / "scenarios" / "data" / "loan-data.csv"


def loan_data_csv() -> str:
    """The file's text (module docstring)."""
    import numpy as np

    from engine.scenarios import get_scenario

    loan = get_scenario("loan")
    scm = loan.require_scm("loan-data")
    x = scm.sample(N, seed=SEED).numpy()
    shown = np.empty_like(x)
    for j, f in enumerate(loan.features):
        shown[:, j] = x[:, j] if f.levels else [float(f"{v:.8g}") for v in
                                                f.display.to_display(x[:, j])]
    back = np.column_stack([shown[:, j] if f.levels else f.display.from_display(shown[:, j])
                            for j, f in enumerate(loan.features)])
    approved = (scm.label_logit(back) >= 0).numpy().astype(int)
    lines = [",".join([*loan.feature_names, "approved"])]
    for row, y in zip(shown, approved, strict=True):
        cells = [f.levels[int(v)] if f.levels else f"{v:.8g}"
                 for f, v in zip(loan.features, row, strict=True)]
        lines.append(",".join([*cells, str(int(y))]))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    OUT.write_text(loan_data_csv())
    print(f"wrote {OUT.relative_to(ROOT)} ({N:,} rows, seed {SEED})")
