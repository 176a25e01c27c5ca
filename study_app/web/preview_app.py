"""Streamlit script of ``recourse-study preview``: one collected page, drawn by the app's own
renderers (``study_app.web.participant.draw_page``) with the participant style, so a preview
is the page a participant sees. The pages come from the pickle file named by
``RECOURSE_STUDY_PREVIEW_PAGES`` (written by study_app.preview for this server only); the URL
parameter ``page`` picks one (0-based). Answers are drawn but never stored.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import streamlit as st

from study_app.web.participant import draw_page
from study_app.web.style import apply_participant_style

PAGES_ENV = "RECOURSE_STUDY_PREVIEW_PAGES"

st.set_page_config(page_title="Study", page_icon=None, layout="centered")
apply_participant_style()
pages = pickle.loads(Path(os.environ[PAGES_ENV]).read_bytes())  # our own temporary file
number = int(st.query_params.get("page", "0"))
draw_page(pages[min(max(number, 0), len(pages) - 1)])
