"""The recruitment platform's round trip in the app (AppTest): each ending shows its code and
sends the participant back with it (Prolific's parameters and a generic ``?id=`` link), and a
participant withdraws from a page mid-study: confirmation, answers deleted, audit row."""

from __future__ import annotations

import json

from apptest_driver import AppDriver, chosen_answer

from protocols.definition.schema import load_protocol
from study_app.web.participant import MOVED_ON
from study_app.web.runtime import ID_PARAM_ENV

ENDINGS = """recruitment:
  completion: {code: DONE1, url: "https://platform.example/done?cc={code}&pid={id}"}
  screened_out: {code: SCREEN2, url: "https://platform.example/done?cc={code}&pid={id}"}
  no_consent: {code: NOCONS3, url: "https://platform.example/returned?pid={id}"}
"""


def _protocol(small_protocol_file):
    return small_protocol_file(("attention_checks:", ENDINGS + "attention_checks:"))


def _link(driver: AppDriver) -> str:
    (button,) = driver.at.get("link_button")
    return button.proto.url


def test_each_ending_returns_with_its_code(serve_app, small_protocol_file) -> None:
    path = _protocol(small_protocol_file)
    serve_app(path)
    protocol = load_protocol(path)
    out = AppDriver({"PROLIFIC_PID": "pp-out", "SESSION_ID": "s1", "STUDY_ID": "st"})
    out.walk(protocol, eligible=False)
    assert out.page().payload.ending == "screened_out"
    assert "SCREEN2" in out.texts() and "window.location.assign" in out.texts()
    assert _link(out) == "https://platform.example/done?cc=SCREEN2&pid=pp-out"
    declined = AppDriver({"PROLIFIC_PID": "pp-no", "SESSION_ID": "s2"})
    declined.walk(protocol, agree=False)
    assert _link(declined) == "https://platform.example/returned?pid=pp-no"
    done = AppDriver({"PROLIFIC_PID": "pp/done 1", "SESSION_ID": "s3"})
    done.walk(protocol)
    assert done.page().kind == "debrief" and done.page().payload.completion_code == "DONE1"
    assert _link(done) == "https://platform.example/done?cc=DONE1&pid=pp%2Fdone%201"
    statuses = {r["status"] for r in done.study.store.query("SELECT status FROM participants")}
    assert statuses == {"screened_out", "declined", "complete"}


def test_a_generic_id_link_and_a_server_completion_url(serve_app, small_protocol_file) -> None:
    from study_app.web.runtime import COMPLETION_URL_ENV

    path = _protocol(small_protocol_file)
    serve_app(path, **{ID_PARAM_ENV: "id",
                       COMPLETION_URL_ENV: "https://panel.example/end?status=ok&code={code}"})
    driver = AppDriver({"id": "panel-77"})
    driver.walk(load_protocol(path))
    # the server's completion URL comes first; the code is the protocol's
    assert _link(driver) == "https://panel.example/end?status=ok&code=DONE1"


def test_a_participant_withdraws_mid_study(serve_app, small_protocol_file) -> None:
    path = _protocol(small_protocol_file)
    serve_app(path)
    protocol = load_protocol(path)
    driver = AppDriver({"PROLIFIC_PID": "pp-w", "SESSION_ID": "sw"})
    page = driver.page()
    for _ in range(3):  # consent, screening, scenario
        # nothing to withdraw before the consent and screening are answered
        offered = any(b.key == "rs-withdraw" for b in driver.at.button)
        assert offered == (page.kind not in ("consent", "screening")), page.kind
        driver.answer(page, chosen_answer(page, protocol))
        page = driver.page()
    pid = driver.session.participant_id
    assert driver.at.button(key="rs-withdraw").label == "Withdraw from the study"
    driver.at.button(key="rs-withdraw").click().run()
    assert "Every answer you have given will be deleted" in driver.texts()
    driver.at.button(key="rs-withdraw-no").click().run()  # changed their mind
    assert driver.page().id == page.id and driver.session.status == "active"
    driver.at.button(key="rs-withdraw").click().run()
    driver.at.button(key="rs-withdraw-yes").click().run()
    end = driver.page()
    assert (end.kind, end.payload.reason, end.payload.ending) == ("end", "withdrawn",
                                                                  "withdrawn")
    assert "every answer you gave has been deleted" in driver.texts()
    assert MOVED_ON.split(",")[0] not in driver.texts()  # one message: they withdrew
    assert _link(driver) == "https://platform.example/returned?pid=pp-w"  # no_consent's
    store = driver.study.store
    for table in ("responses", "profiles", "elicitations", "plans", "events"):
        assert store.query(f"SELECT count(*) AS n FROM {table} WHERE participant_id = ?",
                           [pid]) == [{"n": 0}], table
    (audit,) = store.query("SELECT * FROM withdrawals")
    assert (audit["participant_id"], audit["requested_by"], audit["status_before"],
            audit["page_before"]) == (pid, "participant", "active", page.id)
    rows = json.loads(audit["rows_json"])
    assert rows["responses"] == 3 and rows["profiles"] == 1 and audit["rows_deleted"] == sum(
        rows.values())
    # the same recruitment link later: the end page, not a new start
    again = AppDriver({"PROLIFIC_PID": "pp-w", "SESSION_ID": "sw"})
    assert again.page().payload.reason == "withdrawn"
    assert store.query("SELECT count(*) AS n FROM participants") == [{"n": 1}]
