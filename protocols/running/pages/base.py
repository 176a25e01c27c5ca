"""What every page is, and the registry of page kinds.

A renderer (the Streamlit app, the synthetic-participant driver) asks the session for the
current ``Page`` and sends back an answer for that page's id. Every page has:

- ``id``: stable within a participant (``consent``, ``screening``, ``scenario``,
  ``profile``, ``decision``, ``elicitation``, ``hare-1``..., ``plan-1``...,
  ``attention-<check id>``, ``debrief``, ``end``); the part before the first ``-`` is the
  page's *slot* in the sequence (protocols.running.flow);
- ``kind``: what to render, one ``PageKind`` of the registry;
- ``title`` and ``progress`` (``step`` 1-based, ``total`` pages expected; interactive pages
  make the total an estimate until the interaction ends);
- ``payload``: everything the renderer needs, already in display units (labels, formatted
  current and suggested values, units, bounds), never model units.

A ``PageKind`` (in the spirit of oTree's Page classes and jsPsych plugins with their
``simulate``) holds everything about one kind of page: its payload (``build``), its answer
model and the checks beyond it (``problems``), its effect on the session (``apply``, through
the narrow ``protocols.running.context.Answering``) and the synthetic participant's answer
(``synthetic_answer``). ``register`` adds a kind to the registry; a slot can hold several
kinds (``profile``: entry or persona), the one that ``serves`` the participant is shown.

Answers are validated strictly (``validate_answer``): wrong types (a string for a rating,
a bool for a number), out-of-range values, unknown or missing keys all raise
``AnswerError`` listing every problem; nothing is written then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, SerializeAsAny
from pydantic import ValidationError as PydanticValidationError

if TYPE_CHECKING:
    from protocols.running.context import Answering, SessionContext, SyntheticContext
    from protocols.running.state import Participant


class PageModel(BaseModel):
    """Payloads, answers and their parts: strict and immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Progress(PageModel):
    step: int
    total: int


class Page(PageModel):
    """One page as a renderer receives it (module docstring): id, kind, title, progress
    and a payload in display units.

    >>> import tempfile
    >>> from pathlib import Path
    >>> from data import Store
    >>> from protocols import Study, load_protocol
    >>> store = Store(Path(tempfile.mkdtemp()) / "study.duckdb")
    >>> study = Study(load_protocol("tominaga-replication"), store)
    >>> page = study.start(external_id="p1", session="s1").current_page()
    >>> page.kind, page.title, [q.id for q in page.payload.questions[:2]]
    ('screening', 'A few questions first', ['age', 'gender'])
    >>> page.terminal
    False
    """

    id: str
    kind: str
    title: str
    progress: Progress
    payload: SerializeAsAny[BaseModel]

    @property
    def terminal(self) -> bool:
        """Debrief and end pages take no answer."""
        return PAGE_KINDS[self.kind].answer_model is None


class AckAnswer(PageModel):
    """The answer of a page that only needs to be read: ``{}``."""


class AnswerError(ValueError):
    """An answer does not fit its page; ``problems`` lists every reason.

    >>> import tempfile
    >>> from pathlib import Path
    >>> from data import Store
    >>> from protocols import Study, load_protocol
    >>> store = Store(Path(tempfile.mkdtemp()) / "study.duckdb")
    >>> study = Study(load_protocol("tominaga-replication"), store)
    >>> from protocols import AnswerError
    >>> session = study.start(external_id="p1", session="s1")
    >>> try:
    ...     session.submit("screening", {"answers": {"age": "thirty"}})
    ... except AnswerError as e:
    ...     print(e.page_id, e.problems)
    screening ['missing question(s): gender, occupation, income, car, loans', 'age: expected a number']
    >>> session.current_page().id                             # nothing was written
    'screening'
    """

    def __init__(self, page_id: str, problems: list[str]) -> None:
        self.page_id = page_id
        self.problems = problems
        super().__init__(f"answer to page {page_id!r} rejected: " + "; ".join(problems))


