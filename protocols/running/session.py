"""The study session: one deterministic state machine, driven by the web app and the simulator.

``Study(protocol, store)`` registers the study in the store (or reopens it: the stored
protocol must be the same) and serves its participants:

>>> import tempfile
>>> from pathlib import Path
>>> from data import Store
>>> from protocols import Study, load_protocol
>>> protocol = load_protocol("tominaga-replication")   # the paper's order: screening first
>>> study = Study(protocol, Store(Path(tempfile.mkdtemp()) / "study.duckdb"))
>>> session = study.start(external_id="p1", session="s1")   # -> ParticipantSession
>>> page = session.current_page()                             # protocols.running.pages.Page
>>> page.kind, [q.id for q in protocol.screening][:3]
('screening', ['age', 'gender', 'occupation'])
>>> eligible = {"age": 30, "gender": "Female", "occupation": "Company worker (full-time)",
...             "income": "4M - 5M", "car": "I plan to purchase within a year.",
...             "loans": ["I do not have any loans"]}
>>> page = session.submit(page.id, {"answers": eligible})     # the next page
>>> page.kind
'consent'
>>> study.resume(session.token).current_page().id   # after a refresh or restart
'consent'

The page/answer contract (one class per page kind: payload, validation, effect) is in
``protocols.running.pages``, acting through the narrow ``protocols.running.context``; the page order in
``protocols.running.flow``; plan generation in ``protocols.running.planning``; interactive methods' questions
in ``protocols.running.interactive``; who may start or resume, and when a participant counts for
assignment, in ``protocols.running.admission``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from data import records
from data.store import Store, WriteConflictError
from engine.decision import rejected_rows
from engine.scenarios.personas import persona_mask
from protocols.definition.schema import Protocol
from protocols.definition.translation import shipped_dir, translators
from protocols.running import design
from protocols.running import pages as pg
from protocols.running.admission import Admission, UnknownLanguageError
from protocols.running.batching import Runner
from protocols.running.cache import BoundedCache, StripedLocks
from protocols.running.context import ROW_TABLES, Answering, Rows, SessionContext, now
from protocols.running.flow import Flow
from protocols.running.interactive import InteractiveFlow
from protocols.running.limits import Limits, SessionTimedOutError
from protocols.running.participation import (
    IdRefusedError,
    InvalidExternalIdError,
    PageMismatchError,
    ParticipantSession,
    SessionEndedError,
    SubmitItem,
    UnknownTokenError,
    hash_token,
)
from protocols.running.planning import generate
from protocols.running.registration import (
    SALT_ENV,
    SaltMismatchError,
    StudyMismatchError,
    register_study,
)
from protocols.running.resources import StudyResources, study_resources
from protocols.running.shown_plan import ShownPlan
from protocols.running.state import Participant, profiles_from_row

__all__ = [
    "SALT_ENV", "IdRefusedError", "InvalidExternalIdError", "PageMismatchError",
    "ParticipantSession", "SaltMismatchError", "SessionEndedError", "SessionTimedOutError",
    "Study",
    "StudyMismatchError", "SubmitItem", "UnknownLanguageError", "UnknownTokenError",
    "hash_token",
]
# Participants whose state and built page a process keeps in memory (reloaded after).
CACHE_SIZE = 4096
# Resume tokens whose participant a process remembers (~150 bytes each).
TOKEN_CACHE_SIZE = 50_000


class Answer(NamedTuple):
    """One answer of a ``submit_many`` in the making: its place among the items, the
    participant before it and the copy it changes, the page answered and the validated
    answer."""

    index: int
    before: Participant
    after: Participant
    page: pg.Page
    answer: Any


class Study(Admission, Limits):
    """A protocol run in a store (module docstring).

    >>> import tempfile
    >>> from pathlib import Path
    >>> from data import Store
    >>> from protocols import Study, load_protocol
    >>> store = Store(Path(tempfile.mkdtemp()) / "study.duckdb")
    >>> study = Study(load_protocol("tominaga-replication"), store)
    >>> session = study.start(external_id="p1", session="s1")
    >>> session.current_page().kind               # the reference study screened first
    'screening'
    >>> study.resume(session.token).current_page().id        # after a refresh or restart
    'screening'
    >>> study.resume(session.token).participant_id == session.participant_id
    True

    What a session guarantees (hashed tokens and ids, validated answers, plans generated
    once, batched transactions, two sessions, prefetches, quotas, bounded memory):
    docs/architecture.md, "The study session's guarantees".
    """

    def __init__(
        self,
        protocol: Protocol,
        store: Store,
        *,
        study_id: str | None = None,
        resources: StudyResources | None = None,
        decision_model: str | None = None,
        simulation: dict[str, Any] | None = None,
        prefetch: bool = False,
        search_runner: Runner | None = None,
        speculative_runner: Runner | None = None,
        translations: Path | None = None,  # the folder of its translation files
        clock: Callable[[], datetime] | None = None,
        timer: Callable[[], datetime] | None = None,
    ) -> None:
        self.protocol = protocol
        # the protocol's languages: its translation files (a broken one fails here); a
        # shipped protocol as shipped has its shipped ones
        self.translators = translators(protocol, translations or shipped_dir(protocol))
        self.store = store
        self.study_id = study_id or protocol.id
        self.resources = resources or study_resources(protocol, decision_model=decision_model)
        self.scenario = self.resources.scenario
        for arm in protocol.arms:  # a method that cannot be built fails before any write
            self.resources.method(arm)
        self.interactive = InteractiveFlow(protocol, self.resources, prefetch=prefetch,
                                           runner=search_runner,
                                           speculative_runner=speculative_runner)
        self.context = SessionContext(self.study_id, protocol, self.scenario,
                                      self.resources.classifier, self.persona, self.interactive,
                                      clock or now, timer or now)
        self.flow = Flow(self.context)
        self._salt = register_study(store, self.study_id, protocol, simulation)
        self._cache: BoundedCache[str, Participant] = BoundedCache(CACHE_SIZE)
        self._pages: BoundedCache[str, tuple[Participant, pg.Page]] = BoundedCache(CACHE_SIZE)
        self._tokens: BoundedCache[str, str] = BoundedCache(TOKEN_CACHE_SIZE)  # hash -> pid
        self._locks = StripedLocks()
        id_pattern = protocol.recruitment.id_pattern
        self._id_pattern = re.compile(id_pattern) if id_pattern else None

    # ---- population ---------------------------------------------------------------------
    @cached_property
    def rejected_population(self) -> np.ndarray:
        """Profiles of the persona split that the decision model rejects, that lie in the
        training range (so the profile form accepts them) and within the scenario's persona
        limits (an adult applicant: ``engine.scenarios.personas``): personas and synthetic
        people."""
        split = self.protocol.profile.persona_split
        rows = rejected_rows(self.scenario, self.resources.classifier, split, within_bounds=True)
        x = self.scenario.dataset[split][0][rows]
        pool = x[persona_mask(self.scenario, x)].numpy().copy()
        if len(pool) == 0:
            raise ValueError("the decision model rejects nobody: no persona to assign")
        return pool

    def persona(self, seq: int) -> np.ndarray:
        pool = self.rejected_population
        i = int(design.rng_for(self.protocol.seed, design.STREAM_PERSONA, seq).integers(len(pool)))
        return pool[i].copy()

    def session(self, participant_id: str) -> ParticipantSession:
        """A handle by participant id (trusted drivers: the simulator, researcher tools)."""
        self.participant(participant_id)
        return ParticipantSession(self, participant_id, None)

    # ---- state --------------------------------------------------------------------------
    def participant(self, participant_id: str) -> Participant:
        p = self._cache.get(participant_id)
        if p is None:
            self.load([participant_id])
            p = self._cache.get(participant_id)
            if p is None:
                raise UnknownTokenError(f"no participant {participant_id!r} in {self.study_id}")
        return p

    def load(self, participant_ids: list[str]) -> None:
        """(Re)load participants from the store into the in-memory cache."""
        names = self.scenario.feature_names
        for pid, b in records.participants_bundle(self.store, self.study_id,
                                                  participant_ids).items():
            row = b["participant"]
            p = Participant(self.study_id, pid, int(row["seq"]), row["source"], row["arm"],
                            consent_seq=row["consent_seq"], status=row["status"],
                            step=int(row["step"]), completion_code=row["completion_code"] or "",
                            updated_at=row["updated_at"], started_at=row["created_at"])
            p.load_state(row["state_json"])
            if b["profile"] is not None:
                x = json.loads(b["profile"]["x_json"])
                p.x = np.array([x[n] for n in names], dtype=float)
            if b["elicitation"] is not None:
                p.stated = profiles_from_row(b["elicitation"], names)
            p.plans = ShownPlan.from_stored(b["plans"], self.scenario)
            self._cache[pid] = p

    def current_page(self, participant_id: str) -> pg.Page:
        """The participant's current page (built once per state; the state is immutable)."""
        p = self.participant(participant_id)
        if self.past_limit(p):  # a visit after the limit: the time-is-up page, never a form
            self.time_out([participant_id])
            p = self.participant(participant_id)
        cached = self._pages.get(participant_id)
        if cached is not None and cached[0] is p and cached[1].kind != "pause":
            return cached[1]  # a pause ends by the clock, not by an answer: never kept
        page = self.flow.page(p)
        self._pages[participant_id] = (p, page)
        return page

    def forget(self, participant_ids: Sequence[str] | None = None) -> None:
        """Drop cached state (it is reloaded from the store on next use)."""
        if participant_ids is None:
            self._cache.clear()
            self._pages.clear()
        for pid in participant_ids or ():
            self._cache.pop(pid)
            self._pages.pop(pid)

    # ---- answering ----------------------------------------------------------------------
    def submit(
        self, participant_id: str, page_id: str, answer: Any, extra_rows: Rows | None = None
    ) -> pg.Page:
        return self.submit_many([SubmitItem(participant_id, page_id, answer)], extra_rows)[0]

    def submit_many(
        self, items: Sequence[SubmitItem], extra_rows: Rows | None = None
    ) -> list[pg.Page]:
        """Answers of several participants (one each) in one transaction (module docstring)."""
        pids = [it.participant_id for it in items]
        if len(set(pids)) != len(pids):
            raise ValueError("submit_many takes at most one answer per participant")
        locks = self._locks.for_keys(pids)
        for lock in locks:
            lock.acquire()
        try:
            with self.interactive.serving():
                return self._submit_retrying(items, extra_rows)
        finally:
            for lock in locks:
                lock.release()

    def speculate(self, participant_id: str, page_id: str, answer: Any) -> bool:
        """A draft of the current page's answer (what its widgets show before Continue):
        when that answer would start an interactive method's session, its start is computed
        in the background (``InteractiveFlow.speculate_start``) for ``submit`` to take if
        the answer given is the draft's. Nothing is stored and nothing changes; False when
        there is nothing to start (no prefetching, another page, an invalid draft)."""
        if self.interactive.prefetcher is None:
            return False
        p = self.participant(participant_id)
        if not (p.active and self.interactive.applies(p)) or self.flow.current_id(p) != page_id:
            return False
        page = self.current_page(participant_id)
        try:
            valid = pg.validate_answer(page, answer)
        except pg.AnswerError:
            return False
        w, draft = Answering(self.context), p.copy()  # the answer applied to a copy, not kept
        pg.PAGE_KINDS[page.kind].apply(w, draft, page, valid)
        if not (draft.active and w.wants_plans(draft)):
            return False
        self.interactive.speculate_start(draft)
        return True

    def _submit_retrying(self, items: Sequence[SubmitItem], extra: Rows | None) -> list[pg.Page]:
        try:
            return self._submit_locked(items, extra)
        except WriteConflictError:
            # Someone else wrote first (another Study object on this file, or a stale
            # cache): reload and re-decide; an answered page is then idempotent.
            self.forget([it.participant_id for it in items])
            return self._submit_locked(items, extra)

    def _submit_locked(self, items: Sequence[SubmitItem], extra: Rows | None) -> list[pg.Page]:
        missing = [it.participant_id for it in items if it.participant_id not in self._cache]
        if missing:
            self.load(missing)
        self.check_in_time(items)
        results: list[pg.Page | None] = [None] * len(items)
        work: list[Answer] = []
        for i, it in enumerate(items):
            old = self.participant(it.participant_id)
            if it.page_id in old.answered:
                results[i] = self.current_page(it.participant_id)
                continue
            current = self.flow.current_id(old)
            if not old.active:
                raise SessionEndedError(it.page_id, [f"the session has ended ({old.status})"])
            if it.page_id != current:
                raise PageMismatchError(it.page_id, [f"the current page is {current!r}"])
            page = self.current_page(it.participant_id)
            work.append(Answer(i, old, old.copy(), page, pg.validate_answer(page, it.answer)))
        if not work:
            return results  # type: ignore[return-value]
        w = Answering(self.context)
        given = {it.participant_id: it.seconds for it in items}
        for a in work:
            p = a.after
            correct = pg.PAGE_KINDS[a.page.kind].apply(w, p, a.page, a.answer)
            seconds = given[p.participant_id]
            if seconds is None and a.before.updated_at is not None:
                seconds = max(0.0, (w.at - a.before.updated_at).total_seconds())
            w.record(p, a.page, a.answer, correct, seconds)
            p.updated_at = w.at
        w.finish_interactions()  # interactive searches of the whole transaction at once
        if w.plan_requests:
            outcomes = generate(self.protocol, self.resources, w.plan_requests)
            for p in (a.after for a in work):
                if p.participant_id in outcomes:
                    w.attach_outcome(p, outcomes[p.participant_id])
        for p in (a.after for a in work):
            if p.active and self.flow.current_id(p) == "debrief":
                p.status = "complete"
                w.rows["events"].append(self.event(p.participant_id, None, "complete"))
        # Consent numbers are taken under the process' lock (another process taking the
        # same one fails on the unique index: WriteConflictError, and submit_many retries).
        with self.store.lock if w.enrolling else nullcontext():
            self._commit(w, work, extra)
        for a in work:
            self._cache[a.after.participant_id] = a.after
            results[a.index] = self.current_page(a.after.participant_id)
        return results  # type: ignore[return-value]

    def _commit(self, w: Answering, work: list[Answer], extra: Rows | None) -> None:
        """One transaction: the enrolment of consenting participants, every row of the
        answers and the participants' new state (guarded by their step)."""
        at, rows = w.at, w.rows
        with self.store.transaction() as tx:
            standing = None
            if w.enrolling:  # places of those past the time limit free, then quotas decide
                self.forget(self.sweep(tx, keep={a.after.participant_id for a in work}))
                standing = self.standing()
            self._enrol(tx, w, standing)
            for table in ROW_TABLES:
                tx.insert(table, rows.get(table, []) + (extra or {}).get(table, []))
            tx.update(
                "participants", ["study_id", "participant_id"],
                [{"study_id": self.study_id, "participant_id": p.participant_id,
                  "arm": p.arm, "consent_seq": p.consent_seq,
                  "status": p.status, "current_page": self.flow.current_id(p), "step": p.step,
                  "state_json": p.state_json(), "updated_at": at} for p in (a.after for a in work)],
                guard="step", expected=[a.before.step for a in work],
            )
