"""The interactive part of a session: one question per page, resumable, then two plans.

A participant of an arm whose method is ``interactive`` (engine.recourse.base.Capabilities:
HARE), once their constraints are stated, starts the method's session
(``method.start_session``, seeded by the protocol seed and their consent order). Each
question becomes a page (protocols.running.pages.interactive): a comparison of two candidates
(answer 0 or 1) or an accept/go-on question about one. Every answer is stored in
``comparisons`` with the options shown, and the session's JSON state is kept in the
participant's state (so a restart resumes at the same question, ``method.resume_session``).
When the interaction is done, its final plan and the base method's plan for the same person
are evaluated against the stated profile like every other plan (protocols.running.planning) and
shown for rating in counterbalanced order (selection ``hare_final`` / ``hare_base``). A plan
is shown as a recommendation only when the decision model approves it and it breaks no plan
rule: HARE ends on an unapproved plan when neither the base method nor any candidate it
proposed under the participant's constraints was approved (its tournament still picks the
candidate the person prefers). Such a plan is not shown; the ``plans`` event says why and
the shortfall tables count it (``PlanOutcome``).

The session contract (engine.recourse.hare.session.HareSession): ``next_query()`` -> query
with ``kind`` (compare | accept | done) and ``options`` (``RecourseBatch.record`` dicts),
``answer(choice)``, ``accept(yes)``, ``done``, ``final()``, ``to_json()``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from data.columns import COMPARISONS
from engine.preferences import ActionabilityProfiles
from protocols.definition.schema import Protocol
from protocols.running import design
from protocols.running.batching import Runner, SearchBatcher
from protocols.running.cache import BoundedCache
from protocols.running.planning import PlanOutcome, ShownPlan, finalize, obeys_rules, shown
from protocols.running.prefetch import Prefetcher, prefetch_key
from protocols.running.resources import StudyResources
from protocols.running.state import Participant

Rows = dict[str, list[dict[str, Any]]]


@dataclass
class Waiting:
    """An interaction with its answer applied, waiting for its next search (when
    ``session.pending``) and its next question (``following`` and ``outcome``: prefetched
    already)."""

    p: Participant
    method: Any
    session: Any
    following: Any | None = None
    outcome: PlanOutcome | None = None  # the final plans, when prefetched with the session


class InteractiveFlow:
    """Starts, advances and finishes participants' interactions.

    **Searching together.** Applying an answer (or starting) leaves the method's next search
    undone when the method can batch (``complete_sessions``: HARE): ``start`` and ``answer``
    return a ``Waiting`` interaction, and ``finish`` runs the pending searches of all the
    interactions of one transaction as one batched search per method, then asks each its next
    question. The simulator answers a whole chunk of participants in one transaction, so their
    searches run together; the method gives every session exactly the candidates it finds alone
    (engine.recourse.hare.state, "proposing together"), so questions and plans do not depend on
    who was answered with whom.

    With ``prefetch`` (the web server's choice), while a question is shown what follows each of
    its answers is computed in the background (protocols.running.prefetch): the session after
    either choice of a comparison, after "accept" and after "keep looking" (the method's next
    iteration), with its next question, or the final plans when the interaction ends there; the
    answer takes its result (waiting if it is still running), so a participant who reads the
    question for a moment does not wait for the work; the work waits while an answer is being
    processed (``serving``), so it never delays a page. An answer not prefetched leaves its search
    to ``finish``, which hands it to the server's batcher (protocols.running.batching): the
    searches of participants who wait at the same moment (HARE's start, an early answer) run as
    one batched search. The prefetches' searches have a batcher (and, in the web server, a search
    worker process) of their own, so a page's search never queues behind a speculative one.
    The start itself can be computed before the answer that begins it: a draft of that answer
    (the ranking the elicitation page shows before Continue, ``Study.speculate``) schedules the
    start for the profile it states (``speculate_start``: the base plan, the first search and the
    first question, once no answer is being processed); ``start`` takes it when the profile
    stated is the draft's (the key holds everything the start depends on), and each
    participant's newer draft drops their earlier one that has not started.
    Every computation is the same deterministic code on the same saved state: the questions and
    plans are the same either way.
    """

    def __init__(self, protocol: Protocol, resources: StudyResources, *,
                 prefetch: bool = False, runner: Runner | None = None,
                 speculative_runner: Runner | None = None) -> None:
        self.protocol = protocol
        self.resources = resources
        self._serving = 0  # answers being processed (``serving``); prefetching waits for 0
        self._serving_lock = threading.Lock()
        self.prefetcher = Prefetcher(busy=lambda: self._serving > 0) if prefetch else None
        # the base method's plan per participant as computed at their start, for the final
        # plans (recomputed when missing: a restart, or more participants than this)
        self._base_plans: BoundedCache[str, Any] = BoundedCache(BASE_PLANS_KEPT)
        self.batcher = SearchBatcher(runner=runner) if prefetch else None
        # the prefetches' searches queue apart, so a page's search never waits for one
        self.speculative = SearchBatcher(runner=speculative_runner) if prefetch else None

    def run_searches_with(self, runner: Runner, speculative_runner: Runner) -> None:
        """From now on the pages' searches go to ``runner`` and the prefetches' to
        ``speculative_runner`` (the web server's worker processes, started once the study is
        warm); only with ``prefetch``, whose batchers run them."""
        assert self.batcher is not None and self.speculative is not None, "needs prefetch"
        self.batcher.runner = runner
        self.speculative.runner = speculative_runner

    @contextmanager
    def serving(self) -> Iterator[None]:
        """Marks an answer being processed: speculative work waits until none is
        (protocols.running.prefetch)."""
        with self._serving_lock:
            self._serving += 1
        try:
            yield
        finally:
            with self._serving_lock:
                self._serving -= 1

    def applies(self, p: Participant) -> bool:
        """The participant's arm is interactive (its plans come out of the interaction); no
        arm before consent."""
        return p.arm not in (None, "within") and self.protocol.arm(p.arm).interactive

    def expected(self, p: Participant) -> int:
        """Questions the participant is expected to answer (the method's budget, or as many
        as were asked already), 0 outside an interactive arm."""
        if not self.applies(p):
            return 0
        budget = getattr(self.resources.method(self.protocol.arm(p.arm)), "query_budget", 0)
        return max(int(budget or 0), p.queries_asked)

    def _seed(self, p: Participant) -> int:
        rng = design.rng_for(self.protocol.seed, design.STREAM_HARE, p.design_seq)
        return int(rng.integers(2**31 - 1))

    def _seen(self, p: Participant) -> ActionabilityProfiles:
        """The profile the methods see: stated when the arm is personalized."""
        arm = self.protocol.arm(p.arm)
        if arm.personalized and p.stated is not None:
            return p.stated
        return self.resources.context(arm).everybody(1)

    def start(self, p: Participant) -> Waiting:
        """Begin the interaction: the speculated start for exactly this participant and
        profile when there is one (``speculate_start``), else a new session whose first
        search is left to ``finish``."""
        method = self.resources.method(self.protocol.arm(p.arm))
        ahead = None if self.prefetcher is None else self.prefetcher.take(self._start_key(p))
        session, query = ahead if ahead is not None else (self._new_session(method, p), None)
        if getattr(session, "base_found", None) is not None:
            self._base_plans[p.participant_id] = session.base_found
        return Waiting(p, method, session, following=query)

    def _new_session(self, method: Any, p: Participant) -> Any:
        assert p.x is not None
        return method.start_session(np.asarray(p.x, dtype=float)[None], self._seen(p),
                                    seed=self._seed(p), **self._defer(method))

    def speculate_start(self, p: Participant) -> None:
        """Compute in the background the start ``p`` is about to make (``p``: the
        participant as a draft of their answer would leave them, stated constraints
        included): the base plan, the first search and the first question, taken by
        ``start`` when the answer given is the draft's. Each participant's newest draft
        replaces their earlier one that has not started (protocols.running.prefetch)."""
        if self.prefetcher is None or not self.applies(p):
            return
        method = self.resources.method(self.protocol.arm(p.arm))

        def started() -> tuple[Any, Any]:
            session = self._new_session(method, p)
            self.complete([(method, session)], speculative=True)
            return session, (None if session.done else session.next_query())

        self.prefetcher.schedule(self._start_key(p), started, delay=DRAFT_S,
                                 group=p.participant_id)

    def _start_key(self, p: Participant) -> str:
        """The prefetch key of ``p``'s start: everything the session's start depends on."""
        return prefetch_key("start", p.participant_id, str(p.arm), str(self._seed(p)),
                            json.dumps(np.asarray(p.x, dtype=float).tolist()),
                            json.dumps(self._seen(p).to_lists()))

    def finish(self, waiting: list[Waiting]) -> list[PlanOutcome | None]:
        """Run the pending searches of ``waiting`` together (module docstring), then store
        each interaction's next question; per interaction, its final plans when it ended."""
        self.complete([(w.method, w.session) for w in waiting])
        return [self._advance(w.p, w.session, w.following, w.outcome) for w in waiting]

    def complete(self, pairs: list[tuple[Any, Any]], *, speculative: bool = False) -> None:
        """Run the pending searches of these (method, session) pairs: through the server's
        batcher (which joins other threads' waiting sessions; ``speculative``: the
        prefetches' own) when there is one, else as one ``complete_sessions`` call per
        method."""
        pending = [(m, s) for m, s in pairs if getattr(s, "pending", False)]
        batcher = self.speculative if speculative else self.batcher
        if batcher is not None:
            for method, session in pending:
                batcher.complete(method, session)
            return
        methods: dict[int, tuple[Any, list[Any]]] = {}
        for method, session in pending:
            methods.setdefault(id(method), (method, []))[1].append(session)
        for method, sessions in methods.values():
            method.complete_sessions(sessions)

    def _defer(self, method: Any) -> dict[str, bool]:
        """Keyword asking ``method`` to leave its searches to ``complete``, when it can."""
        return {"defer": True} if hasattr(method, "complete_sessions") else {}

    def answer(
        self, p: Participant, page_id: str, answer: Any, rows: Rows, at: datetime
    ) -> Waiting:
        """Apply an interactive page's answer: the prefetched session after it, or the
        session resumed with the answer applied (its next search left to ``finish``)."""
        query = p.query
        assert query is not None and p.interaction is not None
        given = _given(query["kind"], answer)
        method = self.resources.method(self.protocol.arm(p.arm))
        ahead = None  # (session after the answer, its next question, final plans), prefetched
        if self.prefetcher is not None:
            ahead = self.prefetcher.take(prefetch_key(p.interaction, *given))
        waiting = Waiting(p, method, self._answered(method, p.interaction, given)) \
            if ahead is None else Waiting(p, method, *ahead)
        row = COMPARISONS.row(study_id=p.study_id, participant_id=p.participant_id,
                              step=int(page_id.split("-")[1]), kind=query["kind"],
                              options_json=json.dumps(query["options"]), choice=None,
                              accepted=None, answered_at=at)
        if query["kind"] == "compare":
            row["choice"] = int(answer.choice)
        else:
            row["accepted"] = bool(answer.accept)
        rows[COMPARISONS.name].append(row)
        return waiting

    def _answered(self, method: Any, state: str, given: tuple[str, str]) -> Any:
        """The session resumed from ``state`` with the answer ``given`` applied (a method
        that batches leaves its next search pending)."""
        session = method.resume_session(state, **self._defer(method))
        if given[0] == "compare":
            session.answer(int(given[1]))
        else:
            session.accept(given[1] == "yes")
        return session

    def _after(self, p: Participant, state: str,
               given: tuple[str, str]) -> tuple[Any, Any, PlanOutcome | None]:
        """The session after the answer ``given`` with its search done, its next question
        (None when done) and its final plans when it is done (None otherwise)."""
        method = self.resources.method(self.protocol.arm(p.arm))
        session = self._answered(method, state, given)
        self.complete([(method, session)], speculative=True)
        if not session.done:
            return session, session.next_query(), None
        return session, None, self._final_plans(p, session.final())

    def _advance(self, p: Participant, session: Any, query: Any | None = None,
                 outcome: PlanOutcome | None = None) -> PlanOutcome | None:
        """Store the session's state and its next question (``query``: computed already);
        the final plans when it is done (``outcome``: computed already)."""
        if query is None and not session.done:
            query = session.next_query()
        p.interaction = session.to_json()
        if query is not None and query.kind != "done":
            p.query = {"kind": query.kind, "options": _plain(query.options)}
            p.queries_asked += 1
            if self.prefetcher is not None:
                self._prefetch(self.prefetcher, p, query.kind, p.interaction)
            return None
        p.interaction_done = True
        p.query = None
        return outcome if outcome is not None else self._final_plans(p, session.final())

    def _prefetch(self, prefetcher: Prefetcher, p: Participant, kind: str, state: str) -> None:
        """Compute in the background, for every answer the question ``kind`` can get, the
        session after it, its next question and (when it ends there) the final plans."""
        for value in ANSWERS[kind]:
            given = (kind, value)
            prefetcher.schedule(prefetch_key(state, *given),
                                lambda given=given: self._after(p, state, given),
                                delay=READING_S)

    def _final_plans(self, p: Participant, final: dict[str, Any]) -> PlanOutcome:
        """The final action (when there is one) and the base method's plan, evaluated
        against the stated profile, in counterbalanced order; only approved plans that
        break no rule are shown (module docstring)."""
        arm = self.protocol.arm(p.arm)
        names = self.resources.scenario.feature_names
        ctx = self.resources.context(arm)
        x = np.asarray(p.x, dtype=float)[None]
        plans: list[ShownPlan] = []
        missing: list[str] = []
        actions = final.get("actions") or {}
        mask = np.array([[n in actions for n in names]])
        values = np.array([[actions.get(n, x[0, j]) for j, n in enumerate(names)]])
        evaluated = ctx.evaluate(arm.method, x, mask, values, p.stated)
        if not actions:  # an empty final action is not shown
            missing.append(f"{arm.method} found no plan")
        elif not bool(evaluated.valid[0]):
            missing.append(f"{arm.method}'s final plan is not approved by the decision model "
                           "(no approved plan under the participant's constraints)")
        elif not obeys_rules(ctx, evaluated, p.stated)[0]:  # never a plan breaking a rule
            missing.append(f"{arm.method}'s final plan breaks a plan rule")
        else:
            plans += shown(ctx.scenario, evaluated, [0], p.participant_id, arm.id,
                           ["hare_final"])
        found = int(bool(actions))
        base = self._base_plans.get(p.participant_id)
        if base is None:  # the same plan as at the start (the same method, person, profile)
            base = self.resources.base_method(arm).plans(x, self._seen(p), candidates=False)
        if len(base):  # found plans only; a base plan is found when approved
            found += 1
            evaluated = ctx.evaluate(base.method, base.x, base.action_mask, base.action_values,
                                     p.stated, x_cf=base.x_cf)
            if bool(evaluated.valid[0]) and obeys_rules(ctx, evaluated, p.stated)[0]:
                plans += shown(ctx.scenario, evaluated, [0], p.participant_id, arm.id,
                               ["hare_base"])
            else:
                missing.append("the base method's plan is not approved or breaks a plan rule")
        else:
            missing.append("the base method found no approved plan")
        return PlanOutcome(finalize(self.protocol, p.design_seq, plans), asked=2, found=found,
                           showable=len(plans), why="; ".join(missing) or None)


# Seconds a question is shown before what follows its answers is computed: an answer given
# sooner is computed when it comes (as without prefetching), so the work for the answers not
# given does not compete with it for the process. Reading two plans takes a person longer;
# a quarter of a second fired the work just as answers given at once (with their widget
# changes) arrived.
READING_S = 1.0
# Seconds a draft answer stands before its start is speculated: none, since a person's moves
# are further apart than a search takes and the last draft before Continue needs every moment
# (one not started yet when a newer draft comes is dropped; one running finishes).
DRAFT_S = 0.0
# Participants whose base plan from their start is kept for their final plans.
BASE_PLANS_KEPT = 1024
# The answers each kind of question can get, as the prefetch keys spell them.
ANSWERS = {"compare": ("0", "1"), "accept": ("yes", "no")}


def _given(kind: str, answer: Any) -> tuple[str, str]:
    """(kind, answer) of a page's answer as the prefetch keys spell it (``ANSWERS``)."""
    if kind == "compare":
        return kind, str(int(answer.choice))
    return kind, "yes" if answer.accept else "no"


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
