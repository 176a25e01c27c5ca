"""The pages before any plan: consent, screening, the scenario, the profile (entered or a
persona) and the decision."""

from __future__ import annotations

from typing import Any

from pydantic import StrictBool, StrictFloat, StrictInt, StrictStr

from protocols import display
from protocols.context import Answering, SessionContext, SyntheticContext
from protocols.interface_text import english
from protocols.pages.base import Page, PageKind, PageModel, keys_problems, register
from protocols.state import Participant

APPROVED_NOTE = english("note.approved")


class ConsentPayload(PageModel):
    text: str


class ConsentAnswer(PageModel):
    agree: StrictBool


@register
class Consent(PageKind):
    kind = slot = "consent"
    answer_model = ConsentAnswer
    ends = ("declined",)

    def build(self, ctx: SessionContext, p: Participant, page_id: str) -> tuple[str, Any]:
        return english("title.consent"), ConsentPayload(text=ctx.protocol.consent_text())

    def apply(self, w: Answering, p: Participant, page: Page, answer: Any) -> None:
        if answer.agree:
            w.enrol(p)  # only now does the participant count for assignment
        else:
            p.status = "declined"

    def synthetic_answer(self, sim: SyntheticContext, p: Participant, page: Page) -> Any:
        return {"agree": True}


class Question(PageModel):
    id: str
    question: str
    options: list[str]


class ScreeningPayload(PageModel):
    questions: list[Question]


class ScreeningAnswer(PageModel):
    answers: dict[str, StrictStr]


@register
class Screening(PageKind):
    kind = slot = "screening"
    answer_model = ScreeningAnswer
    ends = ("screened_out",)

    def build(self, ctx: SessionContext, p: Participant, page_id: str) -> tuple[str, Any]:
        qs = [Question(id=q.id, question=q.question, options=list(q.options))
              for q in ctx.protocol.screening]
        return english("title.screening"), ScreeningPayload(questions=qs)

    def problems(self, payload: Any, answer: Any) -> list[str]:
        out = keys_problems(set(answer.answers), [q.id for q in payload.questions], "question(s)")
        for q in payload.questions:
            v = answer.answers.get(q.id)
            if v is not None and v not in q.options:
                out.append(f"{q.id}: {v!r} is not an option ({', '.join(q.options)})")
        return out

    def apply(self, w: Answering, p: Participant, page: Page, answer: Any) -> None:
        if not all(answer.answers[q.id] in q.eligible for q in w.protocol.screening):
            p.status = "screened_out"

    def synthetic_answer(self, sim: SyntheticContext, p: Participant, page: Page) -> Any:
        eligible = {q.id: q.eligible[0] for q in sim.protocol.screening}
        return {"answers": {q.id: eligible[q.id] for q in page.payload.questions}}


class TextPayload(PageModel):
    text: str


@register
class ScenarioText(PageKind):
    kind = slot = "scenario"

    def build(self, ctx: SessionContext, p: Participant, page_id: str) -> tuple[str, Any]:
        return ctx.scenario.title, TextPayload(text=ctx.protocol.scenario_text
                                               or ctx.scenario.story)


class ProfileEntryPayload(PageModel):
    text: str
    fields: list[display.ProfileField]


class ProfileAnswer(PageModel):
    values: dict[str, StrictFloat | StrictInt | StrictStr]


@register
class ProfileEntry(PageKind):
    """The participant enters their own profile (``profile.source: own``)."""

    kind = "profile_entry"
    slot = "profile"
    answer_model = ProfileAnswer
    ends = ("approved",)

    def serves(self, ctx: SessionContext, p: Participant) -> bool:
        return ctx.protocol.profile.source == "own"

    def build(self, ctx: SessionContext, p: Participant, page_id: str) -> tuple[str, Any]:
        return english("title.profile"), ProfileEntryPayload(
            text=ctx.protocol.profile.shown_text(),
            fields=display.profile_fields(ctx.scenario))

    def problems(self, payload: Any, answer: Any) -> list[str]:
        out = keys_problems(set(answer.values), [f.feature for f in payload.fields], "item(s)")
        for f in payload.fields:
            if f.feature in answer.values:
                out += display.field_problems(f, answer.values[f.feature])
        return out

    def apply(self, w: Answering, p: Participant, page: Page, answer: Any) -> None:
        x = display.profile_from_answer(w.scenario, answer.values)
        if not w.ctx.approves(x):
            w.set_profile(p, x, "own")
        elif w.protocol.profile.on_approved == "persona":
            w.set_profile(p, w.ctx.persona(p.design_seq), "persona_fallback")
            p.note = APPROVED_NOTE
        else:
            p.status = "approved"
        if w.protocol.elicitation.scheme == "none":
            w.plans_needed(p)

    def synthetic_answer(self, sim: SyntheticContext, p: Participant, page: Page) -> Any:
        return {"values": display.display_values(sim.scenario, sim.population.person(p.seq).x)}


class PersonaPayload(PageModel):
    text: str
    rows: list[display.ProfileRow]


@register
class Persona(PageKind):
    """The participant is given a rejected applicant's profile (``profile.source: persona``)."""

    kind = "persona"
    slot = "profile"
    ends = ("approved",)

    def serves(self, ctx: SessionContext, p: Participant) -> bool:
        return ctx.protocol.profile.source == "persona"

    def build(self, ctx: SessionContext, p: Participant, page_id: str) -> tuple[str, Any]:
        assert p.x is not None
        return english("title.profile"), PersonaPayload(
            text=ctx.protocol.profile.shown_text(),
            rows=display.profile_rows(ctx.scenario, p.x))

    def apply(self, w: Answering, p: Participant, page: Page, answer: Any) -> None:
        if w.protocol.elicitation.scheme == "none":
            w.plans_needed(p)


class DecisionPayload(PageModel):
    decision: str
    text: str
    note: str = ""
    rows: list[display.ProfileRow]


@register
class Decision(PageKind):
    kind = slot = "decision"

    def build(self, ctx: SessionContext, p: Participant, page_id: str) -> tuple[str, Any]:
        assert p.x is not None
        sc = ctx.scenario
        return english("title.decision"), DecisionPayload(
            decision=sc.unfavourable_label, note=p.note, rows=display.profile_rows(sc, p.x),
            text=ctx.protocol.plan_view.decision_text
            or english("decision.default", decision=sc.unfavourable_label))
