"""Plan generation: the plans each participant rates, for many participants at once.

For every arm, the participants assigned to it (all of them under ``within`` assignment) are
served by ONE call of the arm's method: its candidate set (or its recourse) on the stacked
factual profiles. The method sees the stated actionability profiles when the arm is
``personalized`` and there was an elicitation, otherwise everybody able to act on every
globally actionable feature. A distance design (protocols.running.design) then picks each person's
plans with a generator seeded by (protocol seed, participant's consent order, arm), so the
result does not depend on who else is in the batch: the web path (a batch of one) and the
simulator (a batch of hundreds) produce the same plans for the same person. Interactive arms (HARE) get
their plans from the interaction instead (protocols.running.interactive).

One pass per arm: generate (the method), filter (showable, the plan rules), design (pick),
evaluate, and hand over display-ready plans (protocols.running.shown_plan.ShownPlan: the stored
values and the table rows a page shows, made here once; a resumed participant's are read
back from the store). Every shown plan is measured against the participant's STATED profile
(weighted cost, hap, violations, satisfaction and violation relative to what the person
said; NaN preference terms without elicitation): the method's own evaluation is that
measure when the method saw the stated profiles (a personalized arm); otherwise the chosen
plans alone are evaluated against them. Plans are then put in the participant's
counterbalanced order (protocols.running.design.plan_order) and given positions 0..n-1 and ids
``<participant_id>-p<position + 1>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.preferences import ActionabilityProfiles
from engine.recourse import RecourseBatch, RecourseContext, plan_rules, realism
from engine.scenarios.base import Scenario
from protocols.definition.schema import Protocol
from protocols.running import design
from protocols.running.resources import StudyResources
from protocols.running.shown_plan import ShownPlan


@dataclass
class PlanRequest:
    """One participant needing plans: factual x (d,) and stated profile (a batch of one)."""

    participant_id: str
    seq: int  # the participant's design number (Participant.design_seq)
    arm: str  # an arm id, or "within" for every arm
    x: np.ndarray
    stated: ActionabilityProfiles | None


def shown(
    scenario: Scenario, plans: RecourseBatch, rows: list[int], participant_id: str, arm: str,
    selections: list[str],
) -> list[ShownPlan]:
    """Unordered shown plans (position and id set by ``finalize``) of one person, ready for
    display (protocols.running.shown_plan)."""
    return [ShownPlan.of_batch(scenario, plans, int(i), participant_id, arm, why)
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


@dataclass
class PlanOutcome:
    """One participant's plans and, when they are fewer than asked, why: ``found`` plans the
    method returned, ``showable`` of them fit to show (valid, within the display bounds, no
    invisible action, distinct), ``fallback`` plans added by the shortfall's fallback."""

    plans: list[ShownPlan]
    asked: int
    found: int = 0
    showable: int = 0
    fallback: int = 0
    why: str | None = None  # a specific reason, said instead of the generic one

    @property
    def short(self) -> bool:
        return len(self.plans) < self.asked

    @property
    def reason(self) -> str | None:
        """Why the arm's method fell short (also when a fallback filled the gap)."""
        if self.showable >= self.asked:
            return None
        if self.why is not None:
            return self.why
        if self.found == 0:
            return "the method found no valid plan under the participant's constraints"
        if self.showable == 0:
            return ("every plan found was outside the display bounds or needed a change "
                    "too small to show")
        return f"only {self.showable} distinct plan(s) fit to show"

    def detail(self) -> dict[str, Any]:
        """The ``plans`` event's detail (what the dashboard and simulate report)."""
        return {"n": len(self.plans), "asked": self.asked, "found": self.found,
                "short": self.short,
                "showable": self.showable, "fallback": self.fallback, "reason": self.reason}


def generate_plans(
    protocol: Protocol, resources: StudyResources, requests: list[PlanRequest]
) -> dict[str, list[ShownPlan]]:
    """Plans of every request (module docstring), batched per arm."""
    return {pid: o.plans for pid, o in generate(protocol, resources, requests).items()}


