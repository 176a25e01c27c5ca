"""Plan generation: the plans each participant rates, for many participants at once.

For every arm, the participants assigned to it (all of them under ``within`` assignment) are
served by ONE call of the arm's method: its candidate set (or its recourse) on the stacked
factual profiles. The method sees the stated actionability profiles when the arm is
``personalized`` and there was an elicitation, otherwise everybody able to act on every
globally actionable feature. A distance design (protocols.design) then picks each person's
plans with a generator seeded by (protocol seed, participant's consent order, arm), so the
result does not depend on who else is in the batch: the web path (a batch of one) and the
simulator (a batch of hundreds) produce the same plans for the same person. Interactive arms (HARE) get
their plans from the interaction instead (protocols.interactive).

The chosen plans are evaluated once more through ``RecourseContext.evaluate`` against the
STATED profile (weighted cost, hap, violations, satisfaction and violation relative to what
the person said; NaN preference terms without elicitation). Plans are then put in the
participant's counterbalanced order (protocols.design.plan_order) and given positions
0..n-1 and ids ``<participant_id>-p<position + 1>``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.metric_names import METRIC_NAMES, PREFERENCE_METRICS
from engine.preferences import ActionabilityProfiles
from engine.recourse import RecourseBatch
from engine.scenarios.base import Scenario
from protocols import design
from protocols.resources import StudyResources
from protocols.schema import Protocol


@dataclass
class PlanRequest:
    """One participant needing plans: factual x (d,) and stated profile (a batch of one)."""

    participant_id: str
    seq: int  # the participant's design number (Participant.design_seq)
    arm: str  # an arm id, or "within" for every arm
    x: np.ndarray
    stated: ActionabilityProfiles | None


@dataclass
class ShownPlan:
    """A plan a participant rates: row ``row`` of ``plans`` (the engine's record of plans,
    evaluated against the participant's stated profile) and its place in the study."""

    plan_id: str
    participant_id: str
    arm: str
    position: int
    selection: str
    plans: RecourseBatch
    row: int

    @property
    def method(self) -> str:
        return self.plans.method

    def value(self, name: str) -> Any:
        """A metric of this plan (``engine.metric_names``) as a Python scalar, NaN as None."""
        return self.plans.value(name, self.row)

    def array(self, name: str) -> np.ndarray:
        """A column of this plan as numpy (``x``, ``x_cf``, ``action_mask``, ...)."""
        return self.plans.array(name)[self.row]

    def stored(self, study_id: str, feature_names: tuple[str, ...], at: Any) -> dict[str, Any]:
        """The ``plans`` row (the record's JSON form plus the study's columns)."""
        rec = self.plans.record(self.row, feature_names)
        return {
            "study_id": study_id, "participant_id": self.participant_id,
            "plan_id": self.plan_id, "arm": self.arm, "method": self.method,
            "position": self.position, "selection": self.selection,
            **{k: rec[k] for k in METRIC_NAMES},
            **{k: self.value(k) for k in PREFERENCE_METRICS},
            "density_source": rec["density_source"],
            "actions_json": json.dumps(rec["actions"]), "x_json": json.dumps(rec["x"]),
            "x_cf_json": json.dumps(rec["x_cf"]), "created_at": at,
        }

    @classmethod
    def from_stored(cls, rows: list[dict[str, Any]], scenario: Scenario) -> list[ShownPlan]:
        """Stored ``plans`` rows back as shown plans."""
        out = []
        for r in rows:
            rec = {"method": r["method"], "x": json.loads(r["x_json"]),
                   "x_cf": json.loads(r["x_cf_json"]), "actions": json.loads(r["actions_json"]),
                   "density_source": r["density_source"],
                   **{k: r[k] for k in (*METRIC_NAMES, *PREFERENCE_METRICS)}}
            out.append(cls(plan_id=r["plan_id"], participant_id=r["participant_id"],
                           arm=r["arm"], position=int(r["position"]), selection=r["selection"],
                           plans=RecourseBatch.from_records([rec], scenario), row=0))
        return out


def shown(
    plans: RecourseBatch, rows: list[int], participant_id: str, arm: str, selections: list[str]
) -> list[ShownPlan]:
    """Unordered shown plans (position and id set by ``finalize``) of one person."""
    return [ShownPlan("", participant_id, arm, -1, why, plans, int(i))
            for i, why in zip(rows, selections, strict=True)]


def finalize(protocol: Protocol, seq: int, plans: list[ShownPlan]) -> list[ShownPlan]:
    """Counterbalanced order, positions and ids of one participant's plans."""
    order = design.plan_order(protocol, seq, len(plans))
    out = []
    for position, k in enumerate(order):
        p = plans[k]
        p.position = position
        p.plan_id = f"{p.participant_id}-p{position + 1}"
        out.append(p)
    return out


def generate_plans(
    protocol: Protocol, resources: StudyResources, requests: list[PlanRequest]
) -> dict[str, list[ShownPlan]]:
    """Plans of every request (module docstring), batched per arm."""
    per_person: dict[str, list[ShownPlan]] = {r.participant_id: [] for r in requests}
    for arm_index, arm in enumerate(protocol.arms):
        if arm.interactive:
            continue  # its plans come out of the interaction (protocols.interactive)
        reqs = [r for r in requests if r.arm in (arm.id, "within")]
        if reqs:
            _arm_plans(protocol, resources, arm_index, reqs, per_person)
    by_id = {r.participant_id: r for r in requests}
    return {pid: finalize(protocol, by_id[pid].seq, plans) for pid, plans in per_person.items()}


def _arm_plans(
    protocol: Protocol, resources: StudyResources, arm_index: int, reqs: list[PlanRequest],
    per_person: dict[str, list[ShownPlan]],
) -> None:
    """One arm's plans for its requests, added to ``per_person``."""
    arm = protocol.arms[arm_index]
    context = resources.context(arm)
    x = np.stack([r.x for r in reqs])
    stated = (ActionabilityProfiles.concat([r.stated for r in reqs])  # type: ignore[misc]
              if reqs[0].stated is not None else None)
    seen = stated if arm.personalized and stated is not None else context.everybody(len(reqs))
    table = resources.method(arm).plans(
        x, seen, candidates=arm.source == "candidates" and protocol.plans.design != "best")
    person = table.array("person")
    order = np.argsort(person, kind="stable")
    bounds = np.searchsorted(person[order], np.arange(len(reqs) + 1))
    chosen: list[int] = []
    reasons: list[str] = []
    owners: list[int] = []
    for i, r in enumerate(reqs):
        rows = order[bounds[i]:bounds[i + 1]]
        if len(rows) == 0:
            continue
        rng = design.rng_for(protocol.seed, design.STREAM_DESIGN, r.seq, arm_index)
        picks = _pick(protocol, table, rows, rng)
        chosen += [int(rows[k]) for k, _ in picks]
        reasons += [why for _, why in picks]
        owners += [i] * len(picks)
    if not chosen:
        return
    sub = table.select(chosen)
    evaluated = context.evaluate(
        table.method, sub.x, sub.action_mask, sub.action_values,
        stated[owners] if stated is not None else None, x_cf=sub.x_cf, found=sub.found,
    )
    owners_np = np.array(owners)
    for i, r in enumerate(reqs):
        idx = np.flatnonzero(owners_np == i)
        if len(idx):
            per_person[r.participant_id] += shown(
                evaluated, idx.tolist(), r.participant_id, arm.id, [reasons[k] for k in idx])


def _pick(
    protocol: Protocol, table: RecourseBatch, rows: np.ndarray, rng: np.random.Generator
) -> list[tuple[int, str]]:
    """Indices into ``rows`` chosen by the protocol's distance design."""
    spec = protocol.plans
    n = spec.per_participant
    if spec.design == "best":
        return [(0, "best")]
    if spec.design == "tominaga":
        return design.select_tominaga(table.array(spec.sparsity)[rows],
                                      table.array(spec.proximity)[rows], n, rng)
    return design.select_stratified(table.array(spec.distance)[rows], n, rng)
