"""The Streamlit app: the participant study (``participant``), the researcher dashboard
(``dashboard``), one renderer per page kind (``registry``, ``renderers``), and what a server
runs (``runtime``). The only package that imports Streamlit."""

from __future__ import annotations

from engine.exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "study_app.web.renderers": ("RENDERERS",),
    "study_app.web.registry": ("renders",),
    "study_app.web.runtime": ("WebConfig", "make_config", "preload"),
    "study_app.web.participant": ("render_participant",),
    "study_app.web.dashboard": ("render_dashboard",),
})
