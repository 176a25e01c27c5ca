"""The dashboard's withdraw control (admin accounts): a participant named by id, resume
token or recruitment id; a confirmation that names the participant and every row that will
be deleted; then the withdrawal (study_app.operations, the same function and audit as
``recourse-study withdraw``, with the signed-in account) and its audit record.

Widget keys: ``rs_wd_by`` (look up by), ``rs_wd_who`` (the id), ``rs_wd_find``,
``rs_wd_yes`` (withdraw), ``rs_wd_cancel``.
"""

from __future__ import annotations

import streamlit as st

from data.withdrawal import answer_rows
from protocols.running.session import Study
from study_app.operations import Actor, OperationError, Request, find, perform

_FOUND = "rs_wd_found"  # the participant awaiting confirmation
_DONE = "rs_wd_done"  # the audit record of the last withdrawal
BY = {"Participant id or resume token": "participant", "Recruitment id": "recruitment_id"}


def withdraw_section(study: Study, who: Actor) -> None:
    st.subheader("Withdraw a participant")
    st.caption("For a withdrawal request that reaches you (e-mail, the recruitment "
               "platform): every answer of the participant is deleted while the study keeps "
               "running; their link then shows that they withdrew. Audited with your "
               f"account ({who.account}).")
    done = st.session_state.get(_DONE)
    if done is not None:
        st.success(f"Withdrew {done['participant_id']} from {done['study_id']}: "
                   f"{done['rows_deleted']} row(s) deleted. Audit record "
                   f"{done['withdrawal_id']} at {done['requested_at']} by {done['account']}.")
    with st.form("rs_wd_form"):
        by = st.radio("Look up by", list(BY), horizontal=True, key="rs_wd_by")
        text = st.text_input("Id", key="rs_wd_who", max_chars=200)
        go = st.form_submit_button("Find the participant", key="rs_wd_find")
    if go:
        st.session_state.pop(_DONE, None)
        try:
            found = find(study.store, {BY[by]: text}, study)
        except OperationError as e:
            st.session_state.pop(_FOUND, None)
            st.error(str(e))
            return
        st.session_state[_FOUND] = found
    found = st.session_state.get(_FOUND)
    if found is None:
        return
    if found["status"] == "withdrawn":
        st.info(f"Participant {found['participant_id']} already withdrew; nothing is left to "
                "delete.")
        return
    rows = answer_rows(study.store, found["study_id"], found["participant_id"])
    listed = ", ".join(f"{n} {t}" for t, n in rows.items() if n) or "no answers yet"
    with st.container(border=True, key="rs_wd_confirm"):
        st.markdown(f"**Withdraw participant `{found['participant_id']}` of study "
                    f"`{found['study_id']}`** (status {found['status']}, on page "
                    f"{found['current_page']})? This deletes {sum(rows.values())} row(s): "
                    f"{listed}. Their participant row stays, marked withdrawn, so their link "
                    "shows that they withdrew. This cannot be undone.")
        yes, no = st.columns(2)
        if yes.button("Yes, delete their answers", key="rs_wd_yes", type="primary"):
            try:
                record = perform(study.store, Request("withdraw", {
                    "participant": found["participant_id"], "study": found["study_id"]}),
                    "dashboard", who=who, study=study)
            except OperationError as e:
                st.error(str(e))
                return
            st.session_state.pop(_FOUND, None)
            st.session_state[_DONE] = record
            st.rerun()
        if no.button("Cancel", key="rs_wd_cancel"):
            st.session_state.pop(_FOUND, None)
            st.rerun()
