"""How a study proceeds: the session state machine over the page kinds, admission, planning.

``session.Study`` drives participants through the pages of ``pages`` in the order ``flow``
gives; ``admission`` decides who enters, ``planning`` and ``design`` make the plans a
participant is shown (``shown_plan``: display-ready), ``interactive`` asks an interactive
method's questions (HARE; ``prefetch`` and ``batching`` keep them quick), ``state`` and
``registration`` keep what is stored. It reads a protocol from ``protocols.definition`` and
never the other way round.
"""

from __future__ import annotations

from engine.exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "protocols.running.pages": ("Page", "PageKind", "PAGE_KINDS", "AnswerError", "register"),
    "protocols.running.session": (
        "Study", "ParticipantSession", "SubmitItem", "StudyMismatchError", "UnknownTokenError",
        "UnknownLanguageError",
    ),
    "protocols.running.resources": ("StudyResources", "study_resources"),
    "protocols.running.shown_plan": ("ShownPlan",),
    "protocols.running.context": ("SessionContext", "SyntheticContext"),
})
