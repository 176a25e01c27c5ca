"""Recourse metrics by arm, and what a study recorded at all.

``recourse_table``: per arm (and method), the number of plans, validity and plausibility
(shares of the plans where they were recorded), mean unweighted cost over plans not known
to be invalid, hap (mean where defined), mean L0 and L1 over actions and over the profile,
mean preference satisfaction and violation rate. Definitions are engine.metrics' (stored
with every plan), so the table reads the same as the benchmarks. A metric a study did not
record (imported plans carry no validity, plausibility, cost or hap) is NaN (null in JSON,
"not recorded" in the report).

``recorded``: for each optional field, the number of rows that hold it (0: not recorded);
``participants_by_kind``: participants with ratings by source (human, synthetic, imported).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from data.columns import DISTANCE_COLUMNS, PLANS, PREFERENCE_COLUMNS, RATINGS_LONG

# The plans columns the table reads (data.columns): by arm and method, the first four of
# COLUMNS summarised in their own ways (module docstring), the rest by their means.
_ARM, _METHOD = PLANS.pick("arm", "method")
_VALID, _PLAUSIBLE, _COST, _HAP = PLANS.pick("valid", "plausible", "cost", "hap")
COLUMNS = (_VALID, _PLAUSIBLE, _COST, _HAP, *DISTANCE_COLUMNS, *PREFERENCE_COLUMNS)
TABLE_COLUMNS = ("arm", "method", "plans", "validity", "plausibility", "cost", "hap",
                 *COLUMNS[4:])
# field -> (frame, column) it is read from ("plans": the plans table, "ratings": the
# ratings_long view); "method" also needs a value other than "imported"
FIELDS: dict[str, tuple[str, str]] = {
    "validity": ("plans", _VALID), "plausibility": ("plans", _PLAUSIBLE),
    "cost": ("plans", _COST), "hap": ("plans", _HAP), "method": ("plans", _METHOD),
    **{name: ("ratings", name) for name in RATINGS_LONG.pick("arm", *PREFERENCE_COLUMNS)},
}
IMPORTED_METHOD = "imported"


def recourse_table(plans: pd.DataFrame) -> pd.DataFrame:
    """One row per (arm, method) with the metrics of the module docstring.

    >>> import pandas as pd
    >>> from analysis import recourse_table
    >>> plans = pd.DataFrame({"arm": ["a", "a", "b"], "method": ["oracle"] * 2 + ["icarma"],
    ...                       "valid": [True, False, True], "cost": [0.2, None, 0.4]})
    >>> table = recourse_table(plans)
    >>> table[["arm", "plans", "validity", "cost"]].to_dict("list")   # cost over valid plans
    {'arm': ['a', 'b'], 'plans': [2, 1], 'validity': [0.5, 1.0], 'cost': [0.2, 0.4]}
    """
    if plans.empty:
        return pd.DataFrame(columns=list(TABLE_COLUMNS))
    plans = plans.copy()
    for c in (_ARM, _METHOD, *COLUMNS):
        if c not in plans:
            plans[c] = np.nan
    rows = []
    for (arm, method), g in plans.groupby([_ARM, _METHOD], sort=True, dropna=False):
        valid = _numbers(g[_VALID])
        row = {"arm": _label(arm), "method": _label(method), "plans": int(len(g)),
               "validity": _mean(valid), "plausibility": _mean(_numbers(g[_PLAUSIBLE])),
               "cost": _mean(_numbers(g[_COST])[valid != 0]), "hap": _mean(_numbers(g[_HAP]))}
        for c in COLUMNS[4:]:
            row[c] = _mean(_numbers(g[c]))
        rows.append(row)
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


def recorded(ratings: pd.DataFrame, plans: pd.DataFrame) -> dict[str, int]:
    """Rows holding each optional field (module docstring); 0 means not recorded."""
    frames = {"ratings": ratings, "plans": plans}
    out = {}
    for name, (frame, column) in FIELDS.items():
        df = frames[frame]
        if column not in df:
            out[name] = 0
            continue
        values = df[column]
        held = values.notna()
        if name == "method":
            held &= values.astype(str) != IMPORTED_METHOD
        out[name] = int(held.sum())
    return out


def participants_by_kind(ratings: pd.DataFrame) -> dict[str, int]:
    """Participants with at least one rating, by source."""
    source, pid = RATINGS_LONG.pick("source", "participant_id")
    if source not in ratings or ratings.empty:
        return {}
    counts = ratings.groupby(ratings[source].fillna("unknown"))[pid].nunique()
    return {str(k): int(v) for k, v in counts.items()}


def _label(v: object) -> object:
    return None if v is None or (isinstance(v, float) and np.isnan(v)) else v


def _numbers(s: pd.Series) -> np.ndarray:
    return pd.to_numeric(s.astype(object).where(s.notna(), np.nan),
                         errors="coerce").to_numpy(dtype=float)


def _mean(v: np.ndarray) -> float:
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else float("nan")
