"""The dashboard's sign-in log (table ``dashboard_logins``): every attempt, right or wrong.

It lives in the study database, not in a process' memory, so every server process on the
same store sees the same failures: the throttle (study_app.web.auth) counts them, and the
researcher reads them on the dashboard. The table is never exported (data.codebook).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pandas as pd

from data.columns import DASHBOARD_LOGINS
from data.store import Store


def record_login(store: Store, at: datetime, ok: bool, client: str | None,
                 delay_seconds: float, account: str | None = None) -> None:
    """Append one sign-in attempt (``account``: the account name typed, in account mode)."""
    with store.transaction() as tx:
        tx.insert(DASHBOARD_LOGINS.name, [DASHBOARD_LOGINS.row(
            attempted_at=at, ok=ok, client=client, delay_seconds=float(delay_seconds),
            account=account)])


def failures_since(store: Store, since: datetime) -> dict[str, Any]:
    """Failed attempts after ``since`` and after the last successful one: ``failures``
    (count) and ``last`` (time of the latest, or None)."""
    row = store.query(
        """SELECT count(*) AS failures, max(attempted_at) AS last FROM dashboard_logins
           WHERE NOT ok AND attempted_at > ? AND attempted_at > coalesce(
             (SELECT max(attempted_at) FROM dashboard_logins WHERE ok), '-infinity'::TIMESTAMP)""",
        [since],
    )[0]
    return {"failures": int(row["failures"]), "last": row["last"]}


def failures_before(store: Store, at: datetime) -> int:
    """Failed attempts between the previous successful sign-in and the one at (or just
    before) ``at``: what happened while the researcher was away."""
    row = store.query(
        """WITH mine AS (SELECT max(login_id) AS id FROM dashboard_logins
                         WHERE ok AND attempted_at <= ?),
                prev AS (SELECT coalesce(max(l.login_id), 0) AS id
                         FROM dashboard_logins l, mine WHERE l.ok AND l.login_id < mine.id)
           SELECT count(*) AS n FROM dashboard_logins l, mine, prev
           WHERE NOT l.ok AND l.login_id > prev.id AND l.login_id < mine.id""",
        [at],
    )[0]
    return int(row["n"])


def recent_logins(store: Store, limit: int = 50) -> pd.DataFrame:
    """The latest attempts, newest first (attempted_at, account, ok, client,
    delay_seconds)."""
    return store.frame(
        "SELECT attempted_at, account, ok, client, delay_seconds FROM dashboard_logins "
        "ORDER BY login_id DESC LIMIT ?", [int(limit)],
    )
