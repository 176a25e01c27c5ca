"""The researcher dashboard (``/dashboard``): progress of the running study (live, redrawn
every few seconds: ``study_app.web.dashboard_live``), export, withdrawal
(``study_app.web.dashboard_withdraw``), pilots and the latest analysis report, behind the
gate of ``study_app.web.auth``. What a researcher sees follows their account's role:
viewer the progress and the report, exporter also the export, admin also withdrawals,
pilots and the audit of researchers' actions (data.accounts).

It reads the served database through the server's own connection (DuckDB allows one writer
process per file, and that is the server), with the read-only summaries of
``data.dashboard_queries``. A pilot runs N synthetic participants through the same session
code (``study_app.simulator``) into the study ``<study id>-pilot`` of the same database, so
pilot data never mixes with real participants.

Nothing sensitive outlives the signed-in session: the export zip and the analysis report
are built only when the researcher clicks their download button (never kept in the
session), the report is offered as a file and never rendered inside this page (its script
would run with the dashboard's privileges), and signing out or staying idle drops both.
"""

from __future__ import annotations

import io
import tempfile
import time
import zipfile
from functools import partial
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from data import accounts, logins
from data import dashboard_queries as q
from data.export import FORMATS
from data.store import describe
from protocols.running.session import Study
from study_app.operations import Actor, Request, perform
from study_app.web import runtime
from study_app.web.auth import (
    current_account,
    idle_expired,
    require_password,
    sign_out,
    signed_in_at,
)
from study_app.web.dashboard_live import live_view
from study_app.web.dashboard_withdraw import withdraw_section
from study_app.web.errors import show_error
from study_app.web.style import apply_base_style

PILOT_SUFFIX = "-pilot"
MAX_PILOT = 2000
REPORT_NAME = "report.html"


def latest_report(*roots: Path) -> Path | None:
    """The newest ``report.html`` under any of ``roots`` (analysis writes DIR/report.html)."""
    found = [p for root in roots if root.is_dir() for p in root.rglob(REPORT_NAME)]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def report_roots(config: runtime.WebConfig) -> list[Path]:
    """Where analysis reports are looked for (``RECOURSE_STUDY_REPORTS``, else the home's
    ``reports/``; and ``reports/`` next to the database)."""
    from engine.artifacts import home

    first = Path(config.reports) if config.reports else home() / "reports"
    return [first, Path(config.db).parent / "reports"]


def export_zip(study: Study, fmt: str, *, free_text: bool = False,
               linkage: bool = False, who: Actor | None = None) -> bytes:
    """Every exported table of the database plus the codebook (data.export: free text and
    linkage columns only when asked), zipped in memory; audited with ``who`` (the
    signed-in account; study_app.operations)."""
    with tempfile.TemporaryDirectory(prefix="rs-export-") as tmp:
        perform(study.store, Request("export", {"out": tmp, "format": fmt,
                                                "free_text": free_text, "linkage": linkage}),
                "dashboard", who=who or Actor("dashboard", "admin"), study=study)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(Path(tmp).iterdir()):
                zf.write(path, arcname=path.name)
    return buf.getvalue()


def run_pilot(study: Study, more: int, progress: DeltaGenerator) -> dict:
    """Add ``more`` synthetic participants to the pilot study of ``study``."""
    from data import records
    from study_app.simulator import simulate

    pilot_id = f"{study.study_id}{PILOT_SUFFIX}"
    have = len(records.participant_index(study.store, pilot_id))
    total = have + more

    def report(done: int, n: int) -> None:
        progress.progress(min(done / max(n, 1), 1.0), text=f"{done} of {n} pilot participants")

    return simulate(study.protocol, study.store, total, study_id=pilot_id,
                    resources=study.resources, progress=report)


def _export(study: Study, who: Actor) -> None:
    st.subheader("Export")
    st.caption("Every table of the database (all studies in it, pilots included) with a "
               "codebook; secrets such as token hashes are never exported. CSV cells that a "
               "spreadsheet would run as a formula are written as text.")
    left, mid, right = st.columns([1, 2, 2])
    fmt = left.radio("Format", list(FORMATS), key="rs_export_format")
    free_text = mid.checkbox("Include free text", key="rs_export_free_text",
                             help="Participants' typed reasons, which may identify them.")
    linkage = right.checkbox("Include linkage columns", key="rs_export_linkage",
                             help="Hashes of recruitment ids and sessions, completion codes: "
                             "what links a row to a person on the recruitment platform.")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    # Built on click (a deferred download): the zip is never held in the session.
    st.download_button(f"Download export ({fmt}, zip)",
                       partial(export_zip, study, fmt, free_text=free_text, linkage=linkage,
                               who=who),
                       file_name=f"{study.study_id}-{stamp}-{fmt}.zip", mime="application/zip",
                       key="rs_export_download", on_click="ignore")


