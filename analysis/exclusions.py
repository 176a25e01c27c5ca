"""Exclusions: which ratings and participants the models leave out, and why.

A protocol states its exclusions (``exclusions`` block); ``analyze`` reads them from the
stored protocol and applies them here, one mechanism for every study (simulated, served or
imported):

- ``impossible_items`` (rating level, the reference study's rule, its section 4: 72
  of 1,810 ratings left out): a rating whose participant marked at least one changed item
  impossible to implement (``ratings_long.impossible`` true) is left out;
- ``failed_attention`` (participant level): every rating of a participant who answered any
  attention check wrongly (``ratings_long.attention_passed`` false; null, no check
  answered, is never excluded);
- ``fewer_plans`` (participant level): a participant who rated fewer plans than the
  protocol asks (``expected``: participant id -> plans asked);
- ``speeder`` and ``straightliner`` (participant level, only when asked:
  ``analyze --exclude speeders,straightliners``): every rating of a participant the
  data-quality flags name (data.quality; ``flagged``: participant id -> its flags).

Excluded ratings and participants stay in the database and the export; the analysis
summary counts them per reason (participants, and ratings for each rule) and per arm
(``by_arm``). An exclusion rule that removes a larger share of one arm's ratings than of
another's biases the comparison of the arms (the excluded ratings are not missing at random:
an arm whose plans change unchangeable items loses its ratings to ``impossible_items``);
``uneven`` says when the largest and the smallest arm's rates differ by more than
``UNEVEN_POINTS`` percentage points, and ``analyze`` then also fits the main model on every
rating (intention to treat) beside the per-protocol fit.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from data.columns import RATINGS_LONG

UNEVEN_POINTS = 10.0  # percentage points between the arms' exclusion rates
PARTICIPANT_RULES = ("failed_attention", "fewer_plans", "speeder", "straightliner")
FLAG_RULES = ("speeder", "straightliner")
# The ratings_long columns the rules read (data.columns).
_PID, _ATTENTION, _IMPOSSIBLE, _ARM = RATINGS_LONG.pick(
    "participant_id", "attention_passed", "impossible", "arm")


def apply_exclusions(
    ratings: pd.DataFrame, *, failed_attention: bool = False,
    expected: dict[str, int] | None = None, impossible_items: bool = False,
    flagged: dict[str, tuple[str, ...]] | None = None, flag_rules: tuple[str, ...] = (),
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """(the ratings kept, {rules, counts (participants per participant rule; the flag
    rules only when asked), ratings_excluded (ratings per rule, each counted under the
    first rule that drops it),
    n_ratings_before, n_ratings_kept, excluded: [{participant_id, reason}]})."""
    reasons: dict[str, str] = {}
    pid = ratings[_PID].astype(str)
    if failed_attention and _ATTENTION in ratings:
        failed = ratings[_ATTENTION].eq(False)  # null (no check answered) stays
        for p in pid[failed].unique():
            reasons.setdefault(p, "failed_attention")
    if expected is not None:
        rated = ratings.groupby(pid).size()
        for p, n in rated.items():
            if n < expected.get(str(p), 0):
                reasons.setdefault(str(p), "fewer_plans")
    rated = set(pid)
    for rule in FLAG_RULES:
        if rule in flag_rules:
            for p in sorted(p for p, flags in (flagged or {}).items() if rule in flags):
                if p in rated:
                    reasons.setdefault(p, rule)
    by_person = pid.map(reasons)
    rules = [r for r in PARTICIPANT_RULES if r not in FLAG_RULES or r in flag_rules]
    dropped = {r: int((by_person == r).sum()) for r in rules}
    keep = by_person.isna()
    impossible = (ratings[_IMPOSSIBLE].fillna(False).astype(bool) if _IMPOSSIBLE in ratings
                  else pd.Series(False, index=ratings.index))
    dropped["impossible_items"] = int((keep & impossible).sum()) if impossible_items else 0
    if impossible_items:
        keep &= ~impossible
    counts = {r: sum(1 for v in reasons.values() if v == r) for r in rules}
    return ratings[keep].copy(), {
        "rules": {"impossible_items": impossible_items, "failed_attention": failed_attention,
                  "fewer_plans": expected is not None,
                  **{rule: rule in flag_rules for rule in FLAG_RULES}},
        "counts": counts,
        "ratings_excluded": dropped,
        "n_ratings_before": int(len(ratings)),
        "n_ratings_kept": int(keep.sum()),
        "excluded": [{"participant_id": p, "reason": r} for p, r in sorted(reasons.items())],
    }


def by_arm(ratings: pd.DataFrame, kept: pd.DataFrame) -> list[dict[str, Any]]:
    """Per arm of ``ratings`` (all of a study's) with ``kept`` (the ones ``apply_exclusions``
    kept): [{arm, ratings, excluded, rate (excluded / ratings, in %), participants,
    participants_excluded (with no rating left)}]."""
    out = []
    arms = ratings[_ARM].astype(str)
    kept_arms = kept[_ARM].astype(str)
    for arm in sorted(arms.unique()):
        mine, left = ratings[arms == arm], kept[kept_arms == arm]
        n, k = len(mine), len(left)
        people = set(mine[_PID].astype(str))
        out.append({"arm": arm, "ratings": n, "excluded": n - k,
                    "rate": round(100.0 * (n - k) / n, 1) if n else 0.0,
                    "participants": len(people),
                    "participants_excluded": len(people - set(left[_PID].astype(str)))})
    return out


def uneven(rows: list[dict[str, Any]], points: float = UNEVEN_POINTS) -> bool:
    """True when two arms' exclusion rates (``by_arm``) differ by more than ``points``."""
    rates = [r["rate"] for r in rows if r["ratings"]]
    return len(rates) > 1 and max(rates) - min(rates) > points
