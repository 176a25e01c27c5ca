"""Exclusions: which participants' ratings the models leave out, and why.

A protocol states its exclusions (``exclusions`` block); ``analyze`` reads them from the
stored protocol and applies them here, one mechanism for every study (simulated, served or
imported): a participant is excluded for ``failed_attention`` when any attention check they
answered was wrong (``ratings_long.attention_passed`` false; null, no check answered, is
never excluded) and for ``fewer_plans`` when they rated fewer plans than the protocol asks
(``expected``: participant id -> plans asked). Excluded participants stay in the database
and the export; the analysis summary lists them with their reason.
"""

from __future__ import annotations

from typing import Any

import pandas as pd


def apply_exclusions(
    ratings: pd.DataFrame, *, failed_attention: bool = False,
    expected: dict[str, int] | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """(the ratings kept, {rules, counts per reason, excluded: [{participant_id, reason}]})."""
    reasons: dict[str, str] = {}
    if failed_attention and "attention_passed" in ratings:
        failed = ratings["attention_passed"].eq(False)  # null (no check answered) stays
        for pid in ratings.loc[failed, "participant_id"].astype(str).unique():
            reasons.setdefault(pid, "failed_attention")
    if expected is not None:
        rated = ratings.groupby(ratings["participant_id"].astype(str)).size()
        for pid, n in rated.items():
            if n < expected.get(str(pid), 0):
                reasons.setdefault(str(pid), "fewer_plans")
    keep = ~ratings["participant_id"].astype(str).isin(reasons)
    counts = {r: sum(1 for v in reasons.values() if v == r)
              for r in ("failed_attention", "fewer_plans")}
    return ratings[keep].copy(), {
        "rules": {"failed_attention": failed_attention, "fewer_plans": expected is not None},
        "counts": counts,
        "excluded": [{"participant_id": p, "reason": r} for p, r in sorted(reasons.items())],
    }
