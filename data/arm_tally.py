"""The reads behind arm quotas and session time limits (protocols.definition.quotas).

- ``arm_tally``: per arm, the participants who count towards its target under a rule
  (``complete``; ``complete_unflagged``: complete and no data-quality flag, data.quality;
  ``not_excluded``: complete and not left out as a whole by the protocol's exclusions) and
  those still in progress (status active and started after ``started_after``: the others
  are past the time limit and hold no place);
- ``expired``: the active participants started at or before a time, with their step (the guard
  of the update that times them out).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from data.quality import participant_flags
from data.store import Store, Transaction

RULES = ("complete", "complete_unflagged", "not_excluded")


def arm_tally(
    store: Store,
    study_id: str,
    rule: str,
    *,
    started_after: datetime | None = None,
    exclude_failed_attention: bool = True,
    plans_needed: Mapping[str, int] | None = None,
) -> dict[str, dict[str, int]]:
    """{arm: {"counted", "in_progress"}} for every arm that has a participant (module
    docstring). ``exclude_failed_attention`` and ``plans_needed`` (arm -> the plans a
    participant must have rated; None: no such exclusion) define ``not_excluded``."""
    if rule not in RULES:
        raise ValueError(f"unknown counting rule {rule!r}; expected one of {', '.join(RULES)}")
    rows = store.query(
        "SELECT participant_id, arm, status, created_at FROM participants "
        "WHERE study_id = ? AND arm IS NOT NULL AND status IN ('active', 'complete')",
        [study_id])
    left_out = _left_out(store, study_id, rule, exclude_failed_attention, plans_needed)
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        arm = out.setdefault(r["arm"], {"counted": 0, "in_progress": 0})
        if r["status"] == "complete":
            arm["counted"] += r["participant_id"] not in left_out
        elif started_after is None or r["created_at"] > started_after:
            arm["in_progress"] += 1
    return out


def _left_out(store: Store, study_id: str, rule: str, exclude_failed_attention: bool,
              plans_needed: Mapping[str, int] | None) -> set[str]:
    """The complete participants the rule does not count."""
    if rule == "complete":
        return set()
    if rule == "complete_unflagged":
        flags = participant_flags(store, study_id)
        return set(flags.loc[flags["flagged"].astype(bool), "participant_id"])
    out: set[str] = set()
    if exclude_failed_attention:
        out |= {r["participant_id"] for r in store.query(
            "SELECT DISTINCT participant_id FROM responses WHERE study_id = ? AND "
            "kind = 'attention' AND NOT correct", [study_id])}
    if plans_needed:
        for r in store.query(
                "SELECT p.participant_id, p.arm, count(r.plan_id) AS rated FROM participants p "
                "LEFT JOIN ratings r ON r.study_id = p.study_id AND "
                "r.participant_id = p.participant_id WHERE p.study_id = ? AND "
                "p.status = 'complete' GROUP BY p.participant_id, p.arm", [study_id]):
            if int(r["rated"]) < plans_needed.get(r["arm"], 0):
                out.add(r["participant_id"])
    return out


def expired(tx: Transaction, study_id: str, started_before: datetime) -> list[dict[str, Any]]:
    """(participant_id, step) of the study's active participants who started at or before
    ``started_before``."""
    return tx.query(
        "SELECT participant_id, step FROM participants WHERE study_id = ? AND "
        "status = 'active' AND created_at <= ? ORDER BY seq", [study_id, started_before])
