"""Every renderer of the participant app, by page kind (``study_app.web.registry``).

Importing the render modules registers their renderers; ``RENDERERS[page.kind](page)`` draws
any page. Adding a page kind: a renderer decorated with ``@renders("<kind>")`` in one of the
modules imported here (or a new one, imported here).
"""

from __future__ import annotations

from study_app.web import render_close, render_elicitation, render_intro, render_plan
from study_app.web.registry import RENDERERS, Renderer

MODULES = (render_intro, render_elicitation, render_plan, render_close)
__all__ = ["MODULES", "RENDERERS", "Renderer"]