def generate(
    protocol: Protocol, resources: StudyResources, requests: list[PlanRequest]
) -> dict[str, PlanOutcome]:
    """Plans of every request with their shortfall accounting, batched per arm."""
    out: dict[str, PlanOutcome] = {r.participant_id: PlanOutcome(
        [], protocol.plans_per_participant(_arm_id(protocol, r))) for r in requests}
    for arm_index, arm in enumerate(protocol.arms):
        if arm.interactive:
            continue  # its plans come out of the interaction (protocols.running.interactive)
        reqs = [r for r in requests if r.arm in (arm.id, "within")]
        if reqs:
            _arm_plans(protocol, resources, arm_index, reqs, out)
    by_id = {r.participant_id: r for r in requests}
    for pid, o in out.items():
        o.plans = finalize(protocol, by_id[pid].seq, o.plans)
    return out


def _arm_id(protocol: Protocol, r: PlanRequest) -> str:
    return protocol.arms[0].id if r.arm == "within" else r.arm


def _arm_plans(
    protocol: Protocol, resources: StudyResources, arm_index: int, reqs: list[PlanRequest],
    out: dict[str, PlanOutcome],
) -> None:
    """One arm's plans for its requests (and the shortfall's fallback), added to ``out``."""
    arm = protocol.arms[arm_index]
    spec = protocol.plans
    context = resources.context(arm)
    x = np.stack([r.x for r in reqs])
    stated = (ActionabilityProfiles.concat([r.stated for r in reqs])  # type: ignore[misc]
              if reqs[0].stated is not None else None)
    seen = stated if arm.personalized and stated is not None else context.everybody(len(reqs))
    candidates = arm.source == "candidates" and spec.design != "best"
    table, found = _showable(protocol, context, resources.method(arm).plans(
        x, seen, candidates=candidates), seen, stated)
    n = spec.per_participant
    picks = _choose(protocol, table, len(reqs), [r.seq for r in reqs], arm_index)
    for i, r in enumerate(reqs):
        o = out[r.participant_id]
        o.found += int(found[i])
        o.showable += int((table.array("person") == i).sum())
    short = [i for i in range(len(reqs)) if len(picks[i]) < n]
    fb = spec.shortfall.fallback if spec.shortfall.then == "fallback" else None
    sources = [(table, picks, arm.id)]
    if fb is not None and short:
        method = resources.fallback_method(arm, fb.method, fb.options)
        extra, _ = _showable(protocol, context, method.plans(
            x[short], seen[short], candidates=method.capabilities.candidates), seen[short],
            None if stated is None else stated[short])
        extra = _new_to(context.scenario, extra, table, picks, short)
        got = _choose(protocol, extra, len(short), [reqs[i].seq for i in short], arm_index,
                      need=[n - len(picks[i]) for i in short], tag="fallback")
        fb_picks: list[list[tuple[int, str]]] = [[] for _ in reqs]
        for k, i in enumerate(short):
            fb_picks[i] = got[k]
            out[reqs[i].participant_id].fallback += len(got[k])
        extra.person = extra.person.new_tensor(short)[extra.person]  # back to request index
        sources.append((extra, fb_picks, arm.id))
    for batch, chosen, arm_id in sources:
        _attach(context, batch, chosen, reqs, stated, seen is not stated, arm_id, out)


def obeys_rules(context: RecourseContext, plans: RecourseBatch,
                stated: ActionabilityProfiles | None) -> np.ndarray:
    """(n,) bool: plans that break none of the context's plan rules
    (engine.recourse.plan_rules), ``stated`` the profiles of their rows (or None)."""
    hard = None if stated is None else stated.hard_mask
    return plan_rules.obeys(context.scenario, context.rules, plans.x, plans.x_cf,
                            plans.action_mask, plans.action_values, hard).numpy()


def _showable(
    protocol: Protocol, context: RecourseContext, table: RecourseBatch,
    seen: ActionabilityProfiles, stated: ActionabilityProfiles | None,
) -> tuple[RecourseBatch, np.ndarray]:
    """The plans fit to show (engine.recourse.realism: needless actions pruned when the
    protocol says so, within display bounds, no invisible action, distinct per person; the
    plan rules obeyed) and how many each person's method found."""
    person = table.person
    found = np.bincount(table.array("person")[table.array("found")],
                        minlength=len(seen)) if len(table) else np.zeros(len(seen), int)
    if len(table) and protocol.plans.prune_actions:
        table = realism.prune_actions(context, table, seen[person]).plans
    if not len(table):
        return table, found
    keep = realism.showable(context.scenario, table).numpy() & obeys_rules(
        context, table, None if stated is None else stated[table.person])
    shown_values = _on_screen(context.scenario, table.x_cf)
    key = np.column_stack([table.array("person"), shown_values])
    first = np.zeros(len(table), dtype=bool)
    first[np.unique(key, axis=0, return_index=True)[1]] = True
    return table.select(np.flatnonzero(keep & first)), found


