"""One renderer per page kind of the session (``protocols.pages.PageKind``).

A renderer draws its page and returns the answer dict once the participant submitted a
complete form (None otherwise); terminal pages (debrief, end) are drawn by the controller
(``study_app.web.participant``) because they need the server's configuration.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from protocols import pages as pg
from study_app.web.render_close import render_attention
from study_app.web.render_elicitation import (
    render_elicitation_binary,
    render_elicitation_likert,
    render_elicitation_ranking,
)
from study_app.web.render_intro import (
    render_consent,
    render_decision,
    render_persona,
    render_profile_entry,
    render_scenario,
    render_screening,
)
from study_app.web.render_plan import render_hare_accept, render_hare_choice, render_plan

Renderer = Callable[[pg.Page], dict[str, Any] | None]

RENDERERS: dict[str, Renderer] = {
    "consent": render_consent,
    "screening": render_screening,
    "scenario": render_scenario,
    "profile_entry": render_profile_entry,
    "persona": render_persona,
    "decision": render_decision,
    "elicitation_binary": render_elicitation_binary,
    "elicitation_ranking": render_elicitation_ranking,
    "elicitation_likert": render_elicitation_likert,
    "plan": render_plan,
    "hare_choice": render_hare_choice,
    "hare_accept": render_hare_accept,
    "attention": render_attention,
}
