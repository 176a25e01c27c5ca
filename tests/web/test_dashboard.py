"""The researcher dashboard (AppTest): password gate, progress tables, pilot, export, report."""

from __future__ import annotations

import io
import os
import zipfile

import pytest
from apptest_driver import AppDriver, chosen_answer
from streamlit.testing.v1 import AppTest

from protocols.definition.schema import load_protocol
from study_app.web import runtime
from study_app.web.auth import PASSWORD_ENV
from study_app.web.dashboard import export_zip, latest_report


def _dashboard_app() -> None:
    from study_app.web.dashboard import render_dashboard

    render_dashboard()


def _texts(at: AppTest) -> str:
    return " ".join([m.value for m in at.markdown] + [e.value for e in at.error]
                    + [str(m.value) for m in at.metric])


def _signed_in(monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv(PASSWORD_ENV, "s3cret pass phrase")
    at = AppTest.from_function(_dashboard_app, default_timeout=120).run()
    at.text_input[0].input("s3cret pass phrase")
    at.button[0].click().run()
    assert not at.exception, at.exception
    return at


@pytest.fixture
def small(serve_app, small_protocol_file):
    path = small_protocol_file()
    db = serve_app(path)
    return load_protocol(path), db


@pytest.mark.parametrize(("password", "message"), [
    (None, "The researcher dashboard is locked: no password is configured."),
    ("", "Wrong password."),
    ("wrong", "Wrong password.")])
def test_dashboard_refuses_missing_or_wrong_password(small, monkeypatch, password,
                                                     message) -> None:
    if password is None:
        monkeypatch.delenv(PASSWORD_ENV, raising=False)
    else:
        monkeypatch.setenv(PASSWORD_ENV, "s3cret pass phrase")
    at = AppTest.from_function(_dashboard_app, default_timeout=60).run()
    if password is not None:
        at.text_input[0].input(password)
        at.button[0].click().run()
    assert not at.exception
    assert not at.metric and not at.dataframe
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and errors[0].startswith(message), errors
    assert (not at.text_input) == (password is None)  # no login form without a password


@pytest.fixture(params=["duckdb", "postgresql"])
def small_any(request, serve_app, small_protocol_file):
    """The small study on each backend (the dashboard reads a snapshot of PostgreSQL)."""
    path = small_protocol_file()
    db = request.getfixturevalue("postgres_url") if request.param == "postgresql" else None
    return load_protocol(path), serve_app(path, db)


def test_dashboard_shows_progress_runs_a_pilot_and_exports(small_any, monkeypatch) -> None:
    protocol, db = small_any
    web = AppDriver()  # one real (web) participant, left at the decision page
    for _ in range(4):
        page = web.page()
        web.answer(page, chosen_answer(page, protocol))
    at = _signed_in(monkeypatch)
    metrics = {m.label: str(m.value) for m in at.metric}
    assert (metrics["Visits"], metrics["Consented"], metrics["In progress"]) == ("1", "1", "1")
    drop = [df.value for df in at.dataframe if "page_id" in df.value.columns
            and "idle_minutes" in df.value.columns]
    assert drop and list(drop[0]["page_id"]) == ["decision"]
    # a pilot of 3 synthetic participants goes to its own study
    at.number_input(key="rs_pilot_n").set_value(3)
    next(b for b in at.button if b.label == "Run pilot").click().run()
    assert not at.exception, at.exception
    assert any("Pilot study" in s.value for s in at.success), [e.value for e in at.error]
    study = runtime.build_study(runtime.from_env())
    pilot = f"{study.study_id}-pilot"
    rows = study.store.query("SELECT source, status FROM participants WHERE study_id = ?",
                             [pilot])
    assert len(rows) == 3 and {r["source"] for r in rows} == {"synthetic"}
    assert {r["status"] for r in rows} == {"complete"}
    at.selectbox(key="rs_dash_study").set_value(pilot).run()
    assert str(next(m for m in at.metric if m.label == "Completed").value) == "3"
    # arm balance against the design's target and the quality flags, per arm
    arms = next(df.value for df in at.dataframe if "off_target" in df.value.columns)
    assert list(arms["arm"]) == ["oracle"] and list(arms["consented"]) == [3]
    assert list(arms["target"]) == [3] and list(arms["off_target"]) == [0]
    flags = next(df.value for df in at.dataframe if "straightliners" in df.value.columns)
    assert list(flags["participants"]) == [3]
    assert {"Arm balance", "Data-quality flags"} <= {s.value for s in at.subheader}
    assert "Consented 3 = in progress 0 + completed 3 + ended after consent 0" in _texts(at)
    assert at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")  # rating charts
    # export: a download button that builds the zip on click (nothing kept in the session)
    assert any(b.proto.label.startswith("Download export") for b in at.get("download_button"))
    assert not any(isinstance(at.session_state[k], bytes) for k in at.session_state)
    zf = zipfile.ZipFile(io.BytesIO(export_zip(study, "csv")))
    names = set(zf.namelist())
    assert {"ratings_long.csv", "codebook.csv", "manifest.json", "participants.csv"} <= names
    assert "tokens.csv" not in names and "dashboard_logins.csv" not in names
    assert "acceptance_why" not in zf.read("ratings.csv").decode().splitlines()[0]
    with_text = zipfile.ZipFile(io.BytesIO(export_zip(study, "csv", free_text=True)))
    assert "acceptance_why" in with_text.read("ratings.csv").decode().splitlines()[0]


def test_latest_report_is_offered_as_a_download_never_rendered(small, monkeypatch,
                                                               tmp_path) -> None:
    _, db = small
    assert latest_report(tmp_path / "reports") is None
    old = tmp_path / "reports" / "run-1" / "report.html"
    new = tmp_path / "reports" / "run-2" / "report.html"
    for path, text in ((old, "OLD REPORT"), (new, "<h1>NEW REPORT</h1>")):
        path.parent.mkdir(parents=True)
        path.write_text(text)
    os.utime(old, (1, 1))
    assert latest_report(tmp_path / "reports") == new
    at = _signed_in(monkeypatch)
    assert str(new) in _texts(at)
    assert not at.get("iframe")  # the report's script never runs inside the dashboard
    assert "NEW REPORT" not in " ".join(str(e.proto) for e in at.get("html"))
    assert any(b.proto.label == "Download the report" for b in at.get("download_button"))


def test_dashboard_flags_ids_used_from_another_link_and_counts_visits_apart(small,
                                                                           monkeypatch) -> None:
    from protocols.running.session import IdRefusedError

    protocol, db = small
    owner = AppDriver({"PROLIFIC_PID": "owner-id", "SESSION_ID": "session-1"})
    owner.answer(owner.page(), chosen_answer(owner.page(), protocol))  # consents
    study = owner.study
    with pytest.raises(IdRefusedError):
        study.start(external_id="owner-id", session="session-2")
    AppDriver()  # a visit that never consents
    at = _signed_in(monkeypatch)
    assert "Participant ids used from another link" in [s.value for s in at.subheader]
    flagged = next(df.value for df in at.dataframe if "refused_visits" in df.value.columns)
    assert list(flagged["participant_id"]) == [owner.session.participant_id]
    assert list(flagged["refused_visits"]) == [1] and list(flagged["sessions"]) == [2]
    metrics = {m.label: str(m.value) for m in at.metric}
    assert (metrics["Visits"], metrics["Consented"], metrics["In progress"]) == ("2", "1", "1")
    assert "Visits 2 = consented 1 + declined 0 + not yet consented 1" in _texts(at)


def test_dashboard_shows_each_arms_quota(serve_app, small_protocol_file, monkeypatch) -> None:
    """Target, completed, in progress and shortfall per arm (the numbers the next
    assignment decides by)."""
    path = small_protocol_file(("arms:", "quotas: {targets: {oracle: 2}}\narms:"))
    protocol = load_protocol(path)
    serve_app(path)
    web = AppDriver()  # one participant in progress: consented, left at the decision page
    for _ in range(4):
        page = web.page()
        web.answer(page, chosen_answer(page, protocol))
    at = _signed_in(monkeypatch)
    assert "Quotas" in {s.value for s in at.subheader}
    table = next(df.value for df in at.dataframe if "shortfall" in df.value.columns)
    assert table.to_dict(orient="records") == [
        {"arm": "oracle", "target": 2, "completed (complete)": 0, "in_progress": 1,
         "shortfall": 1}]


def test_accounts_see_what_their_role_allows_and_withdrawals_are_audited(small,
                                                                         monkeypatch) -> None:
    """With accounts: a viewer sees progress without export or withdraw; an admin
    withdraws a participant found by recruitment id after a confirmation naming the rows."""
    from data import accounts
    from data.store import Store

    protocol, db = small
    monkeypatch.delenv(PASSWORD_ENV, raising=False)  # accounts need no shared password
    walker = AppDriver({"PROLIFIC_PID": "mail-request-7", "SESSION_ID": "s7"})
    page = walker.page()
    for _ in range(3):
        walker.answer(page, chosen_answer(page, protocol))
        page = walker.page()
    pid = walker.session.participant_id
    store = walker.study.store
    accounts.add_account(store, "vic", "viewer", "vic's long pass phrase")
    accounts.add_account(store, "ada", "admin", "ada's long pass phrase")

    def sign_in(name: str, password: str) -> AppTest:
        at = AppTest.from_function(_dashboard_app, default_timeout=120).run()
        assert at.text_input, (_texts(at), at.exception)
        at.text_input[0].input(name)
        at.text_input[1].input(password)
        at.button[0].click().run()
        assert not at.exception, at.exception
        return at

    wrong = sign_in("ada", "not ada's password")
    assert "Wrong account name or password." in _texts(wrong)
    viewer = sign_in("vic", "vic's long pass phrase")
    assert any("Signed in as `vic` (viewer)" in c.value for c in viewer.caption)
    sections = ["Export", "Withdraw a participant", "Pilot with synthetic participants",
                "Latest analysis report"]
    assert [h.value for h in viewer.subheader if h.value in sections] == [
        "Latest analysis report"]
    admin = sign_in("ada", "ada's long pass phrase")
    assert [h.value for h in admin.subheader if h.value in sections] == sections
    admin.radio(key="rs_wd_by").set_value("Recruitment id")
    admin.text_input(key="rs_wd_who").input("mail-request-7")
    admin.button(key="rs_wd_find").click().run()
    text = _texts(admin)
    assert f"Withdraw participant `{pid}`" in text and "3 responses" in text
    admin.button(key="rs_wd_yes").click().run()
    (done,) = [s.value for s in admin.success if s.value.startswith("Withdrew")]
    assert done.startswith(f"Withdrew {pid} from small-web") and done.endswith("by ada.")
    with Store(db) as check:
        (row,) = check.query("SELECT participant_id, account, requested_by FROM withdrawals")
        acts = [(r["account"], r["action"], r["via"]) for r in check.query(
            "SELECT account, action, via FROM researcher_actions ORDER BY action_id")]
    assert (row["participant_id"], row["account"], row["requested_by"]) == (pid, "ada",
                                                                            "researcher")
    assert acts == [("vic", "sign_in", "dashboard"), ("ada", "sign_in", "dashboard"),
                    ("ada", "withdraw", "dashboard")]
