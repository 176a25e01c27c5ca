"""The dashboard's headline numbers, arm counts and HARE's answers, each defined once.

Headline numbers (``HEADLINE``) partition the visits by the participant's ``status`` and
whether they consented (an arm is assigned at consent; codebook: ``participants.arm``,
``participants.status``)::

    visits    = consented + declined + not yet consented + ended before consent
    consented = in progress + completed + ended after consent

where "ended after consent" is every other end state of those who consented (screened out
after consent, own profile approved, no plans, withdrawn, ...) and "ended before consent" every end
state other than declined of those who did not (screened out before consent, ...);
``ended_after`` and ``ended_before`` list them by status. So "in progress" never
counts a visit that has not consented, and the numbers always add up (``check_headline``).

Every function takes a ``Store``, a study id and ``source`` ('web', 'synthetic',
'imported' or None = all), like ``data.dashboard_queries``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from data.dashboard_queries import _where
from data.store import Store

# name -> (label, definition in the codebook's words)
HEADLINE: dict[str, tuple[str, str]] = {
    "visits": ("Visits", "links opened that started a participant (every participants row), "
               "consenting or not"),
    "consented": ("Consented", "visits that agreed on the consent page (an arm assigned; "
                  "imported participants count as consented)"),
    "in_progress": ("In progress", "consented and not ended (status active)"),
    "completed": ("Completed", "consented and reached the debrief (status complete)"),
    "ended_after_consent": ("Ended after consent", "consented, then ended another way "
                            "(screened out, own profile approved, no plans, ...)"),
    "screened_out": ("Screened out", "ended by a screening question (status screened_out), "
                     "before or after consent"),
    "withdrawn": ("Withdrawn", "withdrew, their answers deleted (status withdrawn), before "
                  "or after consent"),
    "declined": ("Declined", "answered \"I do not agree\" on the consent page (status "
                 "declined)"),
    "not_consented_yet": ("Not yet consented", "visits still on the consent page or before it "
                          "(status active, no arm)"),
}


def headline(store: Store, study_id: str, source: str | None = None) -> dict[str, Any]:
    """The numbers of ``HEADLINE``, ``ended_before_consent`` (their sum) and
    ``ended_before`` / ``ended_after``: {status: participants}."""
    where, params = _where(study_id, source)
    rows = store.query(
        f"""SELECT status, arm IS NOT NULL AS consented, count(*) AS n FROM participants
            WHERE {where} GROUP BY ALL""", params)
    out: dict[str, Any] = {name: 0 for name in HEADLINE}
    ended: dict[str, int] = {}
    before: dict[str, int] = {}
    for r in rows:
        n, status, consented = int(r["n"]), r["status"], bool(r["consented"])
        out["visits"] += n
        if status in ("screened_out", "withdrawn"):
            out[status] += n
        if not consented:
            if status == "declined":
                out["declined"] += n
            elif status == "active":
                out["not_consented_yet"] += n
            else:
                before[status] = before.get(status, 0) + n
            continue
        out["consented"] += n
        if status == "active":
            out["in_progress"] += n
        elif status == "complete":
            out["completed"] += n
        else:
            out["ended_after_consent"] += n
            ended[status] = ended.get(status, 0) + n
    out["ended_after"], out["ended_before"] = ended, before
    out["ended_before_consent"] = sum(before.values())
    return out


def check_headline(h: dict[str, Any]) -> None:
    """Raise ValueError unless the headline numbers add up (module docstring)."""
    if h["consented"] != h["in_progress"] + h["completed"] + h["ended_after_consent"]:
        raise ValueError(f"consented does not add up: {h}")
    if h["visits"] != (h["consented"] + h["declined"] + h["not_consented_yet"]
                       + h["ended_before_consent"]):
        raise ValueError(f"visits do not add up: {h}")


def arm_counts(store: Store, study_id: str, source: str | None = None) -> pd.DataFrame:
    """arm, consented (participants assigned to it), in_progress, completed, timed_out
    (past the protocol's time limit)."""
    where, params = _where(study_id, source)
    return store.frame(
        f"""SELECT arm, count(*) AS consented,
                   count(*) FILTER (WHERE status = 'active') AS in_progress,
                   count(*) FILTER (WHERE status = 'complete') AS completed,
                   count(*) FILTER (WHERE status = 'timed_out') AS timed_out
            FROM participants WHERE {where} AND arm IS NOT NULL
            GROUP BY arm ORDER BY arm""", params)


def hare_answers(store: Store, study_id: str, source: str | None = None) -> pd.DataFrame:
    """HARE's questions in the order asked: page_id, kind ('hare_choice' | 'hare_accept'),
    answers, chose_a (share of pairwise answers preferring Plan A, the first shown),
    accepted (accept answers that accepted the plan), accept_rate (accepted / answers)."""
    where, params = _where(study_id, source)
    return store.frame(
        f"""SELECT page_id, kind, count(*)::INTEGER AS answers,
                   avg(CASE WHEN kind = 'hare_choice' THEN
                       CASE WHEN json_extract(answer_json, '$.choice')::INTEGER = 0
                            THEN 1.0 ELSE 0.0 END END) AS chose_a,
                   sum(CASE WHEN kind = 'hare_accept' AND
                       json_extract(answer_json, '$.accept')::BOOLEAN THEN 1 ELSE 0 END
                       )::INTEGER AS accepted,
                   avg(CASE WHEN kind = 'hare_accept' THEN
                       CASE WHEN json_extract(answer_json, '$.accept')::BOOLEAN
                            THEN 1.0 ELSE 0.0 END END) AS accept_rate
            FROM responses WHERE {where} AND kind IN ('hare_choice', 'hare_accept')
            GROUP BY page_id, kind ORDER BY median(step), page_id""", params)
