"""A toy page kind, added the documented way (docs/adding-a-page-kind.md): one class, one
renderer with its load answer. Asks "how familiar are you with credit applications?" on a
1-5 scale in the scenario slot of a study whose id is ``toy-kind``; the answer is stored as
every answer is (``responses``). Imported through ``$RECOURSE_STUDY_PAGE_KINDS``."""

from __future__ import annotations

from typing import Any

import streamlit as st
from pydantic import Field, StrictInt

from protocols.running.pages import PageKind, PageModel, register
from study_app.web import widgets
from study_app.web.registry import LoadPage, load_answers, renders

LEVELS = ("1 · not at all", "2", "3", "4", "5 · very")


class FamiliarityPayload(PageModel):
    question: str


class FamiliarityAnswer(PageModel):
    level: StrictInt = Field(ge=1, le=5)


@register
class Familiarity(PageKind):
    kind, slot = "toy_familiarity", "scenario"
    answer_model = FamiliarityAnswer

    def serves(self, ctx: Any, p: Any) -> bool:
        return ctx.protocol.id == "toy-kind"

    def build(self, ctx: Any, p: Any, page_id: str) -> tuple[str, FamiliarityPayload]:
        return "Before we start", FamiliarityPayload(
            question="How familiar are you with credit applications?")

    def synthetic_answer(self, sim: Any, p: Any, page: Any) -> dict[str, Any]:
        return {"level": 1 + p.seq % 5}


@renders("toy_familiarity")
def render_familiarity(page: Any) -> dict[str, Any] | None:
    level = widgets.one_question_form(
        page.id, "how familiar you are",
        lambda: st.radio(page.payload.question, LEVELS, index=None, horizontal=True,
                         key=f"{page.id}:level"))
    return None if level is None else {"level": LEVELS.index(level) + 1}


@load_answers("toy_familiarity")
def load_familiarity(page: LoadPage) -> tuple[dict[str, Any], dict[str, Any]]:
    level = page.rng.randint(1, 5)
    return {"level": LEVELS[level - 1]}, {"level": level}
