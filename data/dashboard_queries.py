"""Read-only summaries of a study for the researcher dashboard (all SQL stays in ``data``).

Every function takes a ``Store`` and a study id (``source``: only participants from
'web', 'synthetic' or 'imported'; None = all) and returns a pandas DataFrame:

- ``study_list``: study_id, protocol_id, title, created_at, participants, complete.
- ``status_by_arm``: arm (``NOT_CONSENTED`` for visits that never consented), status,
  participants.
- ``funnel``: page_id, first_step (median step at which the page is answered, for
  ordering), answered (participants who answered it), share (of all participants).
- ``drop_off``: page_id (the page active participants are on), participants, idle_minutes
  (median time since their last answer).
- ``page_durations``: page_id, answers, median_seconds (time from the previous answer, or
  from the start for the first page, to this answer).
- ``completion_times``: participants (complete), median_minutes, p90_minutes (start to
  last answer).
- ``rating_distribution``: arm, outcome ('acceptance' | 'action'), rating (1..7),
  ratings.
- ``plan_shortfalls``: arm, reason, participants (who got fewer plans than the protocol
  asks), missing (plans short in all), fallback (plans another method filled in).
- ``plan_promises``: arm, participants (who reached the plans: a ``plans`` event), short
  (who got fewer plans than the protocol asks), missing (plans short in all).
- ``attention_failures``: arm, participants (who failed at least one attention check).
- ``end_states``: ending (completed, screened_out, no_consent, withdrawn, ended_by_study,
  in_progress: ``ENDINGS``, the recruitment platform's round trip), participants.
- ``quality_flags``: arm, participants (who answered a page), speeders, straightliners,
  attention_failed, flagged (data.quality's definitions and the protocol's thresholds).
- ``id_conflicts``: participant_id, status, refused_visits, sessions (distinct recruitment
  sessions seen, the first visit's included), first_refused, last_refused: participants
  whose recruitment id arrived with another recruitment session (those visits were refused).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from data.quality import flag_counts, participant_flags
from data.store import Store

SOURCES = ("web", "synthetic", "imported")
NOT_CONSENTED = "(no consent)"


def _where(study_id: str, source: str | None, alias: str = "") -> tuple[str, list[Any]]:
    """Filter on study and (optionally) the participant's source."""
    if source is not None and source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)} or None, got {source!r}")
    a = f"{alias}." if alias else ""
    sql = f"{a}study_id = ?"
    params: list[Any] = [study_id]
    if source is not None:
        sql += (f" AND {a}participant_id IN (SELECT participant_id FROM participants "
                "WHERE study_id = ? AND source = ?)")
        params += [study_id, source]
    return sql, params


def study_list(store: Store) -> pd.DataFrame:
    return store.frame(
        """SELECT s.study_id, s.protocol_id, s.title, s.created_at,
                  count(p.participant_id) AS participants,
                  count(p.participant_id) FILTER (WHERE p.status = 'complete') AS complete
           FROM studies s LEFT JOIN participants p ON p.study_id = s.study_id
           GROUP BY ALL ORDER BY s.created_at, s.study_id"""
    )


def status_by_arm(store: Store, study_id: str, source: str | None = None) -> pd.DataFrame:
    where, params = _where(study_id, source)
    return store.frame(
        f"""SELECT coalesce(arm, '{NOT_CONSENTED}') AS arm, status,
                   count(*) AS participants FROM participants
            WHERE {where} GROUP BY ALL ORDER BY arm, status""",
        params,
    )


def id_conflicts(store: Store, study_id: str) -> pd.DataFrame:
    return store.frame(
        """SELECT p.participant_id, p.status, count(*) AS refused_visits,
                  count(DISTINCT json_extract_string(e.detail_json, '$.session'))
                    + CASE WHEN p.session_hash IS NULL THEN 0 ELSE 1 END AS sessions,
                  min(e.occurred_at) AS first_refused, max(e.occurred_at) AS last_refused
           FROM events e JOIN participants p
             ON p.study_id = e.study_id AND p.participant_id = e.participant_id
           WHERE e.study_id = ? AND e.event = 'id_refused'
           GROUP BY p.participant_id, p.status, p.session_hash
           ORDER BY last_refused DESC""",
        [study_id],
    )


def funnel(store: Store, study_id: str, source: str | None = None) -> pd.DataFrame:
    where, params = _where(study_id, source)
    total_where, total_params = _where(study_id, source)
    return store.frame(
        f"""WITH total AS (SELECT count(*) AS n FROM participants WHERE {total_where})
            SELECT page_id, median(step) AS first_step,
                   count(DISTINCT participant_id) AS answered,
                   count(DISTINCT participant_id) / greatest(any_value(total.n), 1) AS share
            FROM responses, total WHERE {where}
            GROUP BY page_id ORDER BY first_step, page_id""",
        total_params + params,
    )


def drop_off(store: Store, study_id: str, source: str | None = None) -> pd.DataFrame:
    where, params = _where(study_id, source)
    return store.frame(
        f"""SELECT current_page AS page_id, count(*) AS participants,
                   median(date_diff('second', updated_at, now()::TIMESTAMP)) / 60.0
                     AS idle_minutes
            FROM participants WHERE {where} AND status = 'active'
            GROUP BY current_page ORDER BY participants DESC, page_id""",
        params,
    )


