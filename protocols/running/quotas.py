"""Quota decisions and session time limits while a study runs (the rules:
protocols.definition.quotas).

``standing`` reads each arm's target, counted and in-progress participants from the store
(data.arm_tally) at a moment; ``choose`` gives the next consenting participant the arm of
the largest shortfall,

    shortfall(arm) = target(arm) - counted(arm) - in_progress(arm),

ties broken by the participant's permuted block (``design.block_preference``); None when no
arm has a positive shortfall (the study is full). ``Standing.take`` counts the chosen arm's
new participant in progress, so several participants enrolled in one transaction are each
decided on the standing their predecessors left. The decision's inputs go into the
``assigned`` event, so every assignment can be retraced from the audit log.

Time: a participant who started at ``s`` is past the limit at ``t`` when
``t - s >= time_limit.seconds``; from ``s + warning_seconds`` the pages warn.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from data.arm_tally import arm_tally
from data.store import Store
from protocols.definition.schema import Protocol
from protocols.running import design


@dataclass
class ArmStanding:
    """One arm's place in its quota (module docstring)."""

    target: int
    counted: int = 0
    in_progress: int = 0

    @property
    def shortfall(self) -> int:
        return self.target - self.counted - self.in_progress


@dataclass
class Standing:
    """Every arm's ``ArmStanding`` at one moment."""

    arms: dict[str, ArmStanding]

    @property
    def full(self) -> bool:
        """No arm has a place left."""
        return all(a.shortfall <= 0 for a in self.arms.values())

    def choose(self, protocol: Protocol, consent_seq: int) -> str | None:
        """The arm of the largest shortfall, ties by the block order (module docstring)."""
        if self.full:
            return None
        best = max(a.shortfall for a in self.arms.values())
        return next(arm for arm in design.block_preference(protocol, consent_seq)
                    if self.arms[arm].shortfall == best)

    def take(self, arm: str) -> None:
        self.arms[arm].in_progress += 1

    def detail(self) -> dict[str, Any]:
        """The standing as the audit log keeps it: {arm: {target, counted, in_progress,
        shortfall}}."""
        return {arm: {**asdict(a), "shortfall": a.shortfall} for arm, a in self.arms.items()}


def cutoff(protocol: Protocol, at: datetime) -> datetime | None:
    """Participants who started before this time are past the limit at ``at`` (None: no
    limit)."""
    limit = protocol.time_limit
    return None if limit is None else at - timedelta(seconds=limit.seconds)


def past_limit(protocol: Protocol, started_at: datetime | None, at: datetime) -> bool:
    limit = cutoff(protocol, at)
    return limit is not None and started_at is not None and started_at <= limit


def seconds_left(protocol: Protocol, started_at: datetime | None, at: datetime) -> float | None:
    """The time left before the limit once the warning time has passed (else None)."""
    limit = protocol.time_limit
    if limit is None or limit.warning_seconds is None or started_at is None:
        return None
    elapsed = (at - started_at).total_seconds()
    if elapsed < limit.warning_seconds:
        return None
    return max(0.0, limit.seconds - elapsed)


def standing(store: Store, protocol: Protocol, study_id: str, at: datetime) -> Standing | None:
    """Every arm's standing at ``at`` (None: the protocol has no quotas)."""
    quotas = protocol.quotas
    if quotas is None:
        return None
    ex = protocol.exclusions
    needed = ({a.id: protocol.plans_per_participant(a.id) for a in protocol.arms}
              if ex.fewer_plans else None)
    tally = arm_tally(store, study_id, quotas.counts, started_after=cutoff(protocol, at),
                      exclude_failed_attention=ex.failed_attention, plans_needed=needed)
    return Standing({arm: ArmStanding(target, **tally.get(arm, {}))
                     for arm, target in quotas.targets.items()})
