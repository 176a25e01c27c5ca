"""Attention checks and the terminal pages: debrief (with the completion code) and end
(the session ended early: declined, screened out, the own profile was approved, the time
limit passed, or the study was full)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import StrictStr

from protocols.definition.interface_text import english
from protocols.definition.specs import AttentionCheck
from protocols.running.context import Answering, SessionContext, SyntheticContext
from protocols.running.pages.base import Page, PageKind, PageModel, register
from protocols.running.state import Participant

END_TEXTS = {reason: english(f"end.{reason}")
             for reason in ("declined", "screened_out", "approved", "withdrawn", "timed_out",
                            "full")}

NOTHING_CHANGEABLE = english("note.nothing_changeable")


class AttentionPayload(PageModel):
    question: str
    options: list[str]


class AttentionAnswer(PageModel):
    choice: StrictStr


def _check(checks: list[AttentionCheck], page_id: str) -> tuple[int, AttentionCheck]:
    """(index, check) of the attention page ``attention-<check id>``."""
    return next((k, c) for k, c in enumerate(checks) if f"attention-{c.id}" == page_id)


@register
class Attention(PageKind):
    """An attention check, shown right after the page its ``after`` names."""

    kind = slot = "attention"
    answer_model = AttentionAnswer

    def build(self, ctx: SessionContext, p: Participant, page_id: str) -> tuple[str, Any]:
        _, check = _check(ctx.protocol.attention_checks, page_id)
        return english("title.attention"), AttentionPayload(question=check.question,
                                                 options=list(check.options))

    def problems(self, payload: Any, answer: Any) -> list[str]:
        return [] if answer.choice in payload.options else [f"{answer.choice!r} is not an option"]

    def apply(self, w: Answering, p: Participant, page: Page, answer: Any) -> bool:
        _, check = _check(w.protocol.attention_checks, page.id)
        return answer.choice == check.correct

    def synthetic_answer(self, sim: SyntheticContext, p: Participant, page: Page) -> Any:
        k, check = _check(sim.protocol.attention_checks, page.id)
        return {"choice": sim.population.attention(p.seq, k, list(page.payload.options),
                                                    check.correct)}


class _Closing(PageKind):
    """A terminal page: it takes no answer and thanks the participant."""

    answer_model = None

    def build(self, ctx: SessionContext, p: Participant, page_id: str) -> tuple[str, Any]:
        return english("title.closing"), self.payload(ctx, p)

    def payload(self, ctx: SessionContext, p: Participant) -> PageModel:
        raise NotImplementedError


class PausePayload(PageModel):
    """Between two sessions: ``text`` with ``{when}`` filled in; ``opens_at`` the time the
    second session opens (ISO 8601, UTC)."""

    text: str
    opens_at: str
    template: str = ""  # ``text`` before ``{when}`` was filled in (a translation fills it)


def _round_up(t: datetime, seconds: int) -> datetime:
    """``t`` rounded up to a whole multiple of ``seconds`` (a time already on one stays)."""
    base = t.replace(second=0, microsecond=0)
    past = (t - base).total_seconds()
    steps = -(-past // seconds)  # ceil
    return base + timedelta(seconds=steps * seconds)


@register
class Pause(_Closing):
    """The first session is over; the next part opens at ``Flow.opens_at`` (the protocol's
    ``sessions``). It takes no answer: the participant comes back by their link."""

    kind = slot = "pause"

    def build(self, ctx: SessionContext, p: Participant, page_id: str) -> tuple[str, Any]:
        return english("title.pause"), self.payload(ctx, p)

    def payload(self, ctx: SessionContext, p: Participant) -> PageModel:
        opens = ctx.protocol.sessions.opens_at(p.answered, p.updated_at)
        assert opens is not None
        # Both are rounded up, never down: a participant who comes back at the time shown
        # must find the next part open (the text shows minutes, the attribute seconds).
        when = _round_up(opens, 60).strftime("%Y-%m-%d %H:%M UTC")
        return PausePayload(text=ctx.protocol.sessions.text.replace("{when}", when),
                            opens_at=_round_up(opens, 1).isoformat(timespec="seconds") + "Z",
                            template=ctx.protocol.sessions.text)


class DebriefPayload(PageModel):
    text: str
    completion_code: str
    no_plans: str | None = None  # why there were no plans to rate (none found, ``fewer``)
    url: str | None = None  # recruitment.completion.url: {code} and {id} to fill in


@register
class Debrief(_Closing):
    kind = slot = "debrief"

    def payload(self, ctx: SessionContext, p: Participant) -> PageModel:
        """The debrief; a participant whose plans were generated but none could be shown
        (``plans.shortfall.then: fewer`` with nothing found, e.g. a pool world where no pool
        member is richer on every item the person keeps) is told why no plan came, with the
        shortfall's message, instead of reaching the thanks without a word, and then reads
        ``debrief.no_plans`` when the protocol has one; one who rated fewer plans than
        promised reads ``debrief.fewer_plans`` when the protocol has one."""
        none_found = p.plans_ready and not p.plans
        why = ctx.protocol.plans.shortfall.message
        if none_found and p.stated is not None and not bool(p.stated.hard_mask.any()):
            why = NOTHING_CHANGEABLE
        ending = ctx.protocol.recruitment.completion
        debrief = ctx.protocol.debrief
        promised = ctx.protocol.plans_per_participant(p.arm) if p.arm else 0
        fewer = p.plans_ready and len(p.plans) < promised and debrief.fewer_plans
        text = debrief.fewer_plans if fewer and debrief.fewer_plans else debrief.text
        if none_found and debrief.no_plans:
            text = debrief.no_plans
        return DebriefPayload(text=text, completion_code=p.completion_code,
                              no_plans=why if none_found else None,
                              url=ending.url if ending is not None else None)


class EndPayload(PageModel):
    """An early end; ``ending``: the recruitment platform's ending it returns with, its
    ``code`` (null: none to show) and return ``url`` ({code} and {id} to fill in; null:
    none) (protocols.definition.recruitment)."""

    reason: Literal["declined", "screened_out", "approved", "no_plans", "withdrawn",
                    "timed_out", "full"]
    text: str
    ending: str = "no_consent"
    code: str | None = None
    url: str | None = None


@register
class End(_Closing):
    """The session ended early (a page kind's ``ends``)."""

    kind = slot = "end"

    def payload(self, ctx: SessionContext, p: Participant) -> PageModel:
        reason = p.status if p.status in (*END_TEXTS, "no_plans") else "declined"
        text = (ctx.protocol.plans.shortfall.message if reason == "no_plans"
                else END_TEXTS[reason])
        ending, spec = ctx.protocol.recruitment.ending(reason)
        code = spec.code if spec is not None else None
        if ending == "completion":  # the study ended them: they return as completed
            code = p.completion_code or code
        return EndPayload(reason=reason, text=text, ending=ending,  # type: ignore[arg-type]
                          code=code, url=spec.url if spec is not None else None)
