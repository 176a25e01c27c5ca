"""The participant's way out: a "Withdraw from the study" button at the foot of every page
before the end, a confirmation step, then their answers are deleted (``Study.withdraw``:
data.withdrawal, audited as requested by the participant) and the end page sends them back
to the recruitment platform with the withdrawn ending (protocols.recruitment).

Widget keys (stable, for tests and assistive technology alike): ``rs-withdraw`` opens the
confirmation, ``rs-withdraw-yes`` withdraws, ``rs-withdraw-no`` goes back to the page.
"""

from __future__ import annotations

import streamlit as st

from data.store import StoreError
from data.withdrawal import AlreadyWithdrawnError
from protocols import pages as pg
from protocols.session import ParticipantSession
from study_app.web.errors import show_error

_CONFIRMING = "rs_withdraw_confirming"  # the page on which the confirmation is open

CONFIRM = ("**Withdraw from the study?** Every answer you have given will be deleted "
           "straight away and cannot be recovered, and you cannot continue afterwards. You "
           "do not have to give a reason.")
NOT_WITHDRAWN = ("Sorry, your withdrawal could not be completed; nothing was deleted. Please "
                 "try again in a moment. (Error id {error_id}.)")


def withdraw_control(session: ParticipantSession, page: pg.Page) -> None:
    """The button, or the confirmation once it was pressed (module docstring); nothing on
    the end and debrief pages."""
    if page.terminal:
        st.session_state.pop(_CONFIRMING, None)
        return
    st.divider()
    if st.session_state.get(_CONFIRMING) != page.id:
        if st.button("Withdraw from the study", key="rs-withdraw", type="tertiary",
                     help="Stop taking part and delete every answer you have given."):
            st.session_state[_CONFIRMING] = page.id
            st.rerun()
        return
    with st.container(border=True, key="rs-withdraw-confirm"):
        st.markdown(CONFIRM)
        yes, no = st.columns(2)
        if yes.button("Yes, withdraw and delete my answers", key="rs-withdraw-yes",
                      type="primary"):
            try:
                session.study.withdraw(session.participant_id, "participant")
            except AlreadyWithdrawnError:
                pass  # another tab of theirs was first: the end page says so
            except StoreError:
                show_error(f"withdrawing on page {page.id} failed", NOT_WITHDRAWN)
                return
            st.session_state.pop(_CONFIRMING, None)
            st.rerun()
        if no.button("No, go back to the study", key="rs-withdraw-no"):
            st.session_state.pop(_CONFIRMING, None)
            st.rerun()
