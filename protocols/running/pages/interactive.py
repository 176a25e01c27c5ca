"""The pages of an interactive method's questions (HARE): one per question.

``hare_choice``: which of two plans would you rather carry out (answer 0 or 1);
``hare_accept``: is this plan good enough (accept, or keep looking). The question and its
candidate plans come from the participant's pending query (protocols.running.interactive); the
answer advances the interaction (its next search runs with those of the other answers of the
transaction: ``Answering.finish_interactions``) and, when it ends, attaches the plans to
rate. A synthetic participant answers with the engine's HARE answering model on their true personal cost.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import StrictBool

from engine.recourse import RecourseBatch
from protocols.definition.interface_text import english
from protocols.running import display
from protocols.running.context import Answering, SessionContext, SyntheticContext
from protocols.running.pages.base import Page, PageKind, PageModel, register
from protocols.running.state import Participant


class HareOption(PageModel):
    rows: list[display.PlanRow]


class HareChoicePayload(PageModel):
    query: int
    budget: int | None
    text: str
    options: list[HareOption]


class HareChoiceAnswer(PageModel):
    choice: Literal[0, 1]


class HareAcceptPayload(PageModel):
    query: int
    budget: int | None
    text: str
    rows: list[display.PlanRow]


class HareAcceptAnswer(PageModel):
    accept: StrictBool


class _Question(PageKind):
    slot = "hare"
    query_kind: str  # the interactive session's query kind this page asks

    def serves(self, ctx: SessionContext, p: Participant) -> bool:
        return p.query is not None and p.query["kind"] == self.query_kind

    def numbering(self, ctx: SessionContext, p: Participant, page_id: str) -> dict[str, Any]:
        """The question's number and the expected number of questions (None: unknown)."""
        return {"query": int(page_id.split("-")[1]),
                "budget": ctx.interactive.expected(p) or None}

    def option_rows(self, ctx: SessionContext, p: Participant) -> list[list[display.PlanRow]]:
        """Plan rows of each candidate of the pending query (``RecourseBatch.record``s)."""
        assert p.query is not None and p.x is not None
        options = RecourseBatch.from_records(p.query["options"], ctx.scenario)
        return [display.plan_rows(ctx.scenario, options, i) for i in range(len(options))]

    def apply(self, w: Answering, p: Participant, page: Page, answer: Any) -> None:
        w.interactions.append(w.ctx.interactive.answer(p, page.id, answer, w.rows, w.at))

    def option_costs(self, sim: SyntheticContext, p: Participant) -> list[float]:
        """The participant's true personal cost of each candidate shown."""
        assert p.query is not None and p.x is not None
        names = sim.scenario.feature_names
        costs = []
        for rec in p.query["options"]:
            actions = rec.get("actions", {})
            mask = np.array([n in actions for n in names])
            values = np.array([actions.get(n, p.x[j]) for j, n in enumerate(names)], dtype=float)
            costs.append(sim.population.personal_cost(p.seq, p.x, mask, values))
        return costs


@register
class HareChoice(_Question):
    kind, query_kind = "hare_choice", "compare"
    answer_model = HareChoiceAnswer

    def build(self, ctx: SessionContext, p: Participant, page_id: str) -> tuple[str, Any]:
        options = [HareOption(rows=r) for r in self.option_rows(ctx, p)]
        return english("title.hare_choice"), HareChoicePayload(
            **self.numbering(ctx, p, page_id), options=options,
            text=english("hare.choice_text"))

    def synthetic_answer(self, sim: SyntheticContext, p: Participant, page: Page) -> Any:
        left, right = self.option_costs(sim, p)
        return {"choice": sim.population.choose(p.seq, page.payload.query, left, right)}


@register
class HareAccept(_Question):
    kind, query_kind = "hare_accept", "accept"
    answer_model = HareAcceptAnswer

    def build(self, ctx: SessionContext, p: Participant, page_id: str) -> tuple[str, Any]:
        return english("title.hare_accept"), HareAcceptPayload(
            **self.numbering(ctx, p, page_id), rows=self.option_rows(ctx, p)[0],
            text=english("hare.accept_text"))

    def synthetic_answer(self, sim: SyntheticContext, p: Participant, page: Page) -> Any:
        return {"accept": sim.population.accepts(p.seq, self.option_costs(sim, p)[0])}
