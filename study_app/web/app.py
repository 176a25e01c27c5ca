"""Streamlit entry point: the participant study at ``/`` and the researcher dashboard at ``/dashboard``.

Started by ``recourse-study serve``, which passes the protocol and the database through the
environment (``study_app.web.runtime``). Navigation is hidden: participants never see a link
to the dashboard, researchers open ``/dashboard`` directly. An error in either page is
logged with an id and shown as a short message with that id, never as a traceback
(study_app.web.errors).
"""

from __future__ import annotations

import streamlit as st

from study_app.web.dashboard import render_dashboard
from study_app.web.errors import show_error
from study_app.web.participant import render_participant

st.set_page_config(page_title="Study", page_icon=None, layout="centered")

pages = [
    st.Page(render_participant, title="Study", url_path="study", default=True),
    st.Page(render_dashboard, title="Researcher dashboard", url_path="dashboard"),
]
page = st.navigation(pages, position="hidden")
try:
    page.run()
except Exception:  # st.rerun / st.stop are not Exceptions: they pass through
    show_error(f"the page {page.url_path or 'study'} failed")
