"""The plan page: one plan (current -> suggested, every item), rated on 7-point acceptance
and action scales, with optional reasons and "is it impossible for you?" per action item.

The impossibility question is asked for the action items only (one cannot implement a
consequence directly). Synthetic participants rate all plan pages of a step at once (one
vectorized draw of the rating model) and write their latent values to ``sim_ratings``.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from pydantic import Field, StrictBool, StrictInt, StrictStr

from data.columns import RATINGS, SIM_RATINGS
from protocols.definition.interface_text import english
from protocols.running import display
from protocols.running.context import Answering, SessionContext, SyntheticContext
from protocols.running.pages.base import Page, PageKind, PageModel, keys_problems, register
from protocols.running.state import Participant


class ScaleQuestion(PageModel):
    text: str
    labels: list[str]


class WhyQuestion(PageModel):
    text: str
    min_chars: int
    max_chars: int


class ImpossibleItem(PageModel):
    feature: str
    label: str
    current: str
    suggested: str


class PlanPayload(PageModel):
    plan_id: str
    number: int
    of: int
    text: str
    rows: list[display.PlanRow]
    acceptance: ScaleQuestion
    action: ScaleQuestion
    why: WhyQuestion | None
    impossible: list[ImpossibleItem]
    impossible_text: str
    current_label: str = "Your profile now"
    suggested_label: str = "Suggested profile"


class PlanAnswer(PageModel):
    acceptance: StrictInt = Field(ge=1, le=7)
    action: StrictInt = Field(ge=1, le=7)
    acceptance_why: StrictStr = ""
    action_why: StrictStr = ""
    impossible: dict[str, StrictBool] = Field(default_factory=dict)


@register
class Plan(PageKind):
    kind = slot = "plan"
    answer_model = PlanAnswer

    def build(self, ctx: SessionContext, p: Participant, page_id: str) -> tuple[str, Any]:
        k = int(page_id.split("-")[1])
        q = ctx.protocol.questions
        plan = p.plans[k - 1]
        rows = plan.rows
        impossible = [ImpossibleItem(feature=r.feature, label=r.label, current=r.current,
                                     suggested=r.suggested)
                      for r in rows if r.kind == "action"] if q.impossible else []
        why = (WhyQuestion(text=q.why.text, min_chars=q.why.min_chars,
                           max_chars=q.why.max_chars) if q.why.enabled else None)
        view = ctx.protocol.plan_view
        return english("title.plan", number=k, of=len(p.plans)), PlanPayload(
            plan_id=plan.plan_id, number=k, of=len(p.plans),
            text=view.plan_text(k, len(p.plans)), rows=rows,
            current_label=view.current_label, suggested_label=view.suggested_label,
            acceptance=ScaleQuestion(text=q.acceptance.text, labels=list(q.acceptance.labels)),
            action=ScaleQuestion(text=q.action.text, labels=list(q.action.labels)),
            why=why, impossible=impossible, impossible_text=q.impossible_text,
        )

    def problems(self, payload: Any, answer: Any) -> list[str]:
        out = []
        if payload.why is not None:
            for key in ("acceptance_why", "action_why"):
                n = len(getattr(answer, key).strip())
                if n < payload.why.min_chars:
                    out.append(f"{key}: at least {payload.why.min_chars} characters, got {n}")
                if n > payload.why.max_chars:
                    out.append(f"{key}: at most {payload.why.max_chars} characters, got {n}")
        else:
            out += [f"{k}: this study asks no reason" for k in ("acceptance_why", "action_why")
                    if getattr(answer, k)]
        expected = [i.feature for i in payload.impossible]
        return out + keys_problems(set(answer.impossible), expected, "impossibility item(s)")

    def apply(self, w: Answering, p: Participant, page: Page, answer: Any) -> None:
        plan = p.plans[page.payload.number - 1]
        w.rows[RATINGS.name].append(RATINGS.row(
            study_id=w.ctx.study_id, participant_id=p.participant_id, plan_id=plan.plan_id,
            acceptance=answer.acceptance, action=answer.action,
            acceptance_why=answer.acceptance_why, action_why=answer.action_why,
            impossible=any(answer.impossible.values()),
            impossible_json=json.dumps(answer.impossible), answered_at=w.at,
            language=p.language,
        ))

    def synthetic_answers(
        self, sim: SyntheticContext, items: list[tuple[Participant, Page]]
    ) -> list[Any]:
        """Ratings of many plan pages at once (plus their simulation-truth rows)."""
        pop = sim.population
        key = pop.behaviour.ratings.distance
        plans = [p.plans[page.payload.number - 1] for p, page in items]
        seqs = [p.seq for p, _ in items]
        draws = pop.rate(
            np.array(seqs), np.array([pl.position for pl in plans]),
            np.array([pl.value(key) for pl in plans], dtype=float),
            np.stack([pl.action_mask for pl in plans]),
        )
        names = sim.scenario.feature_names
        out = []
        for k, ((p, page), plan) in enumerate(zip(items, plans, strict=True)):
            hard = pop.person(seqs[k]).hard
            impossible = {i.feature: not bool(hard[names.index(i.feature)])
                          for i in page.payload.impossible}
            labels = [i.label for i in page.payload.impossible if impossible[i.feature]]
            acc, act = int(draws["acceptance"][k]), int(draws["action"][k])
            why = page.payload.why
            acc_why, act_why = pop.reasons(seqs[k], plan.position, acc, act, labels)
            out.append({"acceptance": acc, "action": act,
                        "acceptance_why": acc_why if why else "",
                        "action_why": act_why if why else "", "impossible": impossible})
            distance = plan.value(key)
            sim.extra[SIM_RATINGS.name].append(SIM_RATINGS.row(
                study_id=sim.study_id, participant_id=p.participant_id, plan_id=plan.plan_id,
                distance=float(distance) if distance is not None else None,
                satisfaction_true=float(draws["satisfaction"][k]),
                violation_true=float(draws["violation"][k]),
                eta_acceptance=float(draws["eta_acceptance"][k]),
                eta_action=float(draws["eta_action"][k]),
            ))
        return out
