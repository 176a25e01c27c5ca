"""Where a participant is in the page sequence, and what each page shows.

The sequence is protocols.definition.sequence.page_sequence (a pure function of the
protocol); ``end`` replaces the rest when an answer ended the session (a page kind's
``ends``: declined consent, screened out, a profile the decision model approves under
``on_approved: end``). The current page is the first one not answered yet, except in a
study of two sessions (``sessions``): after the page ``break_after`` the participant sees
the ``pause`` page until ``opens_at`` = the time of that answer + ``delay_seconds`` (by the
context's clock), then the rest. Interactive pages appear one at a time (their number
depends on the answers); until the plans exist, plan pages are counted with the protocol's
expected number.

What a page shows comes from its kind (protocols.running.pages): the page id's slot (the
part before the first ``-``) selects the kinds of that slot, and the one that ``serves`` the
participant builds the payload.
"""

from __future__ import annotations

from datetime import datetime

from protocols.definition.sequence import page_sequence
from protocols.running import pages as pg
from protocols.running.context import SessionContext
from protocols.running.state import Participant

ENDED = ("declined", "screened_out", "approved", "no_plans", "withdrawn", "timed_out",
         "full")
# ended outside the page sequence (by the study, not by an answer)
ENDED_OUTSIDE = ("no_plans", "withdrawn", "timed_out", "full")


class Flow:
    """Page ids and page contents for one study."""

    def __init__(self, ctx: SessionContext) -> None:
        self.ctx = ctx
        self.protocol = ctx.protocol

    # ---- sequence -----------------------------------------------------------------------
    def page_ids(self, p: Participant) -> list[str]:
        """Every page of the participant, answered or not (module docstring)."""
        proto = self.protocol
        if p.status in ENDED_OUTSIDE:
            return [*p.answered, "end"]
        ids: list[str] = []
        for slot in proto.page_slots():
            ids.append(slot)
            if any(p.status in kind.ends for kind in pg.SLOTS[slot]):
                return ids + ["end"]
        promised = proto.plans_per_participant(self._arm_key(p))
        n = len(p.plans) if p.plans_ready else promised
        interactive = self.ctx.interactive.applies(p)
        return page_sequence(proto, n, interactive, p.queries_asked if interactive else 0,
                             promised)

    def _arm_key(self, p: Participant) -> str:
        """The arm whose plan count the sequence shows (the first arm before consent: the
        count is an estimate until then)."""
        return self.protocol.arms[0].id if p.arm in (None, "within") else p.arm

    def current_id(self, p: Participant) -> str:
        if p.status in ENDED:
            return "end"
        if p.status == "complete":
            return "debrief"
        done = set(p.answered)
        ids = self.page_ids(p)
        for k, pid in enumerate(ids):
            if pid not in done:
                opens = self.opens_at(p)
                if k > 0 and ids[k - 1] == self.protocol.sessions.break_after and \
                        opens is not None and self.ctx.clock() < opens:
                    return "pause"
                return pid
        return "debrief"

    def opens_at(self, p: Participant) -> datetime | None:
        """When the second session opens for ``p`` (None: one session, or the first is not
        over): the time of the answer to ``break_after`` + ``delay_seconds``. Until ``p``
        answers the page after the break, their last answer is that one."""
        return self.protocol.sessions.opens_at(p.answered, p.updated_at)

    def progress(self, p: Participant, page_id: str) -> pg.Progress:
        ids = self.page_ids(p)
        total = len(ids)
        if not p.interaction_done:
            total += max(0, self.ctx.interactive.expected(p) - p.queries_asked)
        step = ids.index(page_id) + 1 if page_id in ids else total
        if page_id == "pause":  # between the sessions: the next page is still to come
            step = len(p.answered) + 1
        return pg.Progress(step=step, total=total)

    # ---- pages --------------------------------------------------------------------------
    def kind(self, p: Participant, page_id: str) -> pg.PageKind:
        """The page kind showing ``page_id`` to ``p``."""
        # the kind registered last that serves: a kind added to a slot takes it over where
        # it serves (the shipped kinds of a slot serve disjoint protocols)
        for kind in reversed(pg.SLOTS.get(pg.slot_of(page_id), [])):
            if kind.serves(self.ctx, p):
                return kind
        raise KeyError(f"no page {page_id!r}")

    def page(self, p: Participant, page_id: str | None = None) -> pg.Page:
        """The page ``page_id`` (default: the current page) as the participant sees it."""
        pid = page_id or self.current_id(p)
        kind = self.kind(p, pid)
        title, payload = kind.build(self.ctx, p, pid)
        return pg.Page(id=pid, kind=kind.kind, title=title, progress=self.progress(p, pid),
                       payload=payload)
