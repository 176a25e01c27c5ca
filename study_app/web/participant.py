"""The participant's study: find their session from the link, draw the current page, submit
the answer through the session, move on.

Everything a participant does goes through ``protocols.session`` - the same API the
synthetic driver (``study_app.simulator``) uses: ``Study.start`` / ``Study.resume``,
``ParticipantSession.current_page()`` and ``submit(page_id, answer)``. The session commits
each answer with the new state in one transaction before the next page is drawn, so a
refresh, the back button, a second tab or a server restart always lands on the current page
with nothing lost; re-submitting an answered page changes nothing.
"""

from __future__ import annotations

import logging

import streamlit as st

from data.store import StoreError
from protocols import pages as pg
from protocols.session import (
    PageMismatchError,
    ParticipantSession,
    SessionEndedError,
    Study,
    StudyMismatchError,
    UnknownTokenError,
)
from study_app.web import links, runtime
from study_app.web.renderers import RENDERERS
from study_app.web.style import apply_participant_style, notice, progress_indicator

log = logging.getLogger(__name__)

_TOKEN = "rs_token"  # the participant token this browser session holds
_SHOWN = "rs_shown_page"  # the page drawn in the previous run
_SUBMITTED = "rs_submitted_page"  # the page this browser session just answered

UNAVAILABLE = ("Sorry, the study is not available right now. Nothing you answered is lost; "
               "please try again in a few minutes with the same link.")
MOVED_ON = ("That page was already answered, perhaps in another tab or window. Your earlier "
            "answer is kept; here is where you are now.")


def _query_params() -> dict[str, list[str]]:
    return {k: st.query_params.get_all(k) for k in st.query_params}


def _record_recruitment(study: Study, session: ParticipantSession, extra: dict[str, str]) -> None:
    """The link's further platform parameters (e.g. STUDY_ID, SESSION_ID), hashed only."""
    if not extra:
        return
    detail = {name: study.hash_external(value) for name, value in sorted(extra.items())}
    with study.store.transaction() as tx:
        tx.insert("events", [study.event(session.participant_id, None, "recruitment", detail)])


def _start(study: Study, action: links.LinkAction) -> ParticipantSession:
    session = study.start(external_id=action.external_id, source="web")
    _record_recruitment(study, session, action.extra)
    return session


def find_session(config: runtime.WebConfig, study: Study) -> ParticipantSession | None:
    """The participant of this link (``study_app.web.links``), or None after an error
    message."""
    params = _query_params()
    try:
        action = links.decide(params, st.session_state.get(_TOKEN), id_param=config.id_param,
                              hash_params=config.hash_params)
    except links.LinkError as e:
        st.error(str(e))
        return None
    session: ParticipantSession | None = None
    if action.kind == "resume":
        try:
            session = study.resume(action.token or "")
        except UnknownTokenError:
            external = links.single(params, config.id_param)
            if external is None:
                st.session_state.pop(_TOKEN, None)
                st.error(links.BAD_TOKEN)
                return None
            extra = {n: v for n in config.hash_params
                     if (v := links.single(params, n)) is not None}
            action = links.LinkAction("start", external_id=external, extra=extra,
                                      note=links.FOUND_BY_ID)
    if session is None:
        session = _start(study, action)
    if action.note:
        notice(action.note)
    assert session.token is not None
    st.session_state[_TOKEN] = session.token
    if st.query_params.get(links.TOKEN_PARAM) != session.token:
        st.query_params[links.TOKEN_PARAM] = session.token
    return session


def _scroll_to_top(page_id: str) -> None:
    # The page id makes the element new on every page, so the script runs once per page.
    st.html(
        "<script>/* " + page_id + " */ (function () { window.scrollTo(0, 0); "
        "var m = document.querySelector('[data-testid=\"stMain\"]'); "
        "if (m) { m.scrollTo(0, 0); } })();</script>",
        unsafe_allow_javascript=True,
    )


def _submit(session: ParticipantSession, page: pg.Page, answer: dict) -> bool:
    """Submit; True when the session moved on, False after an explanatory message."""
    try:
        session.submit(page.id, answer)
    except (PageMismatchError, SessionEndedError):
        notice(MOVED_ON)
        st.button("Show my current page", key=f"{page.id}:reload")
        return False
    except pg.AnswerError as e:
        st.error("Your answer could not be saved: " + "; ".join(e.problems))
        return False
    except Exception:
        log.exception("submitting page %s failed", page.id)
        st.error("Sorry, something went wrong while saving your answer; nothing was stored. "
                 "Please try again in a moment.")
        return False
    return True


def render_participant() -> None:
    """The participant page (``/``)."""
    apply_participant_style()
    try:
        config, study = runtime.current_study()
    except runtime.ConfigError as e:  # started without `serve`: a message for the researcher
        st.error(str(e))
        return
    except (StudyMismatchError, StoreError, FileNotFoundError, RuntimeError):
        log.exception("the study cannot be loaded")
        st.error(UNAVAILABLE)
        return
    try:
        session = find_session(config, study)
        if session is None:
            return
        page = session.current_page()
    except StoreError:
        log.exception("a participant's session cannot be loaded")
        st.error(UNAVAILABLE)
        return
    shown = st.session_state.get(_SHOWN)
    if shown is not None and shown != page.id and st.session_state.get(_SUBMITTED) != shown:
        notice(MOVED_ON)
    if shown != page.id:
        _scroll_to_top(page.id)
    st.session_state[_SHOWN] = page.id
    st.session_state.pop(_SUBMITTED, None)
    # Pages done before this one (the debrief counts as done: 100%).
    done = page.progress.step - 1 if not page.terminal else page.progress.total
    progress_indicator(done, page.progress.total, page.title, page_id=page.id, kind=page.kind)
    st.subheader(page.title)
    answer = RENDERERS[page.kind](page)
    if answer is not None and _submit(session, page, answer):
        st.session_state[_SUBMITTED] = page.id
        st.rerun()
