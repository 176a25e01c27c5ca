"""A participant's handle on a study, and what can go wrong answering.

``ParticipantSession`` is what a driver holds for one participant (``current_page``,
``submit``); ``SubmitItem`` one answer of ``Study.submit_many``. Tokens are stored only as
SHA-256 hashes (``hash_token``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Protocol

from protocols.running import pages as pg
from protocols.running.state import Participant


class ServesParticipants(Protocol):
    """What a participant's handle needs of its study (protocols.running.session.Study has it)."""

    def current_page(self, participant_id: str) -> pg.Page: ...

    def submit(self, participant_id: str, page_id: str, answer: Any) -> pg.Page: ...

    def participant(self, participant_id: str) -> Participant: ...

    def speculate(self, participant_id: str, page_id: str, answer: Any) -> bool: ...

    def withdraw(self, participant_id: str, requested_by: str = "participant",
                 account: str | None = None) -> Any: ...


class UnknownTokenError(LookupError):
    """No participant has this token (mistyped, expired link, or another database).

    >>> import tempfile
    >>> from pathlib import Path
    >>> from data import Store
    >>> from protocols import Study, load_protocol
    >>> store = Store(Path(tempfile.mkdtemp()) / "study.duckdb")
    >>> study = Study(load_protocol("tominaga-replication"), store)
    >>> from protocols import UnknownTokenError
    >>> try:
    ...     study.resume("not-a-token")
    ... except UnknownTokenError:
    ...     print("unknown token")
    unknown token
    """


class AdmissionError(LookupError):
    """A visit the study does not let in (the message is safe to show)."""


class IdRefusedError(AdmissionError):
    """A known recruitment id arrived without the recruitment session of its first visit:
    whoever holds the link may not be the participant (protocols.running.admission)."""


class InvalidExternalIdError(AdmissionError):
    """A recruitment id outside the protocol's ``recruitment.id_pattern``."""


class PageMismatchError(pg.AnswerError):
    """An answer for a page that is not the participant's current page."""


class SessionEndedError(pg.AnswerError):
    """An answer after the session ended (completed, declined, screened out)."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class SubmitItem:
    """One answer; ``seconds``: the time on the page as a trusted driver simulated it (the
    simulator), None to measure it (from the participant's previous answer or start).

    >>> import tempfile
    >>> from pathlib import Path
    >>> from data import Store
    >>> from protocols import Study, load_protocol
    >>> store = Store(Path(tempfile.mkdtemp()) / "study.duckdb")
    >>> study = Study(load_protocol("tominaga-replication"), store)
    >>> from protocols import SubmitItem
    >>> sessions = [study.start(external_id=f"p{i}", session="s") for i in range(3)]
    >>> high_income = {"age": 40, "gender": "Male", "occupation": "Government worker",
    ...                "income": "10M or more", "car": "I plan to purchase within a year.",
    ...                "loans": ["I do not have any loans"]}    # outside the study's brackets
    >>> pages = study.submit_many([SubmitItem(s.participant_id, "screening",
    ...                                       {"answers": high_income}, seconds=4.0)
    ...                            for s in sessions])
    >>> [p.id for p in pages]              # three participants, one transaction
    ['end', 'end', 'end']
    """

    participant_id: str
    page_id: str
    answer: Any
    seconds: float | None = None


class ParticipantSession:
    """One participant's handle: ``current_page()`` and ``submit(page_id, answer)``.

    >>> import tempfile
    >>> from pathlib import Path
    >>> from data import Store
    >>> from protocols import Study, load_protocol
    >>> store = Store(Path(tempfile.mkdtemp()) / "study.duckdb")
    >>> study = Study(load_protocol("tominaga-replication"), store)
    >>> session = study.start(external_id="p1", session="s1")
    >>> page = session.current_page()
    >>> page.id, page.progress.step
    ('screening', 1)
    >>> session.submit("screening", {"answers": {}})         # every question is needed
    Traceback (most recent call last):
    ...
    protocols.running.pages.base.AnswerError: ...
    >>> session.current_page().id                            # nothing was stored
    'screening'
    """

    def __init__(self, study: ServesParticipants, participant_id: str, token: str | None) -> None:
        self.study = study
        self.participant_id = participant_id
        self.token = token

    def current_page(self) -> pg.Page:
        return self.study.current_page(self.participant_id)

    def submit(self, page_id: str, answer: Any) -> pg.Page:
        return self.study.submit(self.participant_id, page_id, answer)

    def speculate(self, page_id: str, answer: Any) -> bool:
        """A draft of the page's answer, for work it would start (``Study.speculate``)."""
        return self.study.speculate(self.participant_id, page_id, answer)

    @property
    def language(self) -> str:
        """The language this participant's pages are shown in."""
        return self.study.participant(self.participant_id).language

    def choose_language(self, language: str) -> None:
        """The participant's choice on the first page (``Study.choose_language``)."""
        self.study.choose_language(self.participant_id, language)

    @property
    def status(self) -> str:
        return self.study.participant(self.participant_id).status
