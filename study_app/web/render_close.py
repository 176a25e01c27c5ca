"""Renderers of attention checks and the terminal pages: debrief (with the completion code
and, if configured, the way back to the recruitment platform) and end (renderer contract in
``study_app.web.render_intro``; terminal pages never return an answer).
"""

from __future__ import annotations

import html
import json
from typing import Any

import streamlit as st

from protocols import pages as pg
from protocols.recruitment import fill
from study_app.web import widgets
from study_app.web.registry import LoadPage, load_answers, renders
from study_app.web.runtime import from_env

REDIRECT_SECONDS = 5


@renders("attention")
def render_attention(page: pg.Page) -> dict[str, Any] | None:
    p: pg.AttentionPayload = page.payload  # type: ignore[assignment]
    choice = widgets.one_question_form(
        page.id, "the question above",
        lambda: widgets.choice(p.question, list(p.options), f"{page.id}:choice"))
    if choice is None:
        return None
    return {"choice": choice}


@load_answers("attention")
def load_attention(page: LoadPage) -> tuple[dict[str, Any], dict[str, Any]]:
    """The load participant passes every attention check."""
    check = next(c for c in page.protocol.attention_checks
                 if f"attention-{c.id}" == page.page_id)
    return {"choice": check.correct}, {"choice": check.correct}


def completion_link(template: str, code: str) -> str:
    """The return URL with ``{code}`` (and ``{id}``: the recruitment id of this visit's
    link) filled in, URL-quoted (protocols.recruitment.fill)."""
    config = from_env()
    external = st.query_params.get(config.id_param)
    return fill(template, code, external)


def return_to_platform(template: str | None, code: str | None, ending: str) -> None:
    """The ending's code and, with a return URL, the way back to the recruitment platform:
    a button and an automatic redirect after ``REDIRECT_SECONDS`` (an ending without either
    says the page may be closed)."""
    if code:
        st.markdown("Your completion code:" if ending == "completion" else "Your code:")
        st.html(f'<div class="rs-code" data-testid="rs-completion-code" data-ending="{ending}">'
                f"{html.escape(code)}</div>")
    if not template:
        st.caption("You may now close this page.")
        return
    url = completion_link(template, code or "")
    st.link_button("Return to the study platform" + (" to finish" if ending == "completion"
                                                     else ""), url, type="primary")
    st.caption(f"You will be taken there automatically in {REDIRECT_SECONDS} seconds.")
    st.html(
        "<script>setTimeout(function () { window.location.assign("
        f"{_js_string(url)}); }}, {REDIRECT_SECONDS * 1000});</script>",
        unsafe_allow_javascript=True,
    )


@renders("debrief")
def render_debrief(page: pg.Page) -> None:
    """The completion code and, when the server (``serve --completion-url``, first) or the
    protocol (``recruitment.completion.url``) has a completion URL, the way back to the
    recruitment platform (``study_app.web.runtime``)."""
    p: pg.DebriefPayload = page.payload  # type: ignore[assignment]
    if p.no_plans:
        st.info(p.no_plans)
    st.markdown(p.text)
    return_to_platform(from_env().completion_url or p.url, p.completion_code, "completion")


def _js_string(text: str) -> str:
    """A JavaScript string literal that cannot close the surrounding script element."""
    return json.dumps(text).replace("</", "<\\/")


@renders("end")
def render_end(page: pg.Page) -> None:
    p: pg.EndPayload = page.payload  # type: ignore[assignment]
    st.markdown(p.text)
    url = p.url
    if p.ending == "completion":  # the study ended the session: completed, as on the debrief
        url = from_env().completion_url or url
    return_to_platform(url, p.code, p.ending)
