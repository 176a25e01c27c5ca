"""Pre-hoc elicitation: which items the participant could change, and how hard each would be.

One kind per scheme (``elicitation_binary``, ``_ranking``, ``_likert``), sharing the payload
and answer. Answers: binary true/false per item; ranking the rank 1..m among the changeable
items (easiest first) or null (cannot change); likert a difficulty 1..levels or null. The
stated profile becomes the participant's constraints (engine.preferences) and the plans are
made next.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

from pydantic import StrictBool, StrictInt, model_serializer

from engine.preferences import profiles_from_elicitation
from protocols.definition.interface_text import english
from protocols.running.context import Answering, SessionContext, SyntheticContext
from protocols.running.pages.base import Page, PageKind, PageModel, keys_problems, register
from protocols.running.state import Participant


class Item(PageModel):
    feature: str
    label: str
    help: str = ""


def _without_empty(stored: dict[str, Any], field: str) -> dict[str, Any]:
    """``stored`` without ``field`` when it is empty: payloads and answers stored before the
    field existed keep their bytes (and their fingerprints)."""
    if not stored.get(field):
        stored.pop(field, None)
    return stored


class ElicitationPayload(PageModel):
    scheme: Literal["binary", "ranking", "likert"]
    text: str
    items: list[Item]
    levels: int | None = None
    # the protocol's declared default (``elicitation.default``): what an unanswered item takes
    default: Literal["shown_order", "cannot"] | StrictInt | StrictBool | None = None
    # the fewest items the answer must leave changeable (``elicitation.min_changeable``)
    min_changeable: int = 0

    @model_serializer(mode="wrap")
    def _stored(self, handler: Any) -> dict[str, Any]:
        """The stored payload names ``min_changeable`` only when the protocol sets one."""
        return _without_empty(handler(self), "min_changeable")


class ElicitationAnswer(PageModel):
    answers: dict[str, StrictBool | StrictInt | None]
    left_at_default: list[str] = []  # items the person left at the protocol's default

    @model_serializer(mode="wrap")
    def _stored(self, handler: Any) -> dict[str, Any]:
        """The stored answer names ``left_at_default`` only when something was left at it."""
        return _without_empty(handler(self), "left_at_default")


class _Elicitation(PageKind):
    slot = "elicitation"
    answer_model = ElicitationAnswer
    scheme: ClassVar[str]

    def serves(self, ctx: SessionContext, p: Participant) -> bool:
        return ctx.protocol.elicitation.scheme == self.scheme

    def build(self, ctx: SessionContext, p: Participant, page_id: str) -> tuple[str, Any]:
        spec, sc = ctx.protocol.elicitation, ctx.scenario
        items = [Item(feature=sc.features[j].name, label=sc.features[j].label,
                      help=sc.features[j].help) for j in sc.actionable]
        levels = (spec.likert_levels or len(items)) if self.scheme == "likert" else None
        return english("title.elicitation"), ElicitationPayload(
            scheme=self.scheme, items=items, levels=levels,  # type: ignore[arg-type]
            text=spec.shown_text(), default=spec.default, min_changeable=spec.min_changeable)

    def problems(self, payload: Any, answer: Any) -> list[str]:
        answers = answer.answers
        out = keys_problems(set(answers), [i.feature for i in payload.items], "item(s)")
        vals = {k: v for k, v in answers.items() if k in {i.feature for i in payload.items}}
        out += self.value_problems(payload, vals) + self.default_problems(payload, answer)
        return out or minimum_problems(payload, vals)

    def default_problems(self, payload: ElicitationPayload, answer: Any) -> list[str]:
        """Items marked as left at the default: only with a declared default, each once, each
        holding the default's value."""
        left = answer.left_at_default
        if not left:
            return []
        if payload.default is None:
            return ["left_at_default: this page has no default; every item needs an answer"]
        if len(set(left)) != len(left) or not set(left) <= set(answer.answers):
            return ["left_at_default: each item of the page at most once"]
        value = self.default_value(payload)
        out = []
        for k in left:
            want, got = value[k] if isinstance(value, dict) else value, answer.answers[k]
            if got != want or type(got) is not type(want):
                out.append(f"{k}: left at the default, so it must be {want!r}")
        return out

    def default_value(self, payload: ElicitationPayload) -> Any:
        """The value an item left at the declared default holds (the answer's units)."""
        return None if payload.default == "cannot" else payload.default

    def value_problems(self, payload: ElicitationPayload, vals: dict[str, Any]) -> list[str]:
        """Ranking and likert: a number per changeable item, null for the others."""
        out = [f"{k}: expected a number or null (cannot change)" for k, v in vals.items()
               if isinstance(v, bool)]
        nums = {k: v for k, v in vals.items() if isinstance(v, int) and not isinstance(v, bool)}
        return out + self.number_problems(payload, nums)

    def number_problems(self, payload: ElicitationPayload, nums: dict[str, int]) -> list[str]:
        return []

    def apply(self, w: Answering, p: Participant, page: Page, answer: Any) -> None:
        values = {name: (1 if v else None) if isinstance(v, bool) else v
                  for name, v in answer.answers.items()}
        spec = w.protocol.elicitation
        if self.scheme == "likert" and spec.likert_low == "hardest":  # to 1 = easiest
            levels = page.payload.levels
            values = {k: None if v is None else levels + 1 - v for k, v in values.items()}
        sc = w.scenario
        p.stated = profiles_from_elicitation(
            sc.feature_names, sc.actionable, [values], self.scheme,  # type: ignore[arg-type]
            likert_levels=w.protocol.elicitation.likert_levels,
        )
        w.store_stated(p, json.dumps(answer.answers))
        w.plans_needed(p)

    def synthetic_answer(self, sim: SyntheticContext, p: Participant, page: Page) -> Any:
        payload = page.payload
        answers = sim.population.elicitation(p.seq, payload.scheme, payload.levels,
                                             least=payload.min_changeable)
        if payload.scheme == "likert" and sim.protocol.elicitation.likert_low == "hardest":
            answers = {k: None if v is None else payload.levels + 1 - v  # as the page reads
                       for k, v in answers.items()}
        return {"answers": answers}


