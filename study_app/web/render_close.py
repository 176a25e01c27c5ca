"""Renderers of attention checks and the terminal pages: debrief (with the completion code
and, if configured, the way back to the recruitment platform) and end (renderer contract in
``study_app.web.render_intro``; terminal pages never return an answer).
"""

from __future__ import annotations

import html
import json
from typing import Any
from urllib.parse import quote

import streamlit as st

from protocols import pages as pg
from study_app.web import widgets
from study_app.web.registry import renders
from study_app.web.runtime import from_env

REDIRECT_SECONDS = 5


@renders("attention")
def render_attention(page: pg.Page) -> dict[str, Any] | None:
    p: pg.AttentionPayload = page.payload  # type: ignore[assignment]
    with st.form(f"{page.id}:form"):
        choice = widgets.choice(p.question, list(p.options), f"{page.id}:choice")
        if not widgets.submit_button(page.id):
            return None
    if choice is None:
        widgets.ask_for_missing(["the question above"])
        return None
    return {"choice": choice}


def completion_link(template: str, code: str) -> str:
    """The completion URL with ``{code}`` replaced by the (URL-quoted) completion code."""
    return template.replace("{code}", quote(code, safe=""))


@renders("debrief")
def render_debrief(page: pg.Page) -> None:
    """The completion code and, when the server has a completion URL, the way back to the
    recruitment platform (``study_app.web.runtime``)."""
    completion_url = from_env().completion_url
    p: pg.DebriefPayload = page.payload  # type: ignore[assignment]
    if p.no_plans:
        st.info(p.no_plans)
    st.markdown(p.text)
    st.markdown("Your completion code:")
    st.html(f'<div class="rs-code" data-testid="rs-completion-code">'
            f"{html.escape(p.completion_code)}</div>")
    if completion_url:
        url = completion_link(completion_url, p.completion_code)
        st.link_button("Return to the study platform to finish", url, type="primary")
        st.caption(f"You will be taken there automatically in {REDIRECT_SECONDS} seconds.")
        st.html(
            "<script>setTimeout(function () { window.location.assign("
            f"{_js_string(url)}); }}, {REDIRECT_SECONDS * 1000});</script>",
            unsafe_allow_javascript=True,
        )
    else:
        st.caption("You may now close this page.")


def _js_string(text: str) -> str:
    """A JavaScript string literal that cannot close the surrounding script element."""
    return json.dumps(text).replace("</", "<\\/")


@renders("end")
def render_end(page: pg.Page) -> None:
    p: pg.EndPayload = page.payload  # type: ignore[assignment]
    st.markdown(p.text)
