"""Rows of a minimal study for the store tests: a study and its participants as the session
writes them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from data.store import Transaction

AT = datetime(2024, 1, 1)  # every row's timestamp


def insert_study(tx: Transaction, sid: str = "s") -> None:
    """The study ``sid`` of a protocol "p"."""
    tx.insert("studies", [{"study_id": sid, "protocol_id": "p", "source": "protocol",
                           "created_at": AT}])


def participant_row(sid: str, pid: str, step: int = 0, seq: int | None = None
                    ) -> dict[str, Any]:
    """An active web participant at ``step`` (``seq``: the arrival order, by default the
    step)."""
    return {"study_id": sid, "participant_id": pid, "seq": step if seq is None else seq,
            "source": "web", "status": "active", "step": step, "state_json": "{}",
            "created_at": AT, "updated_at": AT}
