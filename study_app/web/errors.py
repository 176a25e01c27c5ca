"""Errors in the browser: a short message with an error id, the details in the server log.

A participant (or researcher) never sees a traceback, an exception's type or message, a file
path or a query: ``show_error`` logs the exception under a fresh id (ERROR level, with the
traceback, logger ``study_app.web``) and shows only the message and the id, which the
person can quote to the researchers, who find the details in the server log. The Streamlit
option ``client.showErrorDetails = none`` (study_app.web.hardening) is the backstop for
anything raised outside the app's own handlers (``on_script_error``).
"""

from __future__ import annotations

import logging
import secrets

import streamlit as st

log = logging.getLogger("study_app.web")

SOMETHING_WRONG = ("Sorry, something went wrong on our side. Nothing you already answered "
                   "is lost; please reload the page in a moment. If it keeps happening, "
                   "contact the researchers and quote error id {error_id}.")


def new_error_id() -> str:
    """A short random id that ties a message on screen to its log entry."""
    return secrets.token_hex(4)


def log_error(what: str) -> str:
    """Log the exception being handled (with its traceback) under a new id; the id."""
    error_id = new_error_id()
    log.error("[error %s] %s", error_id, what, exc_info=True)
    return error_id


def show_error(what: str, message: str = SOMETHING_WRONG) -> str:
    """Log the exception being handled and show ``message`` (``{error_id}`` filled in)."""
    error_id = log_error(what)
    st.error(message.format(error_id=error_id))
    return error_id


def on_script_error(exc: BaseException) -> bool:
    """st.App's handler of an exception nothing else caught: log it, show the id; True
    suppresses Streamlit's own display."""
    error_id = new_error_id()
    log.error("[error %s] uncaught in the app script", error_id, exc_info=exc)
    st.error(SOMETHING_WRONG.format(error_id=error_id))
    return True
