"""Plan generation: the plans each participant rates, for many participants at once.

For every arm, the participants assigned to it (all of them under ``within`` assignment) are
served by ONE call of the arm's method: ``candidates`` (or ``recourse``) on the stacked
factual profiles. The method sees the stated actionability profiles when the arm is
``personalized`` and there was an elicitation, otherwise everybody able to act on every
globally actionable feature. A distance design (protocols.design) then picks each person's
plans with a generator seeded by (protocol seed, participant seq, arm), so the result does
not depend on who else is in the batch: the web path (a batch of one) and the simulator (a
batch of hundreds) produce the same plans for the same person.

The chosen plans are evaluated once more through ``RecourseContext.evaluate`` against the
STATED profile (weighted cost, hap, violations relative to what the person said), and get
``satisfaction`` and ``violation`` from engine.metrics (NaN without elicitation). Plans are
then put in the participant's counterbalanced order (protocols.design.plan_order) and given
positions 0..n-1 and ids ``<participant_id>-p<position + 1>``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.preferences import ActionabilityProfiles
from engine.scenarios.base import Scenario
from engine.study_plans import (
    METRIC_FIELDS,
    PlanTable,
    changed_items,
    evaluate_plans,
    everybody,
    method_plans,
    stack_profiles,
)
from protocols import design
from protocols.resources import StudyResources
from protocols.schema import Protocol


@dataclass
class PlanRequest:
    """One participant needing plans: factual x (d,) and stated profile (a batch of one)."""

    participant_id: str
    seq: int
    arm: str  # an arm id, or "within" for every arm
    x: np.ndarray
    stated: ActionabilityProfiles | None


@dataclass
class PlanRecord:
    """A plan as stored (``row``) and as pages need it (arrays in model units)."""

    plan_id: str
    participant_id: str
    arm: str
    method: str
    position: int
    selection: str
    x: np.ndarray
    x_cf: np.ndarray
    action_mask: np.ndarray
    action_values: np.ndarray
    values: dict[str, Any]  # METRIC_FIELDS + satisfaction, violation, density_source
    changed: np.ndarray  # items that change (actions and consequences), for display

    def row(self, study_id: str, feature_names: tuple[str, ...], at: Any) -> dict[str, Any]:
        actions = {n: float(self.action_values[j]) for j, n in enumerate(feature_names)
                   if self.action_mask[j]}
        return {
            "study_id": study_id, "participant_id": self.participant_id, "plan_id": self.plan_id,
            "arm": self.arm, "method": self.method, "position": self.position,
            "selection": self.selection, **self.values,
            "actions_json": json.dumps(actions),
            "x_json": json.dumps(dict(zip(feature_names, self.x.tolist(), strict=True))),
            "x_cf_json": json.dumps(dict(zip(feature_names, self.x_cf.tolist(), strict=True))),
            "created_at": at,
        }

    @classmethod
    def from_rows(cls, rows: list[dict[str, Any]], scenario: Scenario) -> list[PlanRecord]:
        """Stored plans back as records (``changed`` recomputed in one batch)."""
        plans = [cls.from_row(r, scenario.feature_names) for r in rows]
        if plans:
            changed = changed_items(scenario, np.stack([p.x for p in plans]),
                                    np.stack([p.x_cf for p in plans]))
            for p, c in zip(plans, changed, strict=True):
                p.changed = c
        return plans

    @classmethod
    def from_row(cls, row: dict[str, Any], feature_names: tuple[str, ...]) -> PlanRecord:
        x = json.loads(row["x_json"])
        x_cf = json.loads(row["x_cf_json"])
        actions = json.loads(row["actions_json"])
        mask = np.array([n in actions for n in feature_names])
        xa = np.array([x[n] for n in feature_names], dtype=float)
        values = np.array([actions.get(n, x[n]) for n in feature_names], dtype=float)
        keep = METRIC_FIELDS + ("satisfaction", "violation", "density_source")
        return cls(
            plan_id=row["plan_id"], participant_id=row["participant_id"], arm=row["arm"],
            method=row["method"], position=int(row["position"]), selection=row["selection"],
            x=xa, x_cf=np.array([x_cf[n] for n in feature_names], dtype=float),
            action_mask=mask, action_values=values, values={k: row[k] for k in keep},
            changed=mask.copy(),
        )


def records_from_table(
    table: PlanTable, participant_id: str, arm: str, selections: list[str]
) -> list[PlanRecord]:
    """Unordered records (position and id set by ``finalize``) of one person's plans."""
    out = []
    for i in range(len(table)):
        vals = table.row_values(i)
        vals["density_source"] = table.density_source
        out.append(PlanRecord(
            plan_id="", participant_id=participant_id, arm=arm, method=table.method,
            position=-1, selection=selections[i], x=table.x[i].copy(),
            x_cf=table.x_cf[i].copy(), action_mask=table.action_mask[i].copy(),
            action_values=table.action_values[i].copy(), values=vals,
            changed=table.changed[i].copy(),
        ))
    return out


def finalize(protocol: Protocol, seq: int, plans: list[PlanRecord]) -> list[PlanRecord]:
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
) -> dict[str, list[PlanRecord]]:
    """Plans of every request (module docstring), batched per arm."""
    scenario = resources.scenario
    per_person: dict[str, list[PlanRecord]] = {r.participant_id: [] for r in requests}
    for arm_index, arm in enumerate(protocol.arms):
        if arm.method == "hare":
            continue  # HARE's plans come out of the interaction (protocols.hare_flow)
        reqs = [r for r in requests if r.arm in (arm.id, "within")]
        if not reqs:
            continue
        x = np.stack([r.x for r in reqs])
        stated = stack_profiles([r.stated for r in reqs]) if reqs[0].stated is not None else None
        seen = stated if arm.personalized and stated is not None else everybody(scenario, len(reqs))
        table = method_plans(resources.method(arm), x, seen,
                             candidates=arm.source == "candidates"
                             and protocol.plans.design != "best")
        order = np.argsort(table.person, kind="stable")
        bounds = np.searchsorted(table.person[order], np.arange(len(reqs) + 1))
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
            continue
        sub = table.take(chosen)
        evaluated = evaluate_plans(
            resources.context(arm), table.method, sub.x, sub.action_mask, sub.action_values,
            stated[owners] if stated is not None else None, x_cf=sub.x_cf,
            found=sub.values["found"],
        )
        owners_np = np.array(owners)
        for i, r in enumerate(reqs):
            idx = np.flatnonzero(owners_np == i)
            if len(idx):
                per_person[r.participant_id] += records_from_table(
                    evaluated.take(idx), r.participant_id, arm.id, [reasons[k] for k in idx]
                )
    by_id = {r.participant_id: r for r in requests}
    return {pid: finalize(protocol, by_id[pid].seq, plans) for pid, plans in per_person.items()}


def _pick(
    protocol: Protocol, table: PlanTable, rows: np.ndarray, rng: np.random.Generator
) -> list[tuple[int, str]]:
    """Indices into ``rows`` chosen by the protocol's distance design."""
    spec = protocol.plans
    n = spec.per_participant
    if spec.design == "best":
        return [(0, "best")]
    if spec.design == "tominaga":
        return design.select_tominaga(table.values[spec.sparsity][rows],
                                      table.values[spec.proximity][rows], n, rng)
    return design.select_stratified(table.values[spec.distance][rows], n, rng)
