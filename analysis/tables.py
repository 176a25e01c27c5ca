"""Recourse metrics by arm from the stored plans (the store's ``plans`` view).

Per arm (and method): number of plans, validity and plausibility (shares), mean unweighted
cost over valid plans, hap (mean where defined), mean L0 and L1 over actions and over the
profile, mean preference satisfaction and violation rate (where elicited). Definitions are
engine.metrics' (stored with every plan), so the table reads the same as the benchmarks.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

COLUMNS = ("valid", "plausible", "cost", "hap", "l0_actions", "l1_actions", "l0_profile",
           "l1_profile", "satisfaction", "violation")


def recourse_table(plans: pd.DataFrame) -> pd.DataFrame:
    """One row per (arm, method) with the metrics of the module docstring."""
    if plans.empty:
        return pd.DataFrame(columns=["arm", "method", "plans", "validity", "plausibility",
                                     "cost", "hap", *COLUMNS[4:]])
    missing = {"arm", "method", *COLUMNS} - set(plans.columns)
    if missing:
        raise ValueError(f"plans lack the columns {sorted(missing)}")
    rows = []
    for (arm, method), g in plans.groupby(["arm", "method"], sort=True, dropna=False):
        valid = g["valid"].astype(bool)
        row = {"arm": arm, "method": method, "plans": int(len(g)),
               "validity": float(valid.mean()),
               "plausibility": float(g["plausible"].astype(float).mean()),
               "cost": _mean(g.loc[valid, "cost"]), "hap": _mean(g["hap"])}
        for c in COLUMNS[4:]:
            row[c] = _mean(g[c])
        rows.append(row)
    return pd.DataFrame(rows)


def _mean(s: pd.Series) -> float:
    v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else float("nan")
