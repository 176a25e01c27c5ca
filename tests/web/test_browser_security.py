"""Security of a live study in a real browser: `recourse-study serve` on a free
port, Debian Chromium via Playwright, the small web protocol (exact Bayes rule: no training).

- a recruitment id alone cannot take over a session; links without an id start nobody;
  the server refuses other Host names; exported free text is safe in CSV, exact in Parquet;
- guessing the dashboard password is slow and logged; signing out drops the export link;
  the analysis report is a download, never run inside the dashboard;
- a forced error in a page shows an error id, never a traceback.
"""

from __future__ import annotations

import csv
import http.client
import io
import re
import sys
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from browser_harness import CHROMIUM, StudyServer
from browser_participant import BrowserParticipant, button

from data.export import formula_cells
from data.store import Store
from protocols.definition.schema import load_protocol
from study_app.web import links
from study_app.web.auth import PASSWORD_ENV
from tests.cli_process import cli_json

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium "
                       "(bash scripts/install_chromium.sh)"),
]
PASSWORD = "e2e dashboard pass phrase"
X = "5f9d88e2c1b7a6a0d4e3f2b1"  # participant A's recruitment id
FORMULAS = ['=HYPERLINK("http://evil.example","click me")', "+cmd|' /C calc'!A0",
            "-2+3 is what I think", "@SUM(A1:A9) reasons"]
FAILED_SIGN_IN = "dashboard sign-in failed"


def _server(tmp_path: Path, protocol: Path, *args: str, **kw) -> StudyServer:
    srv = StudyServer(str(protocol), tmp_path / "study.duckdb", tmp_path / "serve.log",
                      env={PASSWORD_ENV: PASSWORD}, extra_args=args, **kw)
    srv.start()
    return srv


def _ws_handshake(srv: StudyServer, host: str) -> int:
    """The status of a WebSocket handshake that claims the Host ``host``."""
    con = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
    try:
        con.request("GET", "/_stcore/stream", headers={
            "Host": host, "Connection": "Upgrade", "Upgrade": "websocket",
            "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
            "Origin": f"http://{host}"})
        return con.getresponse().status
    finally:
        con.close()


@pytest.mark.e2e  # a whole walk and two export runs (make test-e2e); the refusal: test_links_resume.py,
# formula-safe exports: tests/data/test_export_safety.py
def test_a_recruitment_id_alone_cannot_take_over_a_session(small_protocol_file, browser,
                                                           tmp_path) -> None:
    # no step limit on the Loan items: both plans are shown, so every formula is typed
    path = small_protocol_file(("plans: {per_participant: 2,", "plans: {bounds: "
                                "{loan_amount: {none: true}, loan_duration: {none: true}, "
                                "income: {none: true}, savings: {none: true}}, "
                                "per_participant: 2,"))
    protocol = load_protocol(path)
    srv = _server(tmp_path, path, "--require-id")
    try:
        # A link without a participant id starts nobody (--require-id).
        nobody = browser.new_context().new_page()
        nobody.goto(f"{srv.url}/")
        nobody.get_by_text(links.NEED_ID[:50]).wait_for()
        assert nobody.locator(".rs-progress").count() == 0
        # Participant A answers the first page.
        a = BrowserParticipant(browser.new_context().new_page(), protocol,
                               reasons=list(FORMULAS))
        first = a.open(f"{srv.url}/?PROLIFIC_PID={X}&SESSION_ID=A")
        assert first == ("consent", "consent")
        where = a.answer_page(*first)
        assert where == ("screening", "screening")
        token = a.token()
        # Someone else with A's id but another recruitment session: refused, sees nothing.
        intruder = browser.new_context().new_page()
        intruder.goto(f"{srv.url}/?PROLIFIC_PID={X}&SESSION_ID=B")
        intruder.get_by_text(links.ID_REFUSED[:50]).wait_for()
        seen = intruder.inner_text("body")
        assert intruder.locator(".rs-progress").count() == 0
        assert "Are you 18" not in seen and protocol.consent not in seen
        assert "p=" not in intruder.url
        # A's own resume link still works, in a new browser too.
        again = BrowserParticipant(browser.new_context().new_page(), protocol)
        assert again.open(a.page.url) == where and again.token() == token
        # The same id with A's recruitment session, in a new browser: resumes A.
        same = BrowserParticipant(browser.new_context().new_page(), protocol)
        assert same.open(f"{srv.url}/?PROLIFIC_PID={X}&SESSION_ID=A") == where
        assert same.token() != token
        # A finishes, typing reasons a spreadsheet would run as formulas.
        assert a.run(start=where) == ("debrief", "debrief")
        # Another Host name (DNS rebinding) is refused; ours is accepted.
        assert _ws_handshake(srv, "evil.example") == 403
        assert _ws_handshake(srv, f"127.0.0.1:{srv.port}") == 101
    finally:
        srv.stop()
    with Store(srv.db, read_only=True) as store:
        assert store.counts()["participants"] == 1  # neither the bare link nor B started
        assert store.counts()["tokens"] == 2  # A's first, and the one of the same session
        assert [r["event"] for r in store.query(
            "SELECT event FROM events WHERE event = 'id_refused'")] == ["id_refused"]
        reasons = store.query("SELECT r.acceptance_why, r.action_why FROM ratings r JOIN plans "
                              "p USING (study_id, participant_id, plan_id) ORDER BY p.position")
    assert [v for r in reasons for v in (r["acceptance_why"], r["action_why"])] == FORMULAS
    # Exports: CSV cells never start a formula, Parquet keeps the exact text.
    out = tmp_path / "export"
    for fmt in ("csv", "parquet"):
        code, manifest = cli_json("export", "--db", str(srv.db), "--out", str(out / fmt),
                                  "--format", fmt, "--free-text")
        assert code == 0, manifest
        assert manifest["free_text"] is True
    assert formula_cells(out / "csv") == []
    with (out / "csv" / "ratings.csv").open(newline="", encoding="utf-8") as f:
        typed = {c for row in csv.DictReader(f) for c in (row["acceptance_why"], row["action_why"])}
    assert typed == {"'" + r for r in FORMULAS}
    exact = pq.read_table(out / "parquet" / "ratings.parquet").to_pandas()
    assert set(exact["acceptance_why"]) | set(exact["action_why"]) == set(FORMULAS)


