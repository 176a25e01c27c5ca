"""Run N synthetic participants through a protocol: the second driver of the study session.

Synthetic participants (engine.participants) answer the very pages a person would see
(protocols.session), so simulated data has exactly the shape of real data. For speed,
participants move through the study in chunks, in lockstep: at every step the current page of
every active participant of the chunk is answered and all answers are submitted with one
``Study.submit_many`` call (one transaction; plans for the whole chunk come from one method
call per arm). Each participant's hidden parameters are written to ``sim_participants`` in
the transaction that creates them, each rating's latent values to ``sim_ratings`` in the
transaction that stores the rating.

Participants have sequence numbers 0..N-1. Running again on the same database continues:
complete participants are skipped, started ones resume at their current page (after a crash
or a kill, every participant is either complete or resumable), missing ones are started.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from data import records
from data.store import Store
from engine.participants import Behaviour, Population
from engine.rating_model import RatingBehaviour
from protocols import pages as pg
from protocols.resources import StudyResources
from protocols.schema import Protocol
from protocols.session import Study, SubmitItem

Progress = Callable[[int, int], None]


def behaviour_from_protocol(protocol: Protocol) -> Behaviour:
    """The protocol's ``simulation`` block as engine behaviour (None keeps the reference)."""
    sim = protocol.simulation
    ratings = RatingBehaviour.reference()
    outcomes = {}
    for key in ("acceptance", "action"):
        base = getattr(ratings, key)
        over = getattr(sim.ratings, key)
        changes: dict[str, Any] = {}
        curve_changes = {k: getattr(over, k) for k in ("drop", "scale")
                         if getattr(over, k) is not None}
        if curve_changes:
            changes["curve"] = dataclasses.replace(base.curve, **curve_changes)
        for k in ("intercept", "satisfaction", "violation", "sd_intercept", "sd_slope"):
            if getattr(over, k) is not None:
                changes[k] = getattr(over, k)
        if over.cutpoints is not None:
            changes["cutpoints"] = tuple(over.cutpoints)
        outcomes[key] = dataclasses.replace(base, **changes)
    if sim.ratings.distance is not None:
        outcomes["distance"] = sim.ratings.distance
    c, r, h = sim.constraints, sim.reporting, sim.hare
    return Behaviour(
        ratings=dataclasses.replace(ratings, **outcomes),
        distribution=c.distribution,
        n_actionable_probs=tuple(c.n_actionable_probs) if c.n_actionable_probs else None,
        cost_slope=c.cost_slope, swap_rate=r.swap_rate, mark_error_rate=r.mark_error_rate,
        temperature=h.temperature, threshold=h.threshold, threshold_sd=h.threshold_sd,
        attention_pass_rate=sim.attention_pass_rate,
    )


class SyntheticDriver:
    """Answers a study's pages for synthetic participants (the module docstring)."""

    def __init__(self, study: Study, population: Population) -> None:
        self.study = study
        self.population = population

    def truth_rows(self, participants: list[Any]) -> dict[str, list[dict[str, Any]]]:
        """The hidden parameters of new participants (written with their creation)."""
        return {"sim_participants": [{
            "study_id": self.study.study_id, "participant_id": p.participant_id,
            "sim_seed": self.population.seed,
            "params_json": json.dumps({"seq": p.seq, **self.population.person(p.seq).truth()}),
        } for p in participants]}

    def run(self, participant_ids: list[str]) -> None:
        """Drive these participants until none is active."""
        study = self.study
        active = list(participant_ids)
        while active:
            items: list[SubmitItem] = []
            extra: dict[str, list[dict[str, Any]]] = {"sim_ratings": []}
            pages = [(pid, study.current_page(pid)) for pid in active]
            pages = [(pid, page) for pid, page in pages if not page.terminal]
            plan_pages = [(pid, page) for pid, page in pages if page.kind == "plan"]
            rated = self._rate(plan_pages, extra) if plan_pages else {}
            for pid, page in pages:
                answer = rated[pid] if page.kind == "plan" else self.answer(pid, page)
                items.append(SubmitItem(pid, page.id, answer))
            if not items:
                break
            study.submit_many(items, extra)
            active = [pid for pid, _ in pages if study.participant(pid).active]

    def answer(self, pid: str, page: pg.Page) -> dict[str, Any]:
        """The synthetic answer to any page but a plan (plans are rated in batches)."""
        study, pop = self.study, self.population
        p = study.participant(pid)
        payload = page.payload
        if page.kind == "consent":
            return {"agree": True}
        if page.kind == "screening":
            q = {s.id: s for s in study.protocol.screening}
            return {"answers": {qq.id: q[qq.id].eligible[0] for qq in payload.questions}}
        if page.kind in ("scenario", "persona", "decision"):
            return {}
        if page.kind == "profile_entry":
            x = pop.person(p.seq).x
            values: dict[str, Any] = {}
            for j, f in enumerate(study.scenario.features):
                if f.display.kind == "categorical":
                    values[f.name] = f.display.categories[int(round(x[j]))]
                else:
                    values[f.name] = float(f.display.to_display(x[j]))
            return {"values": values}
        if page.kind.startswith("elicitation_"):
            return {"answers": pop.elicitation(p.seq, payload.scheme, payload.levels)}
        if page.kind == "attention":
            check = next(c for c in study.protocol.attention_checks
                         if f"attention-{c.id}" == page.id)
            k = [c.id for c in study.protocol.attention_checks].index(check.id)
            return {"choice": pop.attention(p.seq, k, list(payload.options), check.correct)}
        if page.kind in ("hare_choice", "hare_accept"):
            costs = [self._option_cost(p, rec) for rec in p.hare_query["options"]]
            if page.kind == "hare_choice":
                return {"choice": pop.choose(p.seq, payload.query, costs[0], costs[1])}
            return {"accept": pop.accepts(p.seq, costs[0])}
        raise ValueError(f"no synthetic answer for a {page.kind} page")

    def _option_cost(self, p: Any, rec: dict[str, Any]) -> float:
        names = self.study.scenario.feature_names
        actions = rec.get("actions", {})
        mask = np.array([n in actions for n in names])
        values = np.array([actions.get(n, p.x[j]) for j, n in enumerate(names)], dtype=float)
        return self.population.personal_cost(p.seq, p.x, mask, values)

    def _rate(
        self, plan_pages: list[tuple[str, pg.Page]], extra: dict[str, list[dict[str, Any]]]
    ) -> dict[str, dict[str, Any]]:
        """Rating answers of many plan pages at once (plus their simulation-truth rows)."""
        study, pop = self.study, self.population
        key = pop.behaviour.ratings.distance
        plans, seqs = [], []
        for pid, page in plan_pages:
            p = study.participant(pid)
            plans.append(p.plans[page.payload.number - 1])
            seqs.append(p.seq)
        draws = pop.rate(
            np.array(seqs), np.array([pl.position for pl in plans]),
            np.array([pl.values[key] for pl in plans], dtype=float),
            np.stack([pl.action_mask for pl in plans]),
        )
        out: dict[str, dict[str, Any]] = {}
        for k, ((pid, page), plan) in enumerate(zip(plan_pages, plans, strict=True)):
            hard = pop.person(seqs[k]).hard
            names = study.scenario.feature_names
            impossible = {i.feature: not bool(hard[names.index(i.feature)])
                          for i in page.payload.impossible}
            labels = [i.label for i in page.payload.impossible if impossible[i.feature]]
            acc, act = int(draws["acceptance"][k]), int(draws["action"][k])
            why = page.payload.why
            acc_why, act_why = pop.reasons(seqs[k], plan.position, acc, act, labels)
            out[pid] = {"acceptance": acc, "action": act,
                        "acceptance_why": acc_why if why else "",
                        "action_why": act_why if why else "", "impossible": impossible}
            extra["sim_ratings"].append({
                "study_id": study.study_id, "participant_id": pid, "plan_id": plan.plan_id,
                "distance": float(plan.values[key]) if plan.values[key] is not None else None,
                "satisfaction_true": float(draws["satisfaction"][k]),
                "violation_true": float(draws["violation"][k]),
                "eta_acceptance": float(draws["eta_acceptance"][k]),
                "eta_action": float(draws["eta_action"][k]),
            })
        return out


