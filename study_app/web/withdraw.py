"""The participant's way out: a "Withdraw from the study" button at the foot of every page
once there is something to withdraw (after the consent and screening pages, before the end),
a confirmation step, then their answers are deleted (``Study.withdraw``:
data.withdrawal, audited as requested by the participant) and the end page sends them back
to the recruitment platform with the withdrawn ending (protocols.definition.recruitment).

Widget keys (stable, for tests and assistive technology alike): ``rs-withdraw`` opens the
confirmation, ``rs-withdraw-yes`` withdraws, ``rs-withdraw-no`` goes back to the page.
"""

from __future__ import annotations

import streamlit as st

from data.store import StoreError
from data.withdrawal import AlreadyWithdrawnError
from protocols.definition.interface_text import english
from protocols.running import pages as pg
from protocols.running.session import ParticipantSession
from study_app.web.errors import show_error
from study_app.web.i18n import ui

_CONFIRMING = "rs_withdraw_confirming"  # the page on which the confirmation is open

CONFIRM = english("withdraw.confirm")
NOT_WITHDRAWN = english("withdraw.failed")
# Nothing to withdraw yet: the consent page stores no answer before it is given, and a
# screened-out participant's answers end with the screening.
BEFORE_ANSWERS = ("consent", "screening")


def withdraw_control(session: ParticipantSession, page: pg.Page) -> bool:
    """The button, or the confirmation once it was pressed (module docstring); nothing on
    the consent, screening, end and debrief pages. True when the participant has just
    withdrawn (the caller shows the end page, which says so, and nothing else)."""
    if page.terminal or page.kind in BEFORE_ANSWERS:
        st.session_state.pop(_CONFIRMING, None)
        return False
    st.divider()
    if st.session_state.get(_CONFIRMING) != page.id:
        if st.button(ui("withdraw"), key="rs-withdraw", type="tertiary",
                     help=ui("withdraw.help")):
            st.session_state[_CONFIRMING] = page.id
            st.rerun()
        return False
    with st.container(border=True, key="rs-withdraw-confirm"):
        st.markdown(ui("withdraw.confirm"))
        yes, no = st.columns(2)
        if yes.button(ui("withdraw.yes"), key="rs-withdraw-yes",
                      type="primary"):
            try:
                session.study.withdraw(session.participant_id, "participant")
            except AlreadyWithdrawnError:
                pass  # another tab of theirs was first: the end page says so
            except StoreError:
                show_error(f"withdrawing on page {page.id} failed", ui("withdraw.failed"))
                return False
            st.session_state.pop(_CONFIRMING, None)
            return True
        if no.button(ui("withdraw.no"), key="rs-withdraw-no"):
            st.session_state.pop(_CONFIRMING, None)
            st.rerun()
    return False
