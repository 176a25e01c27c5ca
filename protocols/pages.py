"""The page/answer contract between the study session and whoever renders it.

A renderer (the Streamlit app, the synthetic-participant driver) asks the session for the
current ``Page`` and sends back an answer for that page's id. Every page has:

- ``id``: stable within a participant (``consent``, ``screening``, ``scenario``,
  ``profile``, ``decision``, ``elicitation``, ``hare-1``..., ``plan-1``...,
  ``attention-<check id>``, ``debrief``, ``end``);
- ``kind``: what to render (table below);
- ``title`` and ``progress`` (``step`` 1-based, ``total`` pages expected; HARE pages make the
  total an estimate until the interaction ends);
- ``payload``: everything the renderer needs, already in display units (labels, formatted
  current and suggested values, units, bounds), never model units.

| kind | payload | answer (a dict or the model) |
| --- | --- | --- |
| consent | ConsentPayload(text) | ConsentAnswer(agree: bool) |
| screening | ScreeningPayload(questions[id, question, options]) | ScreeningAnswer(answers: {question id: option}) |
| scenario | TextPayload(text) | AckAnswer() = {} |
| profile_entry | ProfileEntryPayload(text, fields[feature, label, help, kind number/category, unit, min, max, decimals, options]) | ProfileAnswer(values: {feature: number in display units, or category label/code}) |
| persona | PersonaPayload(text, rows[feature, label, value]) | AckAnswer() |
| decision | DecisionPayload(decision, text, note, rows) | AckAnswer() |
| elicitation_binary / _ranking / _likert | ElicitationPayload(scheme, text, items[feature, label, help], levels) | ElicitationAnswer(answers: {feature: value}) - binary: true/false; ranking: rank 1..m among the changeable items or null (cannot change); likert: difficulty 1..levels or null |
| plan | PlanPayload(plan_id, number, of, text, rows[label, current, suggested, kind action/consequence/same], acceptance, action (7-point questions), why, impossible items, impossible_text) | PlanAnswer(acceptance 1..7, action 1..7, acceptance_why, action_why, impossible: {feature: bool} for exactly the action items) |
| hare_choice | HareChoicePayload(query, budget, text, options[2][rows]) | HareChoiceAnswer(choice: 0 or 1) |
| hare_accept | HareAcceptPayload(query, text, rows) | HareAcceptAnswer(accept: bool) |
| attention | AttentionPayload(question, options) | AttentionAnswer(choice: option) |
| debrief | DebriefPayload(text, completion_code) | none: the session is complete |
| end | EndPayload(reason, text) | none: declined, screened out, or the own profile was approved |

Plan rows list every item of the profile: ``action`` items are the ones the plan asks the
person to change; ``consequence`` items change as a result (the world model's causal
effects); ``same`` items do not change. The impossibility question is asked for the action
items only (one cannot implement a consequence directly).

Answers are validated strictly (``validate_answer``): wrong types (a string for a rating,
a bool for a number), out-of-range values, unknown or missing keys all raise
``AnswerError`` listing every problem; nothing is written then.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr
from pydantic import ValidationError as PydanticValidationError

PageKind = Literal[
    "consent", "screening", "scenario", "profile_entry", "persona", "decision",
    "elicitation_binary", "elicitation_ranking", "elicitation_likert", "plan",
    "hare_choice", "hare_accept", "attention", "debrief", "end",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---- payload parts ---------------------------------------------------------------------
class Progress(_Model):
    step: int
    total: int


class Question(_Model):
    id: str
    question: str
    options: list[str]


class ProfileField(_Model):
    feature: str
    label: str
    help: str
    kind: Literal["number", "category"]
    unit: str
    min: float | None = None
    max: float | None = None
    decimals: int = 0
    options: list[str] = Field(default_factory=list)


class ProfileRow(_Model):
    feature: str
    label: str
    value: str


class PlanRow(_Model):
    feature: str
    label: str
    current: str
    suggested: str
    current_value: float
    suggested_value: float
    kind: Literal["action", "consequence", "same"]


class Item(_Model):
    feature: str
    label: str
    help: str = ""


class ImpossibleItem(_Model):
    feature: str
    label: str
    current: str
    suggested: str


class ScaleQuestion(_Model):
    text: str
    labels: list[str]


class WhyQuestion(_Model):
    text: str
    min_chars: int
    max_chars: int


# ---- payloads --------------------------------------------------------------------------
class ConsentPayload(_Model):
    text: str


class ScreeningPayload(_Model):
    questions: list[Question]


class TextPayload(_Model):
    text: str


class ProfileEntryPayload(_Model):
    text: str
    fields: list[ProfileField]


class PersonaPayload(_Model):
    text: str
    rows: list[ProfileRow]


class DecisionPayload(_Model):
    decision: str
    text: str
    note: str = ""
    rows: list[ProfileRow]


class ElicitationPayload(_Model):
    scheme: Literal["binary", "ranking", "likert"]
    text: str
    items: list[Item]
    levels: int | None = None


class PlanPayload(_Model):
    plan_id: str
    number: int
    of: int
    text: str
    rows: list[PlanRow]
    acceptance: ScaleQuestion
    action: ScaleQuestion
    why: WhyQuestion | None
    impossible: list[ImpossibleItem]
    impossible_text: str


class HareOption(_Model):
    rows: list[PlanRow]


class HareChoicePayload(_Model):
    query: int
    budget: int | None
    text: str
    options: list[HareOption]


class HareAcceptPayload(_Model):
    query: int
    budget: int | None
    text: str
    rows: list[PlanRow]


class AttentionPayload(_Model):
    question: str
    options: list[str]


class DebriefPayload(_Model):
    text: str
    completion_code: str


class EndPayload(_Model):
    reason: Literal["declined", "screened_out", "approved"]
    text: str


Payload = (
    ConsentPayload | ScreeningPayload | TextPayload | ProfileEntryPayload | PersonaPayload
    | DecisionPayload | ElicitationPayload | PlanPayload | HareChoicePayload
    | HareAcceptPayload | AttentionPayload | DebriefPayload | EndPayload
)


class Page(_Model):
    id: str
    kind: PageKind
    title: str
    progress: Progress
    payload: Payload

    @property
    def terminal(self) -> bool:
        """Debrief and end pages take no answer."""
        return self.kind in ("debrief", "end")


# ---- answers ---------------------------------------------------------------------------
class ConsentAnswer(_Model):
    agree: StrictBool


class ScreeningAnswer(_Model):
    answers: dict[str, StrictStr]


class AckAnswer(_Model):
    pass


class ProfileAnswer(_Model):
    values: dict[str, StrictFloat | StrictInt | StrictStr]


class ElicitationAnswer(_Model):
    answers: dict[str, StrictBool | StrictInt | None]


class PlanAnswer(_Model):
    acceptance: StrictInt = Field(ge=1, le=7)
    action: StrictInt = Field(ge=1, le=7)
    acceptance_why: StrictStr = ""
    action_why: StrictStr = ""
    impossible: dict[str, StrictBool] = Field(default_factory=dict)


class HareChoiceAnswer(_Model):
    choice: Literal[0, 1]


class HareAcceptAnswer(_Model):
    accept: StrictBool


class AttentionAnswer(_Model):
    choice: StrictStr


Answer = (
    ConsentAnswer | ScreeningAnswer | AckAnswer | ProfileAnswer | ElicitationAnswer
    | PlanAnswer | HareChoiceAnswer | HareAcceptAnswer | AttentionAnswer
)
ANSWER_TYPES: dict[str, type[BaseModel]] = {
    "consent": ConsentAnswer,
    "screening": ScreeningAnswer,
    "scenario": AckAnswer,
    "profile_entry": ProfileAnswer,
    "persona": AckAnswer,
    "decision": AckAnswer,
    "elicitation_binary": ElicitationAnswer,
    "elicitation_ranking": ElicitationAnswer,
    "elicitation_likert": ElicitationAnswer,
    "plan": PlanAnswer,
    "hare_choice": HareChoiceAnswer,
    "hare_accept": HareAcceptAnswer,
    "attention": AttentionAnswer,
}


class AnswerError(ValueError):
    """An answer does not fit its page; ``problems`` lists every reason."""

    def __init__(self, page_id: str, problems: list[str]) -> None:
        self.page_id = page_id
        self.problems = problems
        super().__init__(f"answer to page {page_id!r} rejected: " + "; ".join(problems))


def validate_answer(page: Page, raw: Any) -> Answer:
    """The typed answer to ``page`` (a dict or an answer model); AnswerError otherwise."""
    if page.terminal:
        raise AnswerError(page.id, [f"a {page.kind} page takes no answer"])
    model = ANSWER_TYPES[page.kind]
    if isinstance(raw, BaseModel):
        if not isinstance(raw, model):
            raise AnswerError(page.id, [f"expected a {model.__name__}, got {type(raw).__name__}"])
        raw = raw.model_dump()
    if not isinstance(raw, dict):
        raise AnswerError(page.id, [f"an answer is a mapping of fields, got {type(raw).__name__}"])
    try:
        answer = model.model_validate(raw)
    except PydanticValidationError as e:
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or 'answer'}: {err['msg']}"
            for err in e.errors()
        ]
        raise AnswerError(page.id, problems) from None
    problems = _context_problems(page, answer)
    if problems:
        raise AnswerError(page.id, problems)
    return answer  # type: ignore[return-value]


def _keys_problems(given: set[str], expected: list[str], what: str) -> list[str]:
    out = []
    missing = [k for k in expected if k not in given]
    unknown = sorted(given - set(expected))
    if missing:
        out.append(f"missing {what}: {', '.join(missing)}")
    if unknown:
        out.append(f"unknown {what}: {', '.join(unknown)}")
    return out


def _context_problems(page: Page, a: Any) -> list[str]:
    p = page.payload
    if isinstance(p, ScreeningPayload):
        out = _keys_problems(set(a.answers), [q.id for q in p.questions], "question(s)")
        for q in p.questions:
            v = a.answers.get(q.id)
            if v is not None and v not in q.options:
                out.append(f"{q.id}: {v!r} is not an option ({', '.join(q.options)})")
        return out
    if isinstance(p, ProfileEntryPayload):
        out = _keys_problems(set(a.values), [f.feature for f in p.fields], "item(s)")
        for f in p.fields:
            if f.feature in a.values:
                out += _field_problems(f, a.values[f.feature])
        return out
    if isinstance(p, ElicitationPayload):
        return _elicitation_problems(p, a.answers)
    if isinstance(p, PlanPayload):
        out = []
        if p.why is not None:
            for key in ("acceptance_why", "action_why"):
                n = len(getattr(a, key).strip())
                if n < p.why.min_chars:
                    out.append(f"{key}: at least {p.why.min_chars} characters, got {n}")
                if n > p.why.max_chars:
                    out.append(f"{key}: at most {p.why.max_chars} characters, got {n}")
        else:
            out += [f"{k}: this study asks no reason" for k in ("acceptance_why", "action_why")
                    if getattr(a, k)]
        expected = [i.feature for i in p.impossible]
        out += _keys_problems(set(a.impossible), expected, "impossibility item(s)")
        return out
    if isinstance(p, AttentionPayload):
        return [] if a.choice in p.options else [f"{a.choice!r} is not an option"]
    return []


def _field_problems(f: ProfileField, v: Any) -> list[str]:
    if f.kind == "category":
        if isinstance(v, str):
            return [] if v in f.options else [f"{f.feature}: {v!r} is not one of "
                                              f"{', '.join(f.options)}"]
        if isinstance(v, int) and 0 <= v < len(f.options):
            return []
        return [f"{f.feature}: expected one of {', '.join(f.options)}"]
    if isinstance(v, str) or not np.isfinite(v):
        return [f"{f.feature}: expected a number in {f.unit or 'display units'}"]
    if (f.min is not None and v < f.min) or (f.max is not None and v > f.max):
        return [f"{f.feature}: {v} is outside {f.min}..{f.max} {f.unit}".rstrip()]
    return []


def _elicitation_problems(p: ElicitationPayload, answers: dict[str, Any]) -> list[str]:
    out = _keys_problems(set(answers), [i.feature for i in p.items], "item(s)")
    vals = {k: v for k, v in answers.items() if k in {i.feature for i in p.items}}
    if p.scheme == "binary":
        out += [f"{k}: expected true (can change) or false" for k, v in vals.items()
                if not isinstance(v, bool)]
        return out
    bad = [k for k, v in vals.items() if isinstance(v, bool)]
    out += [f"{k}: expected a number or null (cannot change)" for k in bad]
    nums = {k: v for k, v in vals.items() if isinstance(v, int) and not isinstance(v, bool)}
    if p.scheme == "ranking":
        ranks = sorted(nums.values())
        if ranks != list(range(1, len(nums) + 1)):
            out.append(f"ranks must be 1..{len(nums)} (easiest first), each used once; "
                       f"got {ranks}")
    else:
        out += [f"{k}: difficulty must be 1..{p.levels}, got {v}" for k, v in nums.items()
                if not 1 <= v <= (p.levels or 0)]
    return out