def _wait_for_lines(log: Path, text: str, n: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while log.read_text(errors="replace").count(text) < n:
        assert time.monotonic() < deadline, f"fewer than {n} lines with {text!r}"
        time.sleep(0.02)


@pytest.mark.slow  # waits out the sign-in delays on purpose (make test-slow)
def test_dashboard_guessing_is_slow_and_logged_and_sign_out_drops_everything(
        small_protocol_file, browser, tmp_path) -> None:
    report = tmp_path / "reports" / "run-1" / "report.html"
    report.parent.mkdir(parents=True)
    report.write_text("<script>document.title = 'PWNED'</script><h1>REPORT BODY</h1>")
    srv = _server(tmp_path, small_protocol_file(), "--reports", str(tmp_path / "reports"))
    try:
        page = browser.new_page(accept_downloads=True)
        page.goto(f"{srv.url}/dashboard")
        field = page.get_by_label("Dashboard password")
        start = time.perf_counter()
        for k in range(1, 21):  # each attempt is answered (and logged) before the next
            field.fill(f"wrong guess number {k}")
            page.get_by_role("button", name="Sign in").click()
            _wait_for_lines(srv.log_path, FAILED_SIGN_IN, k)
        guessing = time.perf_counter() - start
        print(f"20 wrong dashboard passwords took {guessing:.1f} s")
        assert guessing >= 10.0
        page.get_by_text("Wrong password.").wait_for()
        assert page.get_by_text("Participants per arm").count() == 0
        field.fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_text("Participants per arm and status").wait_for(timeout=60_000)
        page.get_by_text("20 failed attempt(s) before yours").wait_for()
        # The report is offered as a file; its script never runs in the dashboard.
        page.locator(button("rs_report_download")).wait_for()
        assert page.title() != "PWNED" and "REPORT BODY" not in page.content()
        # The export zip: downloaded on click, and gone once the researcher signs out.
        with page.expect_download() as got:
            page.locator(button("rs_export_download")).click()
        download = got.value
        names = zipfile.ZipFile(io.BytesIO(Path(download.path()).read_bytes())).namelist()
        assert "ratings.parquet" in names and "tokens.parquet" not in names
        with urllib.request.urlopen(download.url, timeout=10) as r:
            assert r.status == 200  # reachable while signed in ...
        page.get_by_role("button", name="Sign out").click()
        page.get_by_label("Dashboard password").wait_for()
        with pytest.raises(urllib.error.HTTPError) as gone:
            urllib.request.urlopen(download.url, timeout=10)
        assert gone.value.code == 404  # ... and not after signing out
        assert page.get_by_text("Participants per arm").count() == 0
    finally:
        srv.stop()
    log = srv.log_path.read_text(errors="replace")
    assert log.count(FAILED_SIGN_IN) == 20
    with Store(srv.db, read_only=True) as store:
        rows = store.query("SELECT ok, delay_seconds FROM dashboard_logins ORDER BY login_id")
    assert [r["ok"] for r in rows] == [False] * 20 + [True]
    delays = [r["delay_seconds"] for r in rows]
    assert delays == pytest.approx([0.1 * k for k in range(21)])
    assert sum(delays[:20]) >= 10.0


@pytest.mark.e2e  # a server forced to fail, in Chromium (make test-e2e); the error page itself:
# test_hardening.py
def test_a_forced_error_shows_an_error_id_not_a_traceback(small_protocol_file, browser,
                                                          tmp_path) -> None:
    launcher = (sys.executable, str(Path(__file__).with_name("faulty_serve.py")))
    srv = _server(tmp_path, small_protocol_file(), launcher=launcher)
    try:
        page = browser.new_page()
        bot = BrowserParticipant(page, load_protocol(srv.protocol))
        consent = bot.open(f"{srv.url}/")
        bot.fill(*consent)
        target = page.locator(button("consent:submit"))
        target.evaluate("el => Promise.all(el.getAnimations().map(a => a.finished))")
        target.click()
        page.get_by_text("error id").wait_for()
        shown = page.inner_text("body")
        assert page.locator("[data-testid='stException']").count() == 0
        for leak in ("Traceback", "RuntimeError", "SECRET-DETAIL", "/srv/private",
                     "forced failure"):
            assert leak not in shown, leak
        error_id = re.search(r"error id ([0-9a-f]{8})", shown).group(1)
    finally:
        srv.stop()
    log = srv.log_path.read_text(errors="replace")
    assert f"[error {error_id}]" in log  # the researchers find the details by the id
    assert "Traceback" in log and "SECRET-DETAIL" in log
