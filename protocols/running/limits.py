"""Time limits and quotas acting on a running study: the part of ``Study`` that ends
sessions past their limit and decides assignments by quota (the rules:
protocols.definition.quotas; the arithmetic: protocols.running.quotas).

- A participant past the limit is timed out the moment the study next sees them: their
  page is asked for (``current_page``), they answer (``submit``: the answer is refused with
  ``SessionTimedOutError`` and nothing of it is stored), or another participant consents
  or starts (a sweep of everyone past the limit, so their places free for quotas). Timing
  out sets ``status`` to ``timed_out``, moves the participant to the end page, raises their
  ``step`` by one (so an answer computed before, still in flight, fails its guard instead
  of writing them back to active) and records a ``timed_out`` event.
- With quotas, a new link finds the study full (every arm's shortfall <= 0) or not: a full
  study starts the visit as ``full`` (the "study full" page), with a ``study_full`` event
  holding the standing; a consent gets the arm of ``Standing.choose`` (``full`` when none).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from data.arm_tally import expired
from data.columns import EVENTS
from data.store import WriteConflictError
from protocols.running import quotas
from protocols.running.participation import SessionEndedError

if TYPE_CHECKING:
    from data.store import Store
    from protocols.definition.schema import Protocol
    from protocols.running.context import SessionContext
    from protocols.running.state import Participant


class SessionTimedOutError(SessionEndedError):
    """An answer after the session's time limit: refused, the session ends (timed_out)."""


class Limits:
    """Time limits and quota decisions (module docstring); a part of Study."""

    protocol: Protocol
    store: Store
    study_id: str
    context: SessionContext
    participant: Callable[[str], Participant]  # Study.participant
    forget: Callable[[Sequence[str] | None], None]  # Study.forget
    event: Callable[..., dict[str, Any]]  # Admission.event

    def now(self) -> datetime:
        """The study's time (the server's; the simulator's simulated clock)."""
        return self.context.timer()

    def seconds_left(self, participant_id: str) -> float | None:
        """Seconds before the participant's time limit once the warning time has passed
        (None: no limit, no warning yet, or the session is over)."""
        p = self.participant(participant_id)
        if not p.active:
            return None
        return quotas.seconds_left(self.protocol, p.started_at, self.now())

    def past_limit(self, p: Participant) -> bool:
        return p.active and quotas.past_limit(self.protocol, p.started_at, self.now())

    def time_out(self, participant_ids: Collection[str]) -> None:
        """End these active participants' sessions as timed out (module docstring)."""
        if not participant_ids:
            return
        for attempt in (0, 1):
            ps = [self.participant(pid) for pid in participant_ids]
            try:
                with self.store.transaction() as tx:
                    self._timed_out_rows(tx, [(p.participant_id, p.step) for p in ps
                                              if p.active])
                break
            except WriteConflictError:  # a stale cached step: reload and decide again
                self.forget(list(participant_ids))
                if attempt:
                    raise
        self.forget(list(participant_ids))

    def sweep(self, tx: Any, keep: Collection[str] = ()) -> list[str]:
        """Time out, in ``tx``, every active participant past the limit but those in
        ``keep`` (the ones answering in this transaction); their ids."""
        cut = quotas.cutoff(self.protocol, self.now())
        if cut is None:
            return []
        late = [(r["participant_id"], int(r["step"])) for r in expired(tx, self.study_id, cut)
                if r["participant_id"] not in keep]
        self._timed_out_rows(tx, late)
        return [pid for pid, _ in late]

    def _timed_out_rows(self, tx: Any, late: list[tuple[str, int]]) -> None:
        if not late:
            return
        at = self.now()
        tx.update("participants", ["study_id", "participant_id"],
                  [{"study_id": self.study_id, "participant_id": pid, "status": "timed_out",
                    "current_page": "end", "step": step + 1, "updated_at": at}
                   for pid, step in late],
                  guard="step", expected=[step for _, step in late])
        tx.insert(EVENTS.name, [self.event(pid, None, "timed_out",
                                           {"limit_seconds": self.protocol.time_limit.seconds
                                            if self.protocol.time_limit else None})
                                for pid, _ in late])

    def check_in_time(self, items: Sequence[Any]) -> None:
        """Refuse answers of participants past the limit (``SessionTimedOutError``), timing
        them out first (``submit``: call under the participants' locks)."""
        late = [it for it in items if self.past_limit(self.participant(it.participant_id))]
        if late:
            self.time_out([it.participant_id for it in late])
            raise SessionTimedOutError(late[0].page_id,
                                       ["the session's time limit has passed"])

    def standing(self) -> quotas.Standing | None:
        """Every arm's quota standing now (None: no quotas)."""
        return quotas.standing(self.store, self.protocol, self.study_id, self.now())
