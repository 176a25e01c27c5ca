"""The participant's study: find their session from the link, draw the current page, submit
the answer through the session, move on.

Everything a participant does goes through ``protocols.running.session`` - the same API the
synthetic driver (``study_app.simulator``) uses: ``Study.start`` / ``Study.resume``,
``ParticipantSession.current_page()`` and ``submit(page_id, answer)``. The session commits
each answer with the new state in one transaction before the next page is drawn, so a
refresh, the back button, a second tab or a server restart always lands on the current page
with nothing lost; re-submitting an answered page changes nothing.

A page whose widgets rerun it on every change (the ranking) offers the answer they show as
a draft (``widgets.offer_draft``); the page hands it to ``Study.speculate``, which starts in
the background the work that answer would start (HARE's first search), for Continue to take.

Who a link lets in is decided by ``study_app.web.links`` and ``protocols.running.admission``: a
recruitment id alone never opens someone's session (it needs the recruitment session of the
first visit, or the resume token); a refused link shows a message and nothing of anyone's
study. Errors show an error id, never a traceback (study_app.web.errors).
"""

from __future__ import annotations

import logging
import math

import streamlit as st

from data.store import StoreError
from protocols.definition.interface_text import english
from protocols.running import pages as pg
from protocols.running.session import (
    IdRefusedError,
    InvalidExternalIdError,
    PageMismatchError,
    ParticipantSession,
    SessionEndedError,
    SessionTimedOutError,
    Study,
    StudyMismatchError,
    UnknownTokenError,
)
from study_app.web import i18n, links, runtime, widgets
from study_app.web.errors import show_error
from study_app.web.renderers import RENDERERS
from study_app.web.style import (
    apply_participant_style,
    notice,
    outage_notice,
    page_heading,
    progress_indicator,
)
from study_app.web.withdraw import withdraw_control

_TOKEN = "rs_token"  # the participant token this browser session holds
_SHOWN = "rs_shown_page"  # the page drawn in the previous run
_SUBMITTED = "rs_submitted_page"  # the page this browser session just answered

UNAVAILABLE = english("error.unavailable")
NOT_SAVED = english("error.not_saved")
MOVED_ON = english("moved_on")


def _query_params() -> dict[str, list[str]]:
    return {k: st.query_params.get_all(k) for k in st.query_params}


def find_session(config: runtime.WebConfig, study: Study) -> ParticipantSession | None:
    """The participant of this link (``study_app.web.links``), or None after a message that
    shows nothing of anyone's study."""
    params = _query_params()
    try:
        action = links.decide(params, st.session_state.get(_TOKEN), config.links)
        language = i18n.link_language(params, study.translators)
        session: ParticipantSession | None = None
        if action.kind == "resume":
            try:
                session = study.resume(action.token or "")
            except UnknownTokenError:
                if links.single(params, config.id_param) is None:
                    st.session_state.pop(_TOKEN, None)
                    raise links.LinkError(links.BAD_TOKEN) from None
                action = links.by_id(params, config.links, links.FOUND_BY_ID)
        if session is None:
            session = study.start(external_id=action.external_id, session=action.session,
                                  recruitment=action.extra, source="web",
                                  language=language or "en")
        elif language is not None:  # a returning link's language counts before any answer
            session.choose_language(language)
    except links.LinkError as e:
        st.error(str(e))
        return None
    except IdRefusedError:
        st.error(links.ID_REFUSED)
        return None
    except InvalidExternalIdError:
        st.error(links.BAD_ID)
        return None
    if action.note:
        notice(action.note)
    assert session.token is not None
    i18n.use(study.translators[session.language])
    i18n.declare_language(session.language)
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
    except SessionTimedOutError:
        return True  # the time limit passed: the next run shows the time-is-up page
    except (PageMismatchError, SessionEndedError):
        notice(i18n.ui("moved_on"))
        st.button(i18n.ui("show_current"), key=f"{page.id}:reload")
        return False
    except pg.AnswerError as e:
        st.error(i18n.ui("error.rejected", problems="; ".join(e.problems)))
        return False
    except Exception:
        show_error(f"submitting page {page.id} failed", i18n.ui("error.not_saved"))
        return False
    return True


def _speculate(session: ParticipantSession, page: pg.Page, draft: dict) -> None:
    """Work the draft answer would start, begun in the background (``Study.speculate``);
    never in the participant's way: a failure is logged, the page stays as drawn."""
    try:
        session.speculate(page.id, draft)
    except Exception:  # noqa: BLE001 - speculative: the real answer computes it anyway
        logging.getLogger(__name__).exception("speculating on a draft of %s failed", page.id)


def render_participant() -> None:
    """The participant page (``/``)."""
    apply_participant_style()
    try:
        config, study = runtime.current_study()
    except runtime.ConfigError as e:  # started without `serve`: a message for the researcher
        st.error(str(e))
        return
    except (StudyMismatchError, StoreError, FileNotFoundError, RuntimeError):
        show_error("the study cannot be loaded", i18n.ui("error.unavailable"))
        return
    try:
        session = find_session(config, study)
        if session is None:
            return
        page = session.current_page()
    except StoreError:
        show_error("a participant's session cannot be loaded", i18n.ui("error.unavailable"))
        return
    outage_notice()
    shown = st.session_state.get(_SHOWN)
    if shown is not None and shown != page.id and st.session_state.get(_SUBMITTED) != shown:
        notice(i18n.ui("moved_on"))
    if shown != page.id:
        _scroll_to_top(page.id)
    st.session_state[_SHOWN] = page.id
    st.session_state.pop(_SUBMITTED, None)
    if page.progress.step == 1:  # the first page: the participant may choose the language
        i18n.language_choice(session, study.translators)
    time_warning(study, session, page)
    answer = draw_page(page)
    draft = widgets.take_draft(page.id)
    if answer is None and draft is not None:
        _speculate(session, page, draft)
    if withdraw_control(session, page):
        st.session_state[_SUBMITTED] = page.id  # the end page follows a step they took
        st.rerun()
    if answer is not None and _submit(session, page, answer):
        st.session_state[_SUBMITTED] = page.id
        st.rerun()


def time_warning(study: Study, session: ParticipantSession, page: pg.Page) -> None:
    """Once the protocol's warning time has passed, how many minutes are left (rounded
    up: never fewer than there are)."""
    left = None if page.terminal else study.seconds_left(session.participant_id)
    if left is not None:
        notice(i18n.ui("time.warning", minutes=max(1, math.ceil(left / 60))))


def draw_page(page: pg.Page) -> dict | None:
    """A page as every participant sees it: progress, title and the kind's renderer (also
    what ``recourse-study preview`` photographs); the answer once given."""
    # Pages done before this one (the debrief counts as done: 100%).
    done = page.progress.step - 1 if not page.terminal or page.kind == "pause" \
        else page.progress.total
    title = i18n.t(page.title)
    progress_indicator(done, page.progress.total, title, page_id=page.id, kind=page.kind,
                       ended=page.kind == "end")
    page_heading(title, page.id)
    return RENDERERS[page.kind](page)