def _sign_ins(store, who: Actor) -> None:
    since = signed_in_at()
    failed = logins.failures_before(store, since) if since is not None else 0
    with st.expander(f"Sign-ins ({failed} failed attempt(s) before yours)"
                     if failed else "Sign-ins"):
        st.dataframe(logins.recent_logins(store), hide_index=True)
    if who.role == "admin":
        with st.expander("Researchers' actions (sign-ins, exports, withdrawals, backups)"):
            st.dataframe(accounts.actions(store), hide_index=True)


def _pilot(study: Study) -> None:
    st.subheader("Pilot with synthetic participants")
    st.caption(f"Synthetic participants answer the same pages (study "
               f"`{study.study_id}{PILOT_SUFFIX}` in this database).")
    with st.form("rs_pilot"):
        n = st.number_input("Synthetic participants to add", min_value=1, max_value=MAX_PILOT,
                            value=20, step=1, key="rs_pilot_n")
        go = st.form_submit_button("Run pilot")
    if go:
        bar = st.progress(0.0, text="starting ...")
        try:
            summary = run_pilot(study, int(n), bar)
        except Exception as e:  # a pilot failing must not take the dashboard down
            st.error(f"The pilot failed: {e}")
            return
        st.session_state["rs_pilot_summary"] = summary
        st.rerun()  # so every table (and the study list) includes the pilot
    summary = st.session_state.get("rs_pilot_summary")
    if summary is not None:
        st.success(f"Pilot study {summary['study_id']}: {summary['complete']} of "
                   f"{summary['participants']} complete, {summary['ratings']} ratings in "
                   f"{summary['seconds']:.1f} s.")


def _report(config: runtime.WebConfig) -> None:
    st.subheader("Latest analysis report")
    roots = report_roots(config)
    path = latest_report(*roots)
    if path is None:
        st.caption(f"No analysis report yet in {', '.join(f'`{r}`' for r in roots)}: export "
                   f"the data, then `recourse-study analyze --db FILE --out {roots[0]}/NAME`.")
        return
    modified = time.strftime("%Y-%m-%d %H:%M", time.localtime(path.stat().st_mtime))
    st.markdown(f"`{path}` (written {modified})")
    # Offered as a file, never rendered here: a report's script must not run in this page.
    st.download_button("Download the report", partial(path.read_bytes),
                       file_name="report.html", mime="text/html", key="rs_report_download",
                       on_click="ignore")


@st.fragment(run_every=60)
def _idle_watch() -> None:
    """Sign an idle session out even when nobody touches the page (runs every minute)."""
    if idle_expired():
        st.rerun(scope="app")


def render_dashboard() -> None:
    """The dashboard page (``/dashboard``)."""
    st.set_page_config(page_title="Researcher dashboard", layout="wide")
    apply_base_style()
    st.title("Researcher dashboard")
    try:
        config, study = runtime.current_study()
    except Exception:  # nothing about the configuration before the password
        show_error("the dashboard cannot load the study")
        return
    live = study.store
    if not require_password(live):
        return
    _idle_watch()
    snapshot = live.snapshot()  # the queries are DuckDB SQL: PostgreSQL is read via a copy
    try:
        studies = q.study_list(snapshot)
    finally:
        if snapshot is not live:
            snapshot.close()
    ids = list(studies["study_id"]) or [study.study_id]
    default = ids.index(study.study_id) if study.study_id in ids else 0
    left, right, out = st.columns([3, 2, 1], vertical_alignment="bottom")
    chosen = left.selectbox("Study", ids, index=default, key="rs_dash_study")
    src = right.radio("Participants", ["all", *q.SOURCES], horizontal=True, key="rs_dash_src")
    if out.button("Sign out", key="rs_sign_out"):
        sign_out()
        st.rerun()
    who = Actor(*current_account())
    st.caption(f"Serving `{study.study_id}` ({study.protocol.title}) from "
               f"`{describe(config.db)}`. Signed in as `{who.account}` ({who.role}).")
    protocol_of = dict(zip(studies["study_id"], studies["protocol_id"], strict=True))
    same = protocol_of.get(chosen, study.protocol.id) == study.protocol.id
    live_view(study, chosen, None if src == "all" else src, same)
    if who.role in ("exporter", "admin"):
        _export(study, who)
    if who.role == "admin":
        withdraw_section(study, who)
        _pilot(study)
    _report(config)
    _sign_ins(live, who)
