"""Who enters a study, and when they count: the starting and resuming half of ``Study``.

- ``start()`` starts a participant; with a recruitment id (e.g. ``PROLIFIC_PID``) already
  known it resumes that participant instead - under an additional token (tokens are never
  revoked) and only when the link carries the recruitment session recorded at the first
  visit (e.g. ``SESSION_ID``, stored as a salted hash). A recruitment id identifies, it does
  not authenticate: anyone may learn it, nobody but the participant holds the session of
  their link. Otherwise ``IdRefusedError``, and the refused visit is recorded
  (``id_refused``: the dashboard flags the participant). An id outside the protocol's
  ``recruitment.id_pattern`` raises ``InvalidExternalIdError`` and writes nothing.
- ``resume(token)`` resumes whoever holds the token (any token ever issued to them).
- A participant counts for assignment only once they consent: the consent answer's
  transaction gives them the next consent number (``consent_seq``), from which their arm and
  persona follow (``_enrol``). Visits that never consent shift nobody's assignment, and the
  numbers are the same as before for a study where everyone consents in order of arrival
  (the simulator).

``Study`` (protocols.running.session) inherits these methods; they use its store, flow and caches.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from data import records, withdrawal
from data.columns import EVENTS, PARTICIPANTS, TOKENS
from protocols.definition.translation import Translator
from protocols.running import design, quotas
from protocols.running.context import ROW_TABLES, Answering, Rows, now
from protocols.running.participation import (
    IdRefusedError,
    InvalidExternalIdError,
    ParticipantSession,
    UnknownTokenError,
    hash_token,
)
from protocols.running.state import Participant

if TYPE_CHECKING:
    import re

    import numpy as np

    from data.store import Store
    from protocols.definition.schema import Protocol
    from protocols.running.cache import BoundedCache, StripedLocks
    from protocols.running.context import SessionContext
    from protocols.running.flow import Flow


class UnknownLanguageError(ValueError):
    """A link or a choice asks for a language the protocol is not translated into.

    >>> import tempfile
    >>> from pathlib import Path
    >>> from data import Store
    >>> from protocols import Study, UnknownLanguageError, load_protocol
    >>> study = Study(load_protocol("tominaga-replication"),
    ...               Store(Path(tempfile.mkdtemp()) / "study.duckdb"))
    >>> try:
    ...     study.start(external_id="p1", session="s1", language="fr")
    ... except UnknownLanguageError as e:
    ...     print("refused before anything is stored")
    refused before anything is stored
    """


class Admission:
    """Starting, resuming and enrolling participants (module docstring); a part of Study."""

    protocol: Protocol
    store: Store
    study_id: str
    context: SessionContext
    flow: Flow
    _salt: str
    _cache: BoundedCache[str, Participant]
    _id_pattern: re.Pattern[str] | None
    persona: Callable[[int], np.ndarray]  # Study.persona
    _locks: StripedLocks
    forget: Callable[[Sequence[str] | None], None]  # Study.forget
    sweep: Callable[..., list[str]]  # Limits.sweep
    standing: Callable[[], quotas.Standing | None]  # Limits.standing
    translators: dict[str, Translator]  # language -> its translator (English first)

    def completion_code(self, participant_id: str) -> str:
        """The protocol's completion code (recruitment.completion.code, else
        debrief.completion_code), else one per participant (salted HMAC of its id)."""
        ending = self.protocol.recruitment.completion
        if ending is not None and ending.code:
            return ending.code
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
    def start(
        self,
        external_id: str | None = None,
        *,
        session: str | None = None,
        recruitment: Mapping[str, str] | None = None,
        source: str = "web",
        language: str = "en",
    ) -> ParticipantSession:
        """A new participant, or the one already started with ``external_id`` - under an
        additional token, and only when ``session`` (the recruitment session of the link) is
        the one recorded at its first visit (IdRefusedError otherwise). ``recruitment``: the
        link's further parameters, recorded as salted hashes (module docstring). ``language``:
        the one the link asks for (UnknownLanguageError, nothing written, when the protocol
        has no such translation); a returning participant keeps theirs."""
        self._check_language(language)
        ext_hash = None
        if external_id is not None:
            if not str(external_id).strip():
                raise ValueError("external id must not be empty")
            if self._id_pattern is not None and not self._id_pattern.fullmatch(external_id):
                raise InvalidExternalIdError(
                    "the participant id does not have the form this study expects")
            ext_hash = self.hash_external(external_id)
        session_hash = self.hash_external(session) if session else None
        hashes = {n: self.hash_external(v) for n, v in sorted((recruitment or {}).items())}
        token = secrets.token_urlsafe(24)
        with self.store.lock:
            known = (records.participant_by_external(self.store, self.study_id, ext_hash)
                     if ext_hash is not None else None)
            if known is not None:
                return self._returning(known, session_hash, hashes, token)
            with self.store.transaction() as tx:
                seq = records.next_seq(tx, self.study_id)
                (p,) = self._new_participants(tx, [seq], source, [token], [ext_hash], None,
                                              session_hash=session_hash, languages=[language],
                                              full=self._full_now(tx))
                if ext_hash is not None or hashes:
                    tx.insert(EVENTS.name, [self.event(p.participant_id, None, "recruitment",
                                                       {"outcome": "started", "hashes": hashes})])
        self._cache[p.participant_id] = p
        return ParticipantSession(self, p.participant_id, token)

    def _returning(self, known: dict[str, Any], session_hash: str | None,
                   hashes: dict[str, str], token: str) -> ParticipantSession:
        """A visit by a known external id (call under ``store.lock``)."""
        pid = known["participant_id"]
        stored = known["session_hash"]
        if stored is None or session_hash is None or not hmac.compare_digest(stored,
                                                                              session_hash):
            with self.store.transaction() as tx:
                tx.insert("events", [self.event(pid, None, "id_refused",
                                                {"session": session_hash, "hashes": hashes})])
            raise IdRefusedError(
                "this participant id was already used with another recruitment session")
        with self.store.transaction() as tx:
            tx.insert(TOKENS.name, [TOKENS.row(
                token_hash=hash_token(token), study_id=self.study_id, participant_id=pid,
                issued_at=now(), via="recruitment")])
            tx.insert(EVENTS.name, [
                self.event(pid, None, "recruitment", {"outcome": "resumed", "hashes": hashes}),
                self.event(pid, None, "token_issued")])
        return ParticipantSession(self, pid, token)

    def start_many(
        self,
        seqs: Sequence[int],
        *,
        source: str = "synthetic",
        extra_rows: Callable[[list[Participant]], Rows] | None = None,
        languages: Sequence[str] | None = None,
    ) -> list[str]:
        """New participants with the given sequence numbers, in one transaction (drivers);
        ``languages``: each one's language (default English)."""
        for language in set(languages or ()):
            self._check_language(language)
        with self.store.lock, self.store.transaction() as tx:
            ps = self._new_participants(tx, list(seqs), source, None, None, extra_rows,
                                        languages=list(languages) if languages else None,
                                        full=self._full_now(tx))
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
        *,
        session_hash: str | None = None,
        languages: list[str] | None = None,
        full: dict[str, Any] | None = None,
    ) -> list[Participant]:
        """Participants before consent: no arm, no profile yet (``_enrol``); ``full``: the
        quota standing of a full study (they start as ``full``: protocols.running.limits)."""
        w = Answering(self.context)
        ps: list[Participant] = []
        rows = w.rows
        part_rows = []
        for i, seq in enumerate(seqs):
            pid = f"{self.study_id[:16]}-{seq:05d}-{secrets.token_hex(4)}"
            p = Participant(self.study_id, pid, seq, source, None, updated_at=w.at,
                            started_at=w.at, language=languages[i] if languages else "en",
                            status="full" if full is not None else "active")
            p.completion_code = self.completion_code(pid)
            token_hash = hash_token(tokens[i]) if tokens else None
            part_rows.append(PARTICIPANTS.row(
                study_id=self.study_id, participant_id=pid, seq=seq, token_hash=token_hash,
                external_id_hash=ext_hashes[i] if ext_hashes else None,
                session_hash=session_hash, source=source, arm=None, status=p.status,
                current_page=self.flow.current_id(p), step=0, state_json=p.state_json(),
                completion_code=p.completion_code, created_at=w.at, updated_at=w.at,
            ))
            if token_hash is not None:
                rows[TOKENS.name].append(TOKENS.row(
                    token_hash=token_hash, study_id=self.study_id, participant_id=pid,
                    issued_at=w.at, via="start"))
            rows[EVENTS.name].append(self.event(pid, None, "start", {"seq": seq}))
            if full is not None:
                rows[EVENTS.name].append(self.event(pid, None, "study_full", {"arms": full}))
            ps.append(p)
        tx.insert(PARTICIPANTS.name, part_rows)
        if extra_rows is not None:
            for table, extra in extra_rows(ps).items():
                rows[table] += extra
        for table in ROW_TABLES:
            tx.insert(table, rows.get(table, []))
        return ps

    def _full_now(self, tx: Any) -> dict[str, Any] | None:
        """Time out whoever is past the limit (their places free); then, with quotas, the
        standing when the study is full, else None (call under ``store.lock``)."""
        self.forget(self.sweep(tx))
        if self.protocol.quotas is None:
            return None
        standing = self.standing()
        return standing.detail() if standing is not None and standing.full else None

    def _enrol(self, tx: Any, w: Answering, standing: quotas.Standing | None) -> None:
        """Number the participants who consented in this transaction (by arrival) and assign
        them: arm (by ``standing`` under quotas: a full study ends them as ``full``), and a
        persona when the protocol gives one."""
        if not w.enrolling:
            return
        first = records.next_consent_seq(tx, self.study_id)
        for k, p in enumerate(sorted(w.enrolling, key=lambda q: q.seq)):
            p.consent_seq = first + k
            detail: dict[str, Any] = {"consent_seq": p.consent_seq}
            if standing is None:
                p.arm = design.assign_arm(self.protocol, p.consent_seq)
            else:
                detail["quota"] = standing.detail()  # what the decision saw
                arm = standing.choose(self.protocol, p.consent_seq)
                if arm is None:
                    p.status = "full"
                    w.rows["events"].append(self.event(p.participant_id, None, "study_full",
                                                       detail))
                    continue
                p.arm = arm
                standing.take(arm)
            if self.protocol.profile.source == "persona":
                w.set_profile(p, self.persona(p.consent_seq), "persona")
            w.rows["events"].append(self.event(p.participant_id, None, "assigned",
                                               {**detail, "arm": p.arm}))

    def _check_language(self, language: str) -> None:
        if language not in self.translators:
            raise UnknownLanguageError(
                f"this study is not offered in {language!r} (it is in "
                f"{', '.join(self.translators)})")

    def choose_language(self, participant_id: str, language: str) -> None:
        """The participant's choice of language on the first page (before any answer; later
        answers keep the language they started in). UnknownLanguageError for a language the
        protocol has no translation of; nothing is written then."""
        self._check_language(language)
        locks = self._locks.for_keys([participant_id])
        for lock in locks:
            lock.acquire()
        try:
            old = self.participant(participant_id)
            if old.language == language or old.step > 0:
                return
            p = old.copy()
            p.language = language
            with self.store.transaction() as tx:
                tx.update("participants", ["study_id", "participant_id"],
                          [{"study_id": self.study_id, "participant_id": participant_id,
                            "state_json": p.state_json()}], guard="step", expected=[old.step])
                tx.insert("events", [self.event(participant_id, None, "language",
                                                {"language": language})])
            self._cache[participant_id] = p
        finally:
            for lock in locks:
                lock.release()

    def withdraw(self, participant_id: str, requested_by: str = "participant",
                 account: str | None = None) -> dict[str, Any]:
        """Delete the participant's answers and audit it (data.withdrawal; ``account``: the
        researcher account that asked), serialized with their answers in this process; the
        audit record. Whatever they answer next is refused (``SessionEndedError``) and
        writes nothing; their links show the end page."""
        locks = self._locks.for_keys([participant_id])
        for lock in locks:
            lock.acquire()
        try:
            return withdrawal.withdraw(self.store, self.study_id, participant_id, requested_by,
                                       account)
        finally:
            self.forget([participant_id])
            for lock in locks:
                lock.release()

    def resume(self, token: str) -> ParticipantSession:
        """The participant holding ``token``; UnknownTokenError if there is none."""
        if not isinstance(token, str) or not token:
            raise UnknownTokenError("no participant token given")
        key = hash_token(token)
        pid = self._tokens.get(key)
        if pid is None:
            # A token never changes hands (tokens are never reissued to another participant),
            # so it is looked up once per process: the web app resumes by token on every
            # script run, i.e. on every click (docs/deploy.md, "Capacity").
            row = records.participant_by_token(self.store, key)
            if row is None or row["study_id"] != self.study_id:
                raise UnknownTokenError(
                    "unknown participant token: the link may be mistyped or belong to another "
                    "study")
            pid = row["participant_id"]
            self._tokens[key] = pid
        return ParticipantSession(self, pid, token)