def simulate(
    protocol: Protocol,
    store: Store,
    participants: int,
    *,
    seed: int | None = None,
    study_id: str | None = None,
    decision_model: str | None = None,
    resources: StudyResources | None = None,
    chunk: int = 100,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Simulate ``participants`` synthetic participants into ``store`` (module docstring).

    Returns the summary documented by ``recourse-study simulate --json``.
    """
    if participants < 1:
        raise ValueError(f"participants must be >= 1, got {participants}")
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    start = time.perf_counter()
    sim_seed = protocol.simulation.seed if seed is None else int(seed)
    behaviour = behaviour_from_protocol(protocol)
    study = Study(protocol, store, study_id=study_id, resources=resources,
                  decision_model=decision_model,
                  simulation={"seed": sim_seed, "behaviour": behaviour.to_dict()})
    population = Population(study.scenario, behaviour, sim_seed,
                            study.rejected_population)
    driver = SyntheticDriver(study, population)
    existing = {int(r["seq"]): r for r in records.participant_index(store, study.study_id)}
    started = resumed = 0
    done = sum(1 for s in range(participants)
               if s in existing and existing[s]["status"] != "active")
    if progress:
        progress(done, participants)
    for lo in range(0, participants, chunk):
        seqs = list(range(lo, min(lo + chunk, participants)))
        new = [s for s in seqs if s not in existing]
        todo = [existing[s]["participant_id"] for s in seqs
                if s in existing and existing[s]["status"] == "active"]
        resumed += len(todo)
        if new:
            todo += study.start_many(new, source="synthetic", extra_rows=driver.truth_rows)
            started += len(new)
        if not todo:
            continue
        driver.run(todo)
        study.forget(todo)
        done += len(todo)
        if progress:
            progress(done, participants)
    return summary(store, study.study_id, time.perf_counter() - start,
                   started=started, resumed=resumed, seed=sim_seed, protocol=protocol.id)


def summary(store: Store, study_id: str, seconds: float, **extra: Any) -> dict[str, Any]:
    """Counts and rating means of a study (the ``--json`` shape)."""
    row = store.query(
        """SELECT
             (SELECT count(*) FROM participants WHERE study_id = $1) AS participants,
             (SELECT count(*) FROM participants WHERE study_id = $1 AND status = 'complete')
               AS complete,
             (SELECT count(*) FROM plans WHERE study_id = $1) AS plans,
             (SELECT count(*) FROM ratings WHERE study_id = $1) AS ratings,
             (SELECT count(*) FROM comparisons WHERE study_id = $1) AS comparisons,
             (SELECT avg(acceptance) FROM ratings WHERE study_id = $1) AS mean_acceptance,
             (SELECT avg(action) FROM ratings WHERE study_id = $1) AS mean_action""",
        [study_id],
    )[0]
    return {"study_id": study_id, **extra, **row, "seconds": round(seconds, 3)}