def changeable(answers: dict[str, Any]) -> int:
    """How many items an answer leaves changeable: true (binary) or a number (ranking,
    likert); false and null mean "cannot change"."""
    return sum(1 for v in answers.values() if v is True or (
        isinstance(v, int) and not isinstance(v, bool)))


def minimum_problems(payload: ElicitationPayload, answers: dict[str, Any]) -> list[str]:
    """The page's minimum of changeable items (``min_changeable``), in the participant's
    words (the interface text the page shows)."""
    n = payload.min_changeable
    return [english("elicitation.min_changeable", n=n)] if changeable(answers) < n else []


@register
class ElicitationBinary(_Elicitation):
    kind, scheme = "elicitation_binary", "binary"

    def value_problems(self, payload: ElicitationPayload, vals: dict[str, Any]) -> list[str]:
        return [f"{k}: expected true (can change) or false" for k, v in vals.items()
                if not isinstance(v, bool)]


@register
class ElicitationRanking(_Elicitation):
    kind, scheme = "elicitation_ranking", "ranking"

    def number_problems(self, payload: ElicitationPayload, nums: dict[str, int]) -> list[str]:
        ranks = sorted(nums.values())
        if ranks != list(range(1, len(nums) + 1)):
            return [f"ranks must be 1..{len(nums)} (easiest first), each used once; got {ranks}"]
        return []

    def default_value(self, payload: ElicitationPayload) -> Any:
        """The order first shown: item k ranked k (a ranking is left at it as a whole)."""
        return {item.feature: k for k, item in enumerate(payload.items, 1)}

    def default_problems(self, payload: ElicitationPayload, answer: Any) -> list[str]:
        out = super().default_problems(payload, answer)
        if not out and answer.left_at_default and len(answer.left_at_default) != len(
                payload.items):
            out.append("left_at_default: a ranking is left at the order shown as a whole")
        return out


@register
class ElicitationLikert(_Elicitation):
    kind, scheme = "elicitation_likert", "likert"

    def number_problems(self, payload: ElicitationPayload, nums: dict[str, int]) -> list[str]:
        return [f"{k}: difficulty must be 1..{payload.levels}, got {v}" for k, v in nums.items()
                if not 1 <= v <= (payload.levels or 0)]
