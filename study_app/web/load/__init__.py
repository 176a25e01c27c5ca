"""The load generator: participants without a browser, speaking Streamlit's websocket
protocol (``streamlit_client``), answering from the screen (``participant``), driven N at a
time against real servers (``run``), then the database check (``audit``)."""

from __future__ import annotations

from engine.exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "study_app.web.load.streamlit_client": ("StreamlitSession", "Screen", "widget_state"),
    "study_app.web.load.participant": ("LoadParticipant",),
    "study_app.web.load.run": ("LoadSettings", "run_load", "latency_stats"),
    "study_app.web.load.audit": ("check",),
})