class PageKind:
    """One kind of page (module docstring). Subclasses set the class attributes and override
    what their kind does; the defaults fit a page that is only read.

    >>> from protocols.running.pages import PAGE_KINDS, SLOTS
    >>> consent = PAGE_KINDS["consent"]            # one instance serves every consent page
    >>> consent.slot, consent.answer_model.__name__, consent.ends
    ('consent', 'ConsentAnswer', ('declined',))
    >>> sorted(k.kind for k in SLOTS["profile"])   # a slot may hold several kinds
    ['persona', 'profile_entry']
    """

    kind: ClassVar[str]
    slot: ClassVar[str]
    answer_model: ClassVar[type[BaseModel] | None] = AckAnswer  # None: takes no answer
    ends: ClassVar[tuple[str, ...]] = ()  # statuses its answer ends the session with

    def serves(self, ctx: SessionContext, p: Participant) -> bool:
        """Whether this kind is the one of its slot this participant sees."""
        return True

    def build(self, ctx: SessionContext, p: Participant, page_id: str) -> tuple[str, BaseModel]:
        """(title, payload) of the page ``page_id`` for ``p``."""
        raise NotImplementedError

    def problems(self, payload: Any, answer: Any) -> list[str]:
        """What is wrong with a well-typed answer given what the page showed."""
        return []

    def apply(self, w: Answering, p: Participant, page: Page, answer: Any) -> bool | None:
        """The answer's effect on ``p`` (a copy) and the rows it writes; returns whether the
        answer was correct where the page has a correct answer (None otherwise)."""
        return None

    def synthetic_answer(self, sim: SyntheticContext, p: Participant, page: Page) -> Any:
        """The synthetic participant's answer: ``{}`` for a page only read; a kind taking
        more must say what (an error otherwise, never an empty answer)."""
        if self.answer_model is AckAnswer:
            return {}
        raise NotImplementedError(f"page kind {self.kind!r} gives no synthetic answer")

    def synthetic_answers(
        self, sim: SyntheticContext, items: list[tuple[Participant, Page]]
    ) -> list[Any]:
        """Answers of several participants at once (a kind may batch its computation)."""
        return [self.synthetic_answer(sim, p, page) for p, page in items]


PAGE_KINDS: dict[str, PageKind] = {}
SLOTS: dict[str, list[PageKind]] = {}


def register(cls: type[PageKind]) -> type[PageKind]:
    """Class decorator: add a page kind to the registry (one instance serves every page).

    >>> from protocols import register
    >>> from protocols.running.pages import PAGE_KINDS
    >>> register(type(PAGE_KINDS["consent"]))     # a kind is registered once
    Traceback (most recent call last):
    ...
    ValueError: page kind 'consent' is registered twice
    """
    if cls.kind in PAGE_KINDS:
        raise ValueError(f"page kind {cls.kind!r} is registered twice")
    PAGE_KINDS[cls.kind] = cls()
    SLOTS.setdefault(cls.slot, []).append(PAGE_KINDS[cls.kind])
    return cls


def slot_of(page_id: str) -> str:
    return page_id.split("-", 1)[0]


def validate_answer(page: Page, raw: Any) -> Any:
    """The typed answer to ``page`` (a dict or an answer model); AnswerError otherwise."""
    kind = PAGE_KINDS[page.kind]
    model = kind.answer_model
    if model is None:
        raise AnswerError(page.id, [f"a {page.kind} page takes no answer"])
    if isinstance(raw, BaseModel):
        if not isinstance(raw, model):
            raise AnswerError(page.id, [f"expected a {model.__name__}, got {type(raw).__name__}"])
        raw = raw.model_dump()
    if not isinstance(raw, dict):
        raise AnswerError(page.id, [f"an answer is a mapping of fields, got {type(raw).__name__}"])
    try:
        answer = model.model_validate(raw)
    except PydanticValidationError as e:
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or 'answer'}: {err['msg']}"
            for err in e.errors()
        ]
        raise AnswerError(page.id, problems) from None
    problems = kind.problems(page.payload, answer)
    if problems:
        raise AnswerError(page.id, problems)
    return answer


def keys_problems(given: set[str], expected: list[str], what: str) -> list[str]:
    """Missing and unknown keys of an answer's mapping."""
    out = []
    missing = [k for k in expected if k not in given]
    unknown = sorted(given - set(expected))
    if missing:
        out.append(f"missing {what}: {', '.join(missing)}")
    if unknown:
        out.append(f"unknown {what}: {', '.join(unknown)}")
    return out