def _on_screen(scenario: Scenario, x_cf: Any) -> np.ndarray:
    """The plan items of profiles as a person sees them (two plans that look the same are
    the same plan to the person, whatever their hidden conditions such as income)."""
    shown = [j for j, f in enumerate(scenario.features) if f.in_plan]
    return realism.displayed(scenario, x_cf).numpy()[:, shown]


def _new_to(scenario: Scenario, extra: RecourseBatch, table: RecourseBatch,
            picks: list[list[tuple[int, str]]], short: list[int]) -> RecourseBatch:
    """The fallback's plans a person is not already shown (the same profile on screen);
    ``extra`` rows are indexed by position in ``short``."""
    if not len(extra):
        return extra
    rows = [row for i in short for row, _ in picks[i]]
    owners = [k for k, i in enumerate(short) for _ in picks[i]]
    screens = _on_screen(scenario, table.x_cf[rows]).tolist() if rows else []
    have = {(o, tuple(v)) for o, v in zip(owners, screens, strict=True)}
    mine = _on_screen(scenario, extra.x_cf).tolist()
    keep = [r for r, (o, v) in enumerate(zip(extra.array("person").tolist(), mine,
                                              strict=True)) if (o, tuple(v)) not in have]
    return extra.select(np.asarray(keep, dtype=np.int64))


def _choose(
    protocol: Protocol, table: RecourseBatch, n_people: int, seqs: list[int], arm_index: int,
    *, need: list[int] | None = None, tag: str | None = None,
) -> list[list[tuple[int, str]]]:
    """Per person, (row of ``table``, selection) of the plans the design picks (``need``
    plans each, default the protocol's number)."""
    person = table.array("person")
    order = np.argsort(person, kind="stable")
    bounds = np.searchsorted(person[order], np.arange(n_people + 1))
    out: list[list[tuple[int, str]]] = []
    for i in range(n_people):
        rows = order[bounds[i]:bounds[i + 1]]
        n = protocol.plans.per_participant if need is None else need[i]
        if len(rows) == 0 or n <= 0:
            out.append([])
            continue
        stream = design.STREAM_DESIGN if tag is None else design.STREAM_FALLBACK
        rng = design.rng_for(protocol.seed, stream, seqs[i], arm_index)
        out.append([(int(rows[k]), tag or why) for k, why in _pick(protocol, table, rows, rng, n)])
    return out


def _attach(
    context: RecourseContext, table: RecourseBatch, chosen: list[list[tuple[int, str]]],
    reqs: list[PlanRequest], stated: ActionabilityProfiles | None, measure: bool, arm_id: str,
    out: dict[str, PlanOutcome],
) -> None:
    """Give the chosen plans to their people, display-ready and measured against their
    stated profiles (None: no elicitation, the preference terms NaN): evaluated here when
    the method saw other profiles (``measure``), else the method's own evaluation is it."""
    rows = [row for picks in chosen for row, _ in picks]
    if not rows:
        return
    owners = [i for i, picks in enumerate(chosen) for _ in picks]
    reasons = [why for picks in chosen for _, why in picks]
    sub = table.select(rows)
    evaluated = sub if not measure else context.evaluate(
        table.method, sub.x, sub.action_mask, sub.action_values,
        stated[owners] if stated is not None else None, x_cf=sub.x_cf, found=sub.found,
    )
    owners_np = np.array(owners)
    for i, r in enumerate(reqs):
        idx = np.flatnonzero(owners_np == i)
        if len(idx):
            out[r.participant_id].plans += shown(
                context.scenario, evaluated, idx.tolist(), r.participant_id, arm_id, [reasons[k] for k in idx])


def _pick(
    protocol: Protocol, table: RecourseBatch, rows: np.ndarray, rng: np.random.Generator,
    n: int,
) -> list[tuple[int, str]]:
    """Indices into ``rows`` chosen by the protocol's distance design."""
    spec = protocol.plans
    if spec.design == "best":
        return [(0, "best")]
    if spec.design == "tominaga":
        return design.select_tominaga(table.array(spec.sparsity)[rows],
                                      table.array(spec.proximity)[rows], n, rng, spec.ties)
    return design.select_stratified(table.array(spec.distance)[rows], n, rng)
