"""Renderers of attention checks and the terminal pages: debrief (with the completion code
and, if configured, the way back to the recruitment platform) and end (renderer contract in
``study_app.web.render_intro``; terminal pages never return an answer).
"""

from __future__ import annotations

import html
import json
from datetime import datetime
from typing import Any

import streamlit as st

from protocols.definition.interface_text import english
from protocols.definition.recruitment import fill
from protocols.running import pages as pg
from study_app.web import widgets
from study_app.web.i18n import current, t, ui
from study_app.web.links import TOKEN_PARAM
from study_app.web.registry import LoadPage, load_answers, renders
from study_app.web.runtime import served_config

REDIRECT_SECONDS = 5
RETURN_LINK = english("pause.link")


@renders("attention")
def render_attention(page: pg.Page) -> dict[str, Any] | None:
    p: pg.AttentionPayload = page.payload  # type: ignore[assignment]
    choice = widgets.one_question_form(
        page.id, ui("missing.attention"),
        lambda: widgets.choice(t(p.question), list(p.options), f"{page.id}:choice"))
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
    link) filled in, URL-quoted (protocols.definition.recruitment.fill)."""
    config = served_config()
    external = st.query_params.get(config.id_param) if config else None
    return fill(template, code, external)


def return_to_platform(template: str | None, code: str | None, ending: str) -> None:
    """The ending's code and, with a return URL, the way back to the recruitment platform:
    a button and an automatic redirect after ``REDIRECT_SECONDS`` (an ending without either
    says the page may be closed)."""
    if code:
        st.markdown(ui("completion_code") if ending == "completion" else ui("your_code"))
        st.html(f'<div class="rs-code" data-testid="rs-completion-code" data-ending="{ending}">'
                f"{html.escape(code)}</div>")
    if not template:
        st.caption(ui("close_page"))
        return
    url = completion_link(template, code or "")
    st.link_button(ui("return_finish" if ending == "completion" else "return"), url,
                   type="primary")
    st.caption(ui("redirect", seconds=REDIRECT_SECONDS))
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
        st.info(t(p.no_plans))
    st.markdown(t(p.text))
    return_to_platform(_served_completion_url() or p.url, p.completion_code, "completion")


def _served_completion_url() -> str | None:
    """``serve --completion-url``, which comes before the protocol's."""
    config = served_config()
    return config.completion_url if config else None


def _js_string(text: str) -> str:
    """A JavaScript string literal that cannot close the surrounding script element."""
    return json.dumps(text).replace("</", "<\\/")


@renders("pause")
def render_pause(page: pg.Page) -> None:
    """Between two sessions: when the next part opens, and the participant's own link
    (this page's address with their resume token), by which they come back."""
    p: pg.PausePayload = page.payload  # type: ignore[assignment]
    st.html(f'<div data-testid="rs-pause" data-opens-at="{html.escape(p.opens_at)}"></div>')
    tr = current()
    if tr.english or not p.template:
        st.markdown(p.text)
    else:  # the time it opens, for the participant's language
        opens = datetime.fromisoformat(p.opens_at.replace("Z", "+00:00"))
        st.markdown(tr.text(p.template).replace("{when}", tr.moment(opens)))
    token = st.query_params.get(TOKEN_PARAM)
    if token:
        st.markdown(ui("pause.link"))
        st.code(f"{st.context.url.split('?')[0]}?{TOKEN_PARAM}={token}", language=None)


@renders("end")
def render_end(page: pg.Page) -> None:
    p: pg.EndPayload = page.payload  # type: ignore[assignment]
    st.markdown(t(p.text))
    url = p.url
    if p.ending == "completion":  # the study ended the session: completed, as on the debrief
        url = _served_completion_url() or url
    return_to_platform(url, p.code, p.ending)