def page_durations(store: Store, study_id: str, source: str | None = None) -> pd.DataFrame:
    where, params = _where(study_id, source, "r")
    return store.frame(
        f"""WITH timed AS (
              SELECT r.page_id, r.step,
                     date_diff('millisecond',
                       coalesce(lag(r.answered_at) OVER (PARTITION BY r.participant_id
                                                         ORDER BY r.step), p.created_at),
                       r.answered_at) / 1000.0 AS seconds
              FROM responses r JOIN participants p
                ON p.study_id = r.study_id AND p.participant_id = r.participant_id
              WHERE {where})
            SELECT page_id, count(*) AS answers, median(seconds) AS median_seconds
            FROM timed GROUP BY page_id ORDER BY median(step), page_id""",
        params,
    )


def completion_times(store: Store, study_id: str, source: str | None = None) -> pd.DataFrame:
    where, params = _where(study_id, source, "p")
    return store.frame(
        f"""WITH done AS (
              SELECT date_diff('millisecond', p.created_at, max(r.answered_at)) / 60000.0
                       AS minutes
              FROM participants p JOIN responses r
                ON r.study_id = p.study_id AND r.participant_id = p.participant_id
              WHERE {where} AND p.status = 'complete'
              GROUP BY p.participant_id, p.created_at)
            SELECT count(*) AS participants, median(minutes) AS median_minutes,
                   quantile_cont(minutes, 0.9) AS p90_minutes
            FROM done""",
        params,
    )


def rating_distribution(store: Store, study_id: str, source: str | None = None) -> pd.DataFrame:
    where, params = _where(study_id, source)
    return store.frame(
        f"""SELECT arm, outcome, rating, count(*) AS ratings FROM (
              SELECT arm, 'acceptance' AS outcome, acceptance AS rating FROM ratings_long
              WHERE {where}
              UNION ALL
              SELECT arm, 'action' AS outcome, action AS rating FROM ratings_long
              WHERE {where})
            GROUP BY arm, outcome, rating ORDER BY arm, outcome, rating""",
        params + params,
    )


def plan_shortfalls(store: Store, study_id: str, source: str | None = None) -> pd.DataFrame:
    where, params = _where(study_id, source, "e")
    return store.frame(
        f"""WITH d AS (
              SELECT pa.arm, json_extract_string(e.detail_json, '$.reason') AS reason,
                     json_extract(e.detail_json, '$.asked')::INTEGER AS asked,
                     json_extract(e.detail_json, '$.n')::INTEGER AS n,
                     coalesce(json_extract(e.detail_json, '$.fallback')::INTEGER, 0) AS fallback
              FROM events e JOIN participants pa
                ON pa.study_id = e.study_id AND pa.participant_id = e.participant_id
              WHERE {where} AND e.event = 'plans')
            SELECT arm, coalesce(reason, 'filled by the fallback method') AS reason,
                   count(*)::INTEGER AS participants,
                   sum(greatest(asked - n, 0))::INTEGER AS missing,
                   sum(fallback)::INTEGER AS fallback
            FROM d WHERE reason IS NOT NULL OR fallback > 0
            GROUP BY ALL ORDER BY arm, participants DESC""",
        params,
    )


def plan_promises(store: Store, study_id: str, source: str | None = None) -> pd.DataFrame:
    where, params = _where(study_id, source, "e")
    return store.frame(
        f"""SELECT pa.arm, count(*)::INTEGER AS participants,
                   count(*) FILTER (WHERE coalesce(json_extract(e.detail_json,
                       '$.short')::BOOLEAN, false))::INTEGER AS short,
                   coalesce(sum(greatest(json_extract(e.detail_json, '$.asked')::INTEGER
                       - json_extract(e.detail_json, '$.n')::INTEGER, 0)), 0)::INTEGER
                       AS missing
            FROM events e JOIN participants pa
              ON pa.study_id = e.study_id AND pa.participant_id = e.participant_id
            WHERE {where} AND e.event = 'plans'
            GROUP BY pa.arm ORDER BY pa.arm""",
        params,
    )


def attention_failures(store: Store, study_id: str, source: str | None = None) -> pd.DataFrame:
    where, params = _where(study_id, source, "r")
    return store.frame(
        f"""SELECT pa.arm, count(DISTINCT r.participant_id)::INTEGER AS participants
            FROM responses r JOIN participants pa
              ON pa.study_id = r.study_id AND pa.participant_id = r.participant_id
            WHERE {where} AND r.kind = 'attention' AND NOT r.correct
            GROUP BY pa.arm ORDER BY pa.arm""",
        params,
    )


# participants.status -> the ending the recruitment platform hears about (protocols.endings)
ENDINGS: dict[str, str] = {
    "complete": "completed", "screened_out": "screened_out", "declined": "no_consent",
    "withdrawn": "withdrawn", "approved": "ended_by_study", "no_plans": "ended_by_study",
    "active": "in_progress", "timed_out": "timed_out", "full": "study_full",
}


def end_states(store: Store, study_id: str, source: str | None = None) -> pd.DataFrame:
    where, params = _where(study_id, source)
    cases = " ".join(f"WHEN '{k}' THEN '{v}'" for k, v in ENDINGS.items())
    return store.frame(
        f"""SELECT CASE status {cases} ELSE status END AS ending,
                   count(*)::INTEGER AS participants
            FROM participants WHERE {where} GROUP BY 1 ORDER BY 1""",
        params,
    )


def quality_flags(store: Store, study_id: str, source: str | None = None) -> pd.DataFrame:
    if source is not None and source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)} or None, got {source!r}")
    flags = participant_flags(store, study_id)
    if source is not None:
        flags = flags[flags["source"] == source]
    return flag_counts(flags)
