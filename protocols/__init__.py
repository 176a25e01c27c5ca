"""Protocols, in two halves: what a study is (``protocols.definition``: the schema, its blocks
and checks, its texts; the shipped protocol files ``protocols/<id>.yaml`` and their
translations) and how it proceeds (``protocols.running``: the session state machine over the
page kinds). ``running`` imports ``definition``, never the other way round; both import
engine and data only.

    from protocols import Study, load_protocol
    study = Study(load_protocol("icarma-personalization"), data.Store("study.duckdb"))
    session = study.start()
    page = session.current_page()        # protocols.running.pages.Page
    page = session.submit(page.id, {"agree": True})

Names are imported on first use (engine.exports).
"""

from __future__ import annotations

from engine.exports import lazy_exports
from protocols import definition, running

# the two halves' public names, each imported on first use
__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "protocols.definition": tuple(definition.__all__),
    "protocols.running": tuple(running.__all__),
})
