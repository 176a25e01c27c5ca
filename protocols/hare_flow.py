"""The HARE part of a session: one query per page, resumable, then two plans to rate.

A participant of a ``hare`` arm, once their constraints are stated, starts an
``engine.recourse.hare_session.HareSession`` (seeded by the protocol seed and their sequence
number) over the arm's Hare method. Each query becomes a page: ``hare_choice`` (two
candidates, answer 0 or 1) or ``hare_accept`` (one candidate, accept or go on). Every answer
is stored in ``comparisons`` with the options shown, and the session's JSON state is kept in
the participant's state (so a restart resumes at the same query). When HARE is done, its
final plan and the base method's plan for the same person are evaluated against the stated
profile like every other plan (protocols.planning) and shown for rating in counterbalanced
order (selection ``hare_final`` / ``hare_base``).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import numpy as np

from engine.preferences import ActionabilityProfiles
from engine.scm import as_batch
from engine.study_plans import evaluate_plans, everybody, method_plans
from protocols import design
from protocols.planning import PlanRecord, finalize, records_from_table
from protocols.resources import StudyResources
from protocols.schema import Protocol
from protocols.state import Participant

Rows = dict[str, list[dict[str, Any]]]


class HareFlow:
    """Starts, advances and finishes participants' HARE interactions."""

    def __init__(self, protocol: Protocol, resources: StudyResources) -> None:
        self.protocol = protocol
        self.resources = resources

    @property
    def session_cls(self) -> Any:
        if self.resources.hare_session is None:
            from engine.recourse.hare_session import HareSession

            self.resources.hare_session = HareSession
        return self.resources.hare_session

    def _seed(self, p: Participant) -> int:
        rng = design.rng_for(self.protocol.seed, design.STREAM_HARE, p.seq)
        return int(rng.integers(2**31 - 1))

    def _x(self, p: Participant) -> Any:
        """The factual as a (1, d) tensor (the HareSession contract's input)."""
        assert p.x is not None
        return as_batch(p.x, self.resources.scenario.d)[0]

    def _seen(self, p: Participant) -> ActionabilityProfiles:
        """The profile the methods see: stated when the arm is personalized."""
        if self.protocol.arm(p.arm).personalized and p.stated is not None:
            return p.stated
        return everybody(self.resources.scenario, 1)

    def start(self, p: Participant, rows: Rows, at: datetime) -> list[PlanRecord] | None:
        """Begin the interaction; the final plans if HARE asks nothing at all."""
        arm = self.protocol.arm(p.arm)
        hare = self.resources.method(arm)
        session = self.session_cls.start(hare, self._x(p), self._seen(p), seed=self._seed(p))
        return self._advance(p, session)

    def answer(
        self, p: Participant, page_id: str, answer: Any, rows: Rows, at: datetime
    ) -> list[PlanRecord] | None:
        """Apply a hare page's answer; the final plans when the interaction ends."""
        arm = self.protocol.arm(p.arm)
        session = self.session_cls.from_json(p.hare_json, self.resources.method(arm))
        query = p.hare_query
        assert query is not None
        row = {"study_id": p.study_id, "participant_id": p.participant_id,
               "step": int(page_id.split("-")[1]), "kind": query["kind"],
               "options_json": json.dumps(query["options"]), "choice": None, "accepted": None,
               "answered_at": at}
        if query["kind"] == "compare":
            session.answer(int(answer.choice))
            row["choice"] = int(answer.choice)
        else:
            session.accept(bool(answer.accept))
            row["accepted"] = bool(answer.accept)
        rows["comparisons"].append(row)
        return self._advance(p, session)

    def _advance(self, p: Participant, session: Any) -> list[PlanRecord] | None:
        query = session.next_query() if not session.done else None
        p.hare_json = session.to_json()
        if query is not None and query.kind != "done":
            p.hare_query = {"kind": query.kind, "options": _plain(query.options)}
            p.hare_asked += 1
            return None
        p.hare_done = True
        p.hare_query = None
        return self._final_plans(p, session.final())

    def _final_plans(self, p: Participant, final: dict[str, Any]) -> list[PlanRecord]:
        """HARE's final action (when it has one) and the base method's plan, evaluated
        against the stated profile, in counterbalanced order."""
        arm = self.protocol.arm(p.arm)
        names = self.resources.scenario.feature_names
        ctx = self.resources.context(arm)
        x = np.asarray(p.x, dtype=float)[None]
        plans: list[PlanRecord] = []
        actions = final.get("actions") or {}
        if actions:  # an empty final action is not shown
            mask = np.array([[n in actions for n in names]])
            values = np.array([[actions.get(n, x[0, j]) for j, n in enumerate(names)]])
            table = evaluate_plans(ctx, "hare", x, mask, values, p.stated)
            plans += records_from_table(table, p.participant_id, arm.id, ["hare_final"])
        base = method_plans(self.resources.base_method(arm), x, self._seen(p), candidates=False)
        if len(base):
            table = evaluate_plans(ctx, base.method, base.x, base.action_mask,
                                   base.action_values, p.stated, x_cf=base.x_cf)
            plans += records_from_table(table, p.participant_id, arm.id, ["hare_base"])
        return finalize(self.protocol, p.seq, plans)


def _plain(v: Any) -> Any:
    """JSON-safe copy of a query's option records (tensors and numpy scalars to Python)."""
    if isinstance(v, dict):
        return {str(k): _plain(w) for k, w in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(w) for w in v]
    if isinstance(v, np.ndarray) or type(v).__name__ == "Tensor":
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, float) and v != v:
        return None
    return v
