"""Every renderer of the participant app, by page kind (``study_app.web.registry``).

Importing the render modules registers their renderers and load answers, then the page kinds
of ``$RECOURSE_STUDY_PAGE_KINDS`` (``study_app.extensions``); a page kind without a renderer
(or, taking more than Continue, without a load answer) stops the import with the list of
what is missing. ``RENDERERS[page.kind](page)`` draws any page. Adding a page kind: a
renderer decorated with ``@renders("<kind>")`` and its ``@load_answers("<kind>")``
(docs/adding-a-page-kind.md).
"""

from __future__ import annotations

from study_app.extensions import load_page_kinds
from study_app.web import render_close, render_elicitation, render_intro, render_plan
from study_app.web.registry import RENDERERS, Renderer, missing_views

MODULES = (render_intro, render_elicitation, render_plan, render_close)
EXTENSIONS = load_page_kinds()
if missing_views():
    raise RuntimeError("the participant app cannot show every page kind: "
                       + "; ".join(missing_views()))
__all__ = ["EXTENSIONS", "MODULES", "RENDERERS", "Renderer"]
