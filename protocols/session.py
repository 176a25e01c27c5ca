"""The study session: one deterministic state machine, driven by the web app and the simulator.

``Study(protocol, store)`` registers the study in the store (or reopens it: the stored
protocol must be the same) and serves its participants:

    study = Study(load_protocol("tominaga-replication"), Store("study.duckdb"))
    session = study.start(external_id=prolific_pid)      # -> ParticipantSession
    page = session.current_page()                        # protocols.pages.Page
    page = session.submit(page.id, {"agree": True})      # the next page
    session = study.resume(token)                        # after a refresh or restart

The page/answer contract (one class per page kind: payload, validation, effect) is in
``protocols.pages``, acting through the narrow ``protocols.context``; the page order in
``protocols.flow``; plan generation in ``protocols.planning``; interactive methods' questions
in ``protocols.interactive``.

Guarantees.

- Tokens are random (``secrets.token_urlsafe``, 192 bits) and stored only as SHA-256
  hashes; an unknown token raises ``UnknownTokenError``. Raw external ids (e.g. a
  recruitment platform's participant id) are stored only as salted SHA-256 hashes: the salt
  is the study's (random, in ``studies.salt``) unless ``RECOURSE_STUDY_SALT`` is set. Starting
  again with a known external id resumes that participant under a fresh token.
- ``submit(page_id, answer)`` validates the answer against the page (``AnswerError`` with
  every problem; nothing written), then writes the answer, its consequences (profile,
  elicitation, plans, rating, comparison), an audit event and the participant's new state in
  ONE transaction. The state update is guarded by the participant's step, so a stale or
  concurrent submit cannot overwrite newer state. Re-submitting an answered page changes
  nothing and returns the current page; answering any other page than the current one raises
  ``PageMismatchError``.
- Plans are generated once - when the elicitation is submitted, or at the profile step when
  the protocol has no elicitation - stored, and reloaded (never regenerated) on resume.
  Assignment, persona, plan choice and order depend only on the protocol seed and the
  participant's sequence number.
- ``submit_many`` does the same for many participants in one transaction, generating all
  their plans with one method call per arm (the simulator's fast path; the web path is a
  batch of one through the same code). Drivers may add rows of their own (simulation truth)
  to the same transaction with ``extra_rows``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

import numpy as np

from data import records
from data.store import Store, WriteConflictError
from engine.decision import rejected_rows
from protocols import design
from protocols import pages as pg
from protocols.context import Answering, Rows, SessionContext, now
from protocols.flow import Flow
from protocols.interactive import InteractiveFlow
from protocols.participation import (
    PageMismatchError,
    ParticipantSession,
    SessionEndedError,
    SubmitItem,
    UnknownTokenError,
    hash_token,
)
from protocols.planning import ShownPlan, generate_plans
from protocols.registration import SALT_ENV, StudyMismatchError, register_study
from protocols.resources import StudyResources, study_resources
from protocols.schema import Protocol
from protocols.state import Participant, profiles_from_row

TOKEN_CACHE_SIZE = 50_000  # resume tokens remembered per process (~150 bytes each)

__all__ = [
    "SALT_ENV", "PageMismatchError", "ParticipantSession", "SessionEndedError", "Study",
    "StudyMismatchError", "SubmitItem", "UnknownTokenError", "hash_token",
]
# Insert order inside a transaction (no foreign keys, but a readable audit order).
_TABLES = ("profiles", "elicitations", "plans", "responses", "ratings", "comparisons",
           "events", "sim_participants", "sim_ratings")


class Study:
    """A protocol run in a store (module docstring)."""

    def __init__(
        self,
        protocol: Protocol,
        store: Store,
        *,
        study_id: str | None = None,
        resources: StudyResources | None = None,
        decision_model: str | None = None,
        simulation: dict[str, Any] | None = None,
    ) -> None:
        self.protocol = protocol
        self.store = store
        self.study_id = study_id or protocol.id
        self.resources = resources or study_resources(protocol, decision_model=decision_model)
        self.scenario = self.resources.scenario
        for arm in protocol.arms:  # a method that cannot be built fails before any write
            self.resources.method(arm)
        self.interactive = InteractiveFlow(protocol, self.resources)
        self.context = SessionContext(self.study_id, protocol, self.scenario,
                                      self.resources.classifier, self.persona, self.interactive)
        self.flow = Flow(self.context)
        self._salt = register_study(store, self.study_id, protocol, simulation)
        self._cache: dict[str, Participant] = {}
        self._tokens: OrderedDict[str, str] = OrderedDict()  # token hash -> participant
        self._pages: dict[str, tuple[Participant, pg.Page]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    # ---- population ---------------------------------------------------------------------
    @cached_property
    def rejected_population(self) -> np.ndarray:
        """Profiles of the persona split that the decision model rejects and that lie in the
        training range (so the profile form accepts them): personas and synthetic people."""
        split = self.protocol.profile.persona_split
        rows = rejected_rows(self.scenario, self.resources.classifier, split, within_bounds=True)
        pool = self.scenario.dataset[split][0][rows].numpy().copy()
        if len(pool) == 0:
            raise ValueError("the decision model rejects nobody: no persona to assign")
        return pool

    def persona(self, seq: int) -> np.ndarray:
        pool = self.rejected_population
        i = int(design.rng_for(self.protocol.seed, design.STREAM_PERSONA, seq).integers(len(pool)))
        return pool[i].copy()

    def completion_code(self, participant_id: str) -> str:
        if self.protocol.debrief.completion_code:
            return self.protocol.debrief.completion_code
        digest = hmac.new(self._salt.encode(), participant_id.encode(), "sha256").hexdigest()
        return digest[:10].upper()

    def event(self, pid: str, page_id: str | None, event: str,
              detail: dict[str, Any] | None = None) -> dict[str, Any]:
        """An ``events`` row of this study (the append-only audit)."""
        return self.context.event(pid, page_id, event, detail)

    def hash_external(self, value: str) -> str:
        """The salted SHA-256 under which a raw external id is stored (never the raw id)."""
        return hashlib.sha256(f"{self._salt}:{value}".encode()).hexdigest()

    # ---- starting and resuming ----------------------------------------------------------
    def start(self, external_id: str | None = None, *, source: str = "web") -> ParticipantSession:
        """A new participant (or the one with this external id, under a fresh token)."""
        token = secrets.token_urlsafe(24)
        ext_hash = None
        if external_id is not None:
            if not str(external_id).strip():
                raise ValueError("external id must not be empty")
            ext_hash = self.hash_external(external_id)
        with self.store.lock:
            if ext_hash is not None:
                known = records.participant_by_external(self.store, self.study_id, ext_hash)
                if known is not None:
                    pid = known["participant_id"]
                    with self.store.transaction() as tx:
                        tx.update("participants", ["study_id", "participant_id"], [{
                            "study_id": self.study_id, "participant_id": pid,
                            "token_hash": hash_token(token), "updated_at": now()}])
                        tx.insert("events", [self.event(pid, None, "token_renewed")])
                    return ParticipantSession(self, pid, token)
            with self.store.transaction() as tx:
                seq = records.next_seq(tx, self.study_id)
                (p,) = self._new_participants(tx, [seq], source, [token], [ext_hash], None)
        self._cache[p.participant_id] = p
        return ParticipantSession(self, p.participant_id, token)

    def start_many(
        self,
        seqs: Sequence[int],
        *,
        source: str = "synthetic",
        extra_rows: Callable[[list[Participant]], Rows] | None = None,
    ) -> list[str]:
        """New participants with the given sequence numbers, in one transaction (drivers)."""
        with self.store.transaction() as tx:
            ps = self._new_participants(tx, list(seqs), source, None, None, extra_rows)
        for p in ps:
            self._cache[p.participant_id] = p
        return [p.participant_id for p in ps]

    def _new_participants(
        self,
        tx: Any,
        seqs: list[int],
        source: str,
        tokens: list[str] | None,
        ext_hashes: list[str | None] | None,
        extra_rows: Callable[[list[Participant]], Rows] | None,
    ) -> list[Participant]:
        w = Answering(self.context)
        ps: list[Participant] = []
        rows = w.rows
        part_rows = []
        for i, seq in enumerate(seqs):
            pid = f"{self.study_id[:16]}-{seq:05d}-{secrets.token_hex(4)}"
            p = Participant(self.study_id, pid, seq, source, design.assign_arm(self.protocol, seq))
            p.completion_code = self.completion_code(pid)
            if self.protocol.profile.source == "persona":
                w.set_profile(p, self.persona(seq), "persona")
            part_rows.append({
                "study_id": self.study_id, "participant_id": pid, "seq": seq,
                "token_hash": hash_token(tokens[i]) if tokens else None,
                "external_id_hash": ext_hashes[i] if ext_hashes else None,
                "source": source, "arm": p.arm, "status": p.status,
                "current_page": self.flow.current_id(p), "step": 0,
                "state_json": p.state_json(), "completion_code": p.completion_code,
                "created_at": w.at, "updated_at": w.at,
            })
            rows["events"].append(self.event(pid, None, "start", {"seq": seq, "arm": p.arm}))
            ps.append(p)
        tx.insert("participants", part_rows)
        if extra_rows is not None:
            for table, extra in extra_rows(ps).items():
                rows[table] += extra
        for table in _TABLES:
            tx.insert(table, rows.get(table, []))
        return ps

    def resume(self, token: str) -> ParticipantSession:
        """The participant holding ``token``; UnknownTokenError if there is none."""
        if not isinstance(token, str) or not token:
            raise UnknownTokenError("no participant token given")
        key = hash_token(token)
        pid = self._tokens.get(key)
        if pid is None:
            # A token never changes hands, so its participant is looked up once: the web
            # app resumes by token on every script run (every click).
            row = records.participant_by_token(self.store, key)
            if row is None or row["study_id"] != self.study_id:
                raise UnknownTokenError(
                    "unknown participant token: the link may be mistyped or belong to another "
                    "study")
            pid = row["participant_id"]
            with self._lock:
                self._tokens[key] = pid
                while len(self._tokens) > TOKEN_CACHE_SIZE:
                    self._tokens.popitem(last=False)
        return ParticipantSession(self, pid, token)

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
                            status=row["status"], step=int(row["step"]),
                            completion_code=row["completion_code"] or "")
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
        cached = self._pages.get(participant_id)
        if cached is not None and cached[0] is p:
            return cached[1]
        page = self.flow.page(p)
        self._pages[participant_id] = (p, page)
        return page

    def forget(self, participant_ids: Sequence[str] | None = None) -> None:
        """Drop cached state (it is reloaded from the store on next use)."""
        with self._lock:
            if participant_ids is None:
                self._cache.clear()
                self._pages.clear()
            for pid in participant_ids or ():
                self._cache.pop(pid, None)
                self._pages.pop(pid, None)

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
        with self._lock:
            locks = [self._locks.setdefault(pid, threading.Lock()) for pid in sorted(pids)]
        for lock in locks:
            lock.acquire()
        try:
            try:
                return self._submit_locked(items, extra_rows)
            except WriteConflictError:
                # Someone else wrote first (another Study object on this file, or a stale
                # cache): reload and re-decide; an answered page is then idempotent.
                self.forget(pids)
                return self._submit_locked(items, extra_rows)
        finally:
            for lock in locks:
                lock.release()

    def _submit_locked(self, items: Sequence[SubmitItem], extra: Rows | None) -> list[pg.Page]:
        missing = [it.participant_id for it in items if it.participant_id not in self._cache]
        if missing:
            self.load(missing)
        results: list[pg.Page | None] = [None] * len(items)
        work: list[tuple[int, Participant, Participant, pg.Page, Any]] = []
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
            work.append((i, old, old.copy(), page, pg.validate_answer(page, it.answer)))
        if not work:
            return results  # type: ignore[return-value]
        w = Answering(self.context)
        for _, _, p, page, answer in work:
            correct = pg.PAGE_KINDS[page.kind].apply(w, p, page, answer)
            w.record(p, page, answer, correct)
        if w.plan_requests:
            plans = generate_plans(self.protocol, self.resources, w.plan_requests)
            for _, _, p, _, _ in work:
                if p.participant_id in plans:
                    w.attach_plans(p, plans[p.participant_id])
        for _, _, p, _, _ in work:
            if p.active and self.flow.current_id(p) == "debrief":
                p.status = "complete"
                w.rows["events"].append(self.event(p.participant_id, None, "complete"))
        at, rows = w.at, w.rows
        with self.store.transaction() as tx:
            for table in _TABLES:
                tx.insert(table, rows.get(table, []) + (extra or {}).get(table, []))
            tx.update(
                "participants", ["study_id", "participant_id"],
                [{"study_id": self.study_id, "participant_id": p.participant_id,
                  "status": p.status, "current_page": self.flow.current_id(p), "step": p.step,
                  "state_json": p.state_json(), "updated_at": at} for _, _, p, _, _ in work],
                guard="step", expected=[old.step for _, old, _, _, _ in work],
            )
        for i, _, p, _, _ in work:
            self._cache[p.participant_id] = p
            results[i] = self.current_page(p.participant_id)
        return results  # type: ignore[return-value]
