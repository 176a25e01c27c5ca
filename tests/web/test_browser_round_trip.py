"""The recruitment platform's round trip in a real browser (`recourse-study serve`, Debian
Chromium): a screened-out participant is sent back with the screened-out code, a complete
one with the completion code, and one who withdraws mid-study (the button on the page, then
the confirmation) with the withdrawn ending; their answers are gone from the database, the
audit row is there, and the export leaves them out."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from browser_harness import CHROMIUM, StudyServer
from browser_participant import BrowserParticipant, Step, button

from data.export import export, load_export
from data.store import Store
from protocols.definition.schema import load_protocol

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium "
                       "(bash scripts/install_chromium.sh)"),
]
BACK = "http://127.0.0.1:9"  # nothing listens: only the browser's request counts
ENDINGS = f"""recruitment:
  completion: {{code: DONE1, url: "{BACK}/done?cc={{code}}&pid={{id}}"}}
  screened_out: {{code: SCREEN2, url: "{BACK}/done?cc={{code}}&pid={{id}}"}}
  no_consent: {{code: NOCONS3, url: "{BACK}/returned?cc={{code}}&pid={{id}}"}}
"""


@pytest.fixture
def server(trained_home, tmp_path, small_protocol_file) -> Iterator[StudyServer]:
    path = small_protocol_file(("attention_checks:", ENDINGS + "attention_checks:"))
    with StudyServer(str(path), tmp_path / "study.duckdb", tmp_path / "serve.log") as srv:
        yield srv


def _sent_back(page, url: str) -> None:
    page.wait_for_event("request", lambda r: r.url == url, timeout=15_000)


@pytest.mark.e2e  # three walks (make test-e2e); the same endings and withdrawal through the app
# without a browser: test_round_trip.py, test_withdraw_cli.py
def test_endings_redirect_and_a_withdrawal_deletes(server, browser, tmp_path) -> None:
    protocol = load_protocol(server.protocol)
    # screened out -> back with the screened-out code
    out = BrowserParticipant(browser.new_page(), protocol)
    assert out.open(f"{server.url}/?PROLIFIC_PID=out1&SESSION_ID=a") == ("consent", "consent")
    assert out.answer_page("consent", "consent") == ("screening", "screening")
    out._radio("screening:adult", text="No")
    out.steps.append(Step("screening", "screening", None, float("nan")))
    assert out.submit("screening") == ("end", "end")
    assert out.page.locator("[data-testid='rs-completion-code']").inner_text() == "SCREEN2"
    _sent_back(out.page, f"{BACK}/done?cc=SCREEN2&pid=out1")
    # complete -> back with the completion code
    done = BrowserParticipant(browser.new_page(), protocol)
    done.open(f"{server.url}/?PROLIFIC_PID=done1&SESSION_ID=b")
    assert done.run() == ("debrief", "debrief")
    _sent_back(done.page, f"{BACK}/done?cc=DONE1&pid=done1")
    # withdrawn mid-study: the button on the page, the confirmation, the end page
    quits = BrowserParticipant(browser.new_page(), protocol)
    where = quits.open(f"{server.url}/?PROLIFIC_PID=quit1&SESSION_ID=c")
    for _ in range(3):
        where = quits.answer_page(*where)
    token = quits.token()
    quits.page.locator(button("rs-withdraw")).click()
    quits.page.locator(button("rs-withdraw-yes")).click()
    assert quits.wait_page(where[0]) == ("end", "end")
    assert "has been deleted" in quits.page.locator("[data-testid='stMain']").inner_text()
    _sent_back(quits.page, f"{BACK}/returned?cc=NOCONS3&pid=quit1")
    server.stop()
    with Store(server.db) as store:
        from protocols.running.session import hash_token

        (gone,) = store.query("SELECT participant_id FROM tokens WHERE token_hash = ?",
                              [hash_token(token)])
        pid = gone["participant_id"]
        for table in ("responses", "profiles", "elicitations", "events", "plans"):
            assert store.query(f"SELECT count(*) AS n FROM {table} WHERE participant_id = ?",
                               [pid]) == [{"n": 0}], table
        (audit,) = store.query("SELECT * FROM withdrawals")
        assert (audit["participant_id"], audit["requested_by"], audit["page_before"]) == (
            pid, "participant", where[0])
        assert json.loads(audit["rows_json"])["responses"] == 3
        statuses = {r["status"] for r in store.query("SELECT status FROM participants")}
        assert statuses == {"screened_out", "complete", "withdrawn"}
        export(store, tmp_path / "out")
    back = load_export(tmp_path / "out")
    assert sorted(back["participants"]["status"]) == ["complete", "screened_out"]
    for table in ("responses", "events", "ratings_long", "quality_flags"):
        assert pid not in set(back[table]["participant_id"]), table
