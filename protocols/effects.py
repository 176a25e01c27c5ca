"""What an answer changes: the participant's new state and the rows to write.

``Effects.apply`` is called by ``protocols.session.Study`` for every validated answer, before
anything is written; it updates the participant (a copy) in place and collects rows by
table, so that the session can write all of them in one transaction. Plan generation is
deferred (``PlanRequest``) so the session can batch it across participants.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.preferences import ActionabilityProfiles, profiles_from_elicitation
from engine.study_plans import decide
from protocols import display
from protocols import pages as pg
from protocols.planning import PlanRecord, PlanRequest
from protocols.state import Participant, profiles_row

if TYPE_CHECKING:
    from protocols.session import Study

Rows = dict[str, list[dict[str, Any]]]
APPROVED_NOTE = (
    "The system would approve the profile you entered. For this study, please imagine you "
    "are the applicant below, whose application was rejected."
)


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Effects:
    """The effects of answers in one study (module docstring)."""

    def __init__(self, study: Study) -> None:
        self.study = study

    def event(self, pid: str, page_id: str | None, event: str,
               detail: dict[str, Any] | None = None) -> dict[str, Any]:
        return {"study_id": self.study.study_id, "participant_id": pid, "page_id": page_id,
                "event": event, "detail_json": json.dumps(detail) if detail else None,
                "occurred_at": now()}

    def set_profile(self, p: Participant, x: np.ndarray, source: str, rows: Rows) -> None:
        p.x = np.asarray(x, dtype=float)
        p.profile_source = source
        proba, ok = decide(self.study.resources.classifier, p.x)
        proba, rejected = float(proba[0]), not bool(ok[0])
        names = self.study.scenario.feature_names
        rows["profiles"].append({
            "study_id": self.study.study_id, "participant_id": p.participant_id, "source": source,
            "x_json": json.dumps(dict(zip(names, p.x.tolist(), strict=True))),
            "display_json": json.dumps({r.feature: r.value
                                        for r in display.profile_rows(self.study.scenario, p.x)}),
            "proba": proba, "rejected": rejected,
        })

    def apply(
        self, p: Participant, page: pg.Page, answer: Any, rows: Rows,
        plan_requests: list[PlanRequest], at: datetime,
    ) -> None:
        """Update ``p`` in place for ``answer`` and collect the rows to write."""
        pid, kind = p.participant_id, page.kind
        correct = None
        needs_plans = False
        if kind == "consent" and not answer.agree:
            p.status = "declined"
        elif kind == "screening":
            ok = all(answer.answers[q.id] in q.eligible for q in self.study.protocol.screening)
            if not ok:
                p.status = "screened_out"
        elif kind == "profile_entry":
            x = display.profile_from_answer(self.study.scenario, answer)
            approved = bool(decide(self.study.resources.classifier, x)[1][0])
            if not approved:
                self.set_profile(p, x, "own", rows)
            elif self.study.protocol.profile.on_approved == "persona":
                self.set_profile(p, self.study.persona(p.seq), "persona_fallback", rows)
                p.note = APPROVED_NOTE
            else:
                p.status = "approved"
            needs_plans = self.study.protocol.elicitation.scheme == "none"
        elif kind == "persona":
            needs_plans = self.study.protocol.elicitation.scheme == "none"
        elif kind.startswith("elicitation_"):
            p.stated = self.stated(answer)
            rows["elicitations"].append({
                "study_id": self.study.study_id, "participant_id": pid,
                "answer_json": json.dumps(answer.answers),
                **profiles_row(p.stated, self.study.scenario.feature_names),
            })
            needs_plans = True
        elif kind == "plan":
            plan = p.plans[page.payload.number - 1]
            rows["ratings"].append({
                "study_id": self.study.study_id, "participant_id": pid, "plan_id": plan.plan_id,
                "acceptance": answer.acceptance, "action": answer.action,
                "acceptance_why": answer.acceptance_why, "action_why": answer.action_why,
                "impossible": any(answer.impossible.values()),
                "impossible_json": json.dumps(answer.impossible), "answered_at": at,
            })
        elif kind in ("hare_choice", "hare_accept"):
            final = self.study.hare.answer(p, page.id, answer, rows, at)
            if final is not None:
                self.attach_plans(p, final, rows, at)
        elif kind == "attention":
            check = next(c for c in self.study.protocol.attention_checks
                         if f"attention-{c.id}" == page.id)
            correct = answer.choice == check.correct
        rows["responses"].append({
            "study_id": self.study.study_id, "participant_id": pid, "page_id": page.id, "kind": kind,
            "step": p.step, "answer_json": answer.model_dump_json(), "correct": correct,
            "answered_at": at,
        })
        rows["events"].append(self.event(pid, page.id, "answer"))
        if p.status != "active":
            rows["events"].append(self.event(pid, page.id, p.status))
        p.answered.append(page.id)
        p.step += 1
        if needs_plans and p.active:
            assert p.x is not None
            if p.arm != "within" and self.study.protocol.arm(p.arm).method == "hare":
                final = self.study.hare.start(p, rows, at)
                if final is not None:
                    self.attach_plans(p, final, rows, at)
            else:
                plan_requests.append(PlanRequest(p.participant_id, p.seq, p.arm, p.x, p.stated))

    def stated(self, answer: pg.ElicitationAnswer) -> ActionabilityProfiles:
        spec = self.study.protocol.elicitation
        sc = self.study.scenario
        values: dict[str, int | None] = {}
        for name, v in answer.answers.items():
            values[name] = (1 if v else None) if isinstance(v, bool) else v
        return profiles_from_elicitation(
            sc.feature_names, sc.actionable, [values], spec.scheme,  # type: ignore[arg-type]
            likert_levels=spec.likert_levels,
        )

    def attach_plans(
        self, p: Participant, plans: list[PlanRecord], rows: Rows, at: datetime
    ) -> None:
        p.plans = plans
        p.plans_ready = True
        names = self.study.scenario.feature_names
        rows["plans"] += [plan.row(self.study.study_id, names, at) for plan in plans]
        rows["events"].append(self.event(p.participant_id, None, "plans",
                                          {"n": len(plans)}))
