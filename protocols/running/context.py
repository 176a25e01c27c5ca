"""The narrow views of a study that page kinds act through (protocols.running.pages).

A page kind never sees the whole ``Study`` (its store, caches, locks): it builds its payload
from a ``SessionContext`` (the protocol, the scenario, the decision model, personas and the
interactive flow), applies an answer through an ``Answering`` (one transaction's rows and
plan requests), and answers for a synthetic participant through a ``SyntheticContext``
(the engine's synthetic population and the simulation-truth rows).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from typing import Protocol as Interface

import numpy as np

from data.codebook import check_event_kind
from data.columns import (
    COMPARISONS,
    ELICITATIONS,
    EVENTS,
    PLANS,
    PROFILES,
    RATINGS,
    RESPONSES,
    SIM_PARTICIPANTS,
    SIM_RATINGS,
    TOKENS,
)
from engine.decision import Classifier, decide
from engine.scenarios.base import Scenario
from engine.synthetic.participants import Population
from protocols.definition.schema import Protocol
from protocols.running import display
from protocols.running.interactive import InteractiveFlow, Waiting
from protocols.running.planning import PlanOutcome, PlanRequest
from protocols.running.shown_plan import ShownPlan
from protocols.running.state import Participant, profiles_row


class AnsweredPage(Interface):
    """What the bookkeeping of an answer needs of its page (protocols.running.pages.Page has it)."""

    @property
    def id(self) -> str: ...

    @property
    def kind(self) -> str: ...

Rows = dict[str, list[dict[str, Any]]]
# Insert order inside a transaction (no foreign keys, but a readable audit order).
ROW_TABLES = tuple(t.name for t in (TOKENS, PROFILES, ELICITATIONS, PLANS, RESPONSES, RATINGS,
                                     COMPARISONS, EVENTS, SIM_PARTICIPANTS, SIM_RATINGS))


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def after_every_pause() -> datetime:
    """The clock of synthetic participants: every pause between sessions is over (they
    return as soon as the second session opens)."""
    return datetime.max


@dataclass
class SessionContext:
    """What pages of one study may use (module docstring).

    >>> import tempfile
    >>> from pathlib import Path
    >>> from data import Store
    >>> from protocols import Study, load_protocol
    >>> store = Store(Path(tempfile.mkdtemp()) / "study.duckdb")
    >>> study = Study(load_protocol("tominaga-replication"), store)
    >>> ctx = study.context
    >>> ctx.study_id == study.study_id, ctx.scenario.name
    (True, 'tominaga')
    """

    study_id: str
    protocol: Protocol
    scenario: Scenario
    classifier: Classifier
    persona: Callable[[int], np.ndarray]  # seq -> a rejected profile (model units)
    interactive: InteractiveFlow
    # The time that decides whether a second session is open yet (protocols.running.flow).
    clock: Callable[[], datetime] = now
    # The time answers are stored at and time limits measured by (protocols.running.quotas):
    # the server's; the simulator's simulated clock.
    timer: Callable[[], datetime] = now

    def event(self, pid: str, page_id: str | None, event: str,
              detail: dict[str, Any] | None = None) -> dict[str, Any]:
        """An ``events`` row (the append-only audit); every kind is in the codebook."""
        return EVENTS.row(study_id=self.study_id, participant_id=pid, page_id=page_id,
                          event=check_event_kind(event),
                          detail_json=json.dumps(detail) if detail else None, occurred_at=now())

    def approves(self, x: np.ndarray) -> bool:
        """The decision model approves the profile x (model units)."""
        return bool(decide(self.classifier, x)[1][0])


@dataclass
class Answering:
    """One transaction's answers: the rows they write and the plans they ask for."""

    ctx: SessionContext
    at: datetime = field(init=False)  # the context's timer when the answers came
    rows: Rows = field(default_factory=lambda: defaultdict(list))
    plan_requests: list[PlanRequest] = field(default_factory=list)
    enrolling: list[Participant] = field(default_factory=list)
    # interactions whose next search and question wait for ``finish_interactions``
    interactions: list[Waiting] = field(default_factory=list)
    _needs_plans: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.at = self.ctx.timer()

    @property
    def protocol(self) -> Protocol:
        return self.ctx.protocol

    @property
    def scenario(self) -> Scenario:
        return self.ctx.scenario

    def set_profile(self, p: Participant, x: np.ndarray, source: str) -> None:
        """Give ``p`` the profile x (own, persona or persona_fallback) and store it with the
        decision model's verdict."""
        p.x = np.asarray(x, dtype=float)
        p.profile_source = source
        proba, ok = decide(self.ctx.classifier, p.x)
        names = self.scenario.feature_names
        self.rows[PROFILES.name].append(PROFILES.row(
            study_id=self.ctx.study_id, participant_id=p.participant_id, source=source,
            x_json=json.dumps(dict(zip(names, p.x.tolist(), strict=True))),
            display_json=json.dumps({r.feature: r.value
                                     for r in display.profile_rows(self.scenario, p.x)}),
            proba=float(proba[0]), rejected=not bool(ok[0]),
        ))

    def store_stated(self, p: Participant, answer_json: str) -> None:
        """Store ``p``'s stated constraints (already set on ``p``) with the raw answer."""
        assert p.stated is not None
        self.rows[ELICITATIONS.name].append(ELICITATIONS.row(
            study_id=self.ctx.study_id, participant_id=p.participant_id,
            answer_json=answer_json, **profiles_row(p.stated, self.scenario.feature_names),
        ))

    def enrol(self, p: Participant) -> None:
        """``p`` consented: the study numbers them in the order of consent and assigns
        them (arm, persona) in this answer's transaction (protocols.running.session)."""
        self.enrolling.append(p)

    def plans_needed(self, p: Participant) -> None:
        """``p`` is ready for plans once this answer is recorded (``record``)."""
        self._needs_plans.add(p.participant_id)

    def wants_plans(self, p: Participant) -> bool:
        """An answer applied in this transaction made ``p`` ready for plans."""
        return p.participant_id in self._needs_plans

    def record(self, p: Participant, page: AnsweredPage, answer: Any, correct: bool | None,
               seconds: float | None = None) -> None:
        """The bookkeeping of every answer: the response (with ``seconds`` on the page) and
        its events, ``p`` moved past
        the page; then, when the answer made ``p`` ready for plans, an interactive arm starts
        its interaction and other arms' plans are requested for the whole transaction at
        once (protocols.running.planning); the interactions' searches wait for
        ``finish_interactions``."""
        pid = p.participant_id
        self.rows[RESPONSES.name].append(RESPONSES.row(
            study_id=self.ctx.study_id, participant_id=pid, page_id=page.id, kind=page.kind,
            step=p.step, answer_json=answer.model_dump_json(), correct=correct,
            answered_at=self.at, seconds=seconds, language=p.language,
        ))
        self.rows[EVENTS.name].append(self.ctx.event(pid, page.id, "answer"))
        if p.status != "active":
            self.rows[EVENTS.name].append(self.ctx.event(pid, page.id, p.status))
        p.answered.append(page.id)
        p.step += 1
        if pid not in self._needs_plans or not p.active:
            return
        assert p.x is not None
        if self.ctx.interactive.applies(p):
            self.interactions.append(self.ctx.interactive.start(p))
        else:
            self.plan_requests.append(PlanRequest(pid, p.design_seq, p.arm, p.x, p.stated))

    def finish_interactions(self) -> None:
        """The interactions started or answered in this transaction search together
        (protocols.running.interactive); those that ended get their plans."""
        waiting, self.interactions = self.interactions, []
        for w, final in zip(waiting, self.ctx.interactive.finish(waiting), strict=True):
            if final is not None:
                self.attach_outcome(w.p, final)

    def attach_plans(self, p: Participant, plans: list[ShownPlan],
                     detail: dict[str, Any] | None = None) -> None:
        p.plans = plans
        p.plans_ready = True
        self.rows[PLANS.name] += [plan.stored(self.ctx.study_id, self.at) for plan in plans]
        self.rows[EVENTS.name].append(self.ctx.event(p.participant_id, None, "plans",
                                                  detail or {"n": len(plans)}))

    def attach_outcome(self, p: Participant, outcome: PlanOutcome) -> None:
        """Generated plans with their shortfall accounting in the ``plans`` event; a
        shortfall under ``plans.shortfall.then: end`` ends the session (status no_plans)."""
        self.attach_plans(p, outcome.plans, outcome.detail())
        if outcome.short and self.protocol.plans.shortfall.then == "end":
            p.status = "no_plans"
            self.rows["events"].append(self.ctx.event(p.participant_id, None, "no_plans"))


@dataclass
class SyntheticContext:
    """What a page kind's synthetic answer may use: the study's protocol and scenario, the
    synthetic population (engine.synthetic) and rows of simulation truth to write with the
    answers (``sim_ratings``).

    >>> from engine import get_scenario, load_classifier, rejected_rows
    >>> from engine.synthetic import Behaviour, Population
    >>> from protocols import SyntheticContext, load_protocol
    >>> protocol = load_protocol("tominaga-replication")
    >>> scenario = get_scenario(protocol.scenario)
    >>> rows = rejected_rows(scenario, load_classifier(scenario, "rule"))[:20]
    >>> test_x, _ = scenario.dataset["test"]        # the test split: (x, y)
    >>> x = test_x[rows].numpy()
    >>> sim = SyntheticContext("pilot", protocol, scenario, Population(scenario, Behaviour(), 0, x))
    >>> sim.population.person(0).x.shape == (scenario.d,), dict(sim.extra)   # no truth rows yet
    (True, {})
    """

    study_id: str
    protocol: Protocol
    scenario: Scenario
    population: Population
    extra: Rows = field(default_factory=lambda: defaultdict(list))
