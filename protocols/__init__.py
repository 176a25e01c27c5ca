"""What a study is (the protocol schema and the shipped protocol files) and how it proceeds
(the session state machine over the page kinds). Imports engine and data only.

    from protocols import Study, load_protocol
    study = Study(load_protocol("icarma-personalization"), data.Store("study.duckdb"))
    session = study.start()
    page = session.current_page()        # protocols.pages.Page
    page = session.submit(page.id, {"agree": True})

Names are imported on first use (engine.exports).
"""

from __future__ import annotations

from engine.exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "protocols.schema": (
        "Protocol", "ProtocolError", "load_protocol", "parse_protocol", "shipped_protocols",
    ),
    "protocols.specs": ("ArmSpec",),
    "protocols.simulation": ("SimulationSpec",),
    "protocols.pages": ("Page", "PageKind", "PAGE_KINDS", "AnswerError", "register"),
    "protocols.session": (
        "Study", "ParticipantSession", "SubmitItem", "StudyMismatchError", "UnknownTokenError",
        "UnknownLanguageError",
    ),
    "protocols.translation": ("Translator", "TranslationError", "translators",
                              "translations_dir"),
    "protocols.resources": ("StudyResources", "study_resources"),
    "protocols.shown_plan": ("ShownPlan",),
    "protocols.context": ("SessionContext", "SyntheticContext"),
})
