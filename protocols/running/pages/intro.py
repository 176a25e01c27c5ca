"""The pages before any plan: consent, screening, the scenario, the profile (entered or a
persona) and the decision."""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import StrictBool, StrictFloat, StrictInt, StrictStr

from protocols.definition.interface_text import english
from protocols.definition.schema import Protocol
from protocols.definition.screening import ScreeningQuestion
from protocols.running import display
from protocols.running.context import Answering, SessionContext, SyntheticContext
from protocols.running.pages.base import Page, PageKind, PageModel, keys_problems, register
from protocols.running.state import Participant

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
    """A screening question as shown: ``kind`` single / multiple ("select all that apply")
    / number (``min``..``max`` with ``decimals`` places, in ``unit``)."""

    id: str
    question: str
    options: list[str]
    kind: str = "single"
    min: float | None = None
    max: float | None = None
    decimals: int = 0
    unit: str = ""


class ScreeningPayload(PageModel):
    questions: list[Question]


class ScreeningAnswer(PageModel):
    answers: dict[str, StrictStr | list[StrictStr] | StrictInt | StrictFloat]


@register
class Screening(PageKind):
    """The eligibility questions (protocols.definition.screening: kinds, eligibility, brackets). The
    answers that feed the profile (``profile.from_screening``) are kept in the session
    state until the profile page."""

    kind = slot = "screening"
    answer_model = ScreeningAnswer
    ends = ("screened_out",)

    def build(self, ctx: SessionContext, p: Participant, page_id: str) -> tuple[str, Any]:
        qs = [Question(id=q.id, question=q.question, options=list(q.options), kind=q.kind,
                       min=q.min, max=q.max, decimals=q.decimals, unit=q.unit)
              for q in ctx.protocol.screening]
        return english("title.screening"), ScreeningPayload(questions=qs)

    def problems(self, payload: Any, answer: Any) -> list[str]:
        out = keys_problems(set(answer.answers), [q.id for q in payload.questions], "question(s)")
        for q in payload.questions:
            if q.id in answer.answers:
                out += _spec(q).problems(answer.answers[q.id])
        return out

    def apply(self, w: Answering, p: Participant, page: Page, answer: Any) -> None:
        if not all(q.eligible_answer(answer.answers[q.id]) for q in w.protocol.screening):
            p.status = "screened_out"
            return
        feeds = set(w.protocol.profile.from_screening.values())
        p.screened = {q: v for q, v in answer.answers.items() if q in feeds}

    def synthetic_answer(self, sim: SyntheticContext, p: Participant, page: Page) -> Any:
        """Eligible answers (``ScreeningQuestion.example_answer``); a bracket that feeds the
        profile is the one holding the synthetic person's own value."""
        rng = np.random.default_rng([sim.protocol.seed & 0xFFFFFFFF, 17, p.seq])
        answers: dict[str, Any] = {}
        x = sim.population.person(p.seq).x
        values = display.display_values(sim.scenario, x)
        by_question = {q: f for f, q in sim.protocol.profile.from_screening.items()}
        for q in sim.protocol.screening:
            answers[q.id] = q.example_answer(rng)
            if q.id in by_question:
                held = q.option_holding(float(values[by_question[q.id]]))
                answers[q.id] = held if held is not None else answers[q.id]
        return {"answers": {q.id: answers[q.id] for q in page.payload.questions}}


def _spec(q: Question) -> ScreeningQuestion:
    """The checks of a shown question (its options; eligibility stays with the protocol)."""
    options = list(q.options)
    return ScreeningQuestion(id=q.id, question=q.question, kind=q.kind,  # type: ignore[arg-type]
                             options=options, eligible=options[:1], min=q.min, max=q.max,
                             decimals=q.decimals, unit=q.unit)


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
        asked = ctx.protocol.profile.from_screening
        return english("title.profile"), ProfileEntryPayload(
            text=ctx.protocol.profile.shown_text(),
            fields=[f for f in display.profile_fields(ctx.scenario) if f.feature not in asked])

    def problems(self, payload: Any, answer: Any) -> list[str]:
        out = keys_problems(set(answer.values), [f.feature for f in payload.fields], "item(s)")
        for f in payload.fields:
            if f.feature in answer.values:
                out += display.field_problems(f, answer.values[f.feature])
        return out

    def apply(self, w: Answering, p: Participant, page: Page, answer: Any) -> None:
        x = display.profile_from_answer(w.scenario, {**answer.values,
                                                     **screened_values(w.protocol, p)})
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
        values = display.display_values(sim.scenario, sim.population.person(p.seq).x)
        return {"values": {f.feature: values[f.feature] for f in page.payload.fields}}


def screened_values(protocol: Protocol, p: Participant) -> dict[str, float]:
    """The profile features answered at screening (``profile.from_screening``): each the
    midpoint of the chosen bracket, in display units (protocols.definition.screening)."""
    questions = {q.id: q for q in protocol.screening}
    out = {}
    for feature, qid in protocol.profile.from_screening.items():
        if qid not in p.screened:
            raise ValueError(f"participant {p.participant_id} has no screening answer {qid!r}")
        out[feature] = questions[qid].bracket_value(str(p.screened[qid]))
    return out


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
