"""Page kinds added without editing the package: ``$RECOURSE_STUDY_PAGE_KINDS`` names Python
modules (comma-separated, importable on the path) that each register a ``PageKind``
(``protocols.running.pages.register``) and its renderer and load answer (``study_app.web.registry``).

``recourse-study serve`` (the participant app), ``simulate`` and the load generator import
them before anything is drawn or answered (docs/adding-a-page-kind.md).
"""

from __future__ import annotations

import importlib
import os

PAGE_KINDS_ENV = "RECOURSE_STUDY_PAGE_KINDS"


def load_page_kinds() -> list[str]:
    """Import the modules named in ``$RECOURSE_STUDY_PAGE_KINDS``; their names."""
    names = [n.strip() for n in os.environ.get(PAGE_KINDS_ENV, "").split(",") if n.strip()]
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as e:
            raise ImportError(f"{PAGE_KINDS_ENV} names the module {name!r}, which cannot be "
                              f"imported: {e}") from e
    return names
