"""A served DuckDB study taken care of without stopping it (`recourse-study serve`, Debian
Chromium): researcher accounts with roles; one participant withdrawn through the CLI (the
request goes through the server that owns the file) and one from the dashboard, both
audited with the account; a wrong role and a wrong password refused; an export taken while
serving equals the export of the stopped study; a backup taken while serving, a withdrawal
after it, and a restore that keeps that participant withdrawn, with checksums reported; a
damaged backup refused with the database untouched."""

from __future__ import annotations

import json
import shutil
import stat
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from browser_harness import CHROMIUM, StudyServer
from browser_participant import button

from data.backup import file_sha256
from data.export import load_export
from data.store import Store
from protocols.definition.schema import load_protocol
from study_app.live_server import control_path
from study_app.simulator import simulate
from tests.cli_process import cli_json

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium "
                       "(bash scripts/install_chromium.sh)"),
]
ADMIN_PASSWORD = "alice long pass phrase"
VIEWER_PASSWORD = "victor long pass phrase"


def _cli(*args: str, password: str | None = None) -> tuple[int, dict]:
    return cli_json(*args, env={"RECOURSE_STUDY_PASSWORD": password})


def _frames_equal(a: Path, b: Path) -> None:
    left, right = load_export(a), load_export(b)
    assert set(left) == set(right)
    for table in left:
        x = left[table].sort_values(list(left[table].columns)).reset_index(drop=True)
        y = right[table].sort_values(list(right[table].columns)).reset_index(drop=True)
        assert x.equals(y), table


@pytest.mark.e2e
def test_withdraw_export_backup_while_serving(trained_home, small_protocol_file, browser,
                                              tmp_path) -> None:
    path = small_protocol_file()
    db = tmp_path / "study.duckdb"
    with Store(db) as store:
        simulate(load_protocol(path), store, 5, study_id="small-web")
        pids = [r["participant_id"] for r in store.query(
            "SELECT participant_id FROM participants ORDER BY seq")]
    by_cli, by_dashboard, after_backup = pids[0], pids[1], pids[2]
    assert _cli("accounts", "add", "--db", str(db), "--account", "alice", "--role", "admin",
                password=ADMIN_PASSWORD)[0] == 0
    assert _cli("accounts", "add", "--db", str(db), "--account", "victor", "--role",
                "viewer", password=VIEWER_PASSWORD)[0] == 0
    srv = StudyServer(str(path), db, tmp_path / "serve.log")
    srv.start()
    try:
        info = control_path(db).stat()
        assert stat.S_IMODE(info.st_mode) == 0o600
        # the control endpoint answers nobody without the control file's token
        forged = urllib.request.Request(
            f"{srv.url}/_rs/control/export", method="POST", data=json.dumps(
                {"op": "export", "args": {"out": str(tmp_path / "forged")}}).encode(),
            headers={"Authorization": "Bearer " + "0" * 64})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(forged, timeout=30)
        assert refused.value.code == 403 and not (tmp_path / "forged").exists()
        # the CLI while the server runs: through the server, audited with the account
        code, doc = _cli("withdraw", "--db", str(db), "--participant", by_cli, "--account",
                         "alice", password=ADMIN_PASSWORD)
        assert code == 0, doc
        assert (doc["via"], doc["account"], doc["participant_id"]) == ("server", "alice",
                                                                      by_cli)
        assert doc["rows_deleted"] > 0
        # a wrong role, a wrong password: clear errors, nothing deleted
        code, doc = _cli("withdraw", "--db", str(db), "--participant", by_dashboard,
                         "--account", "victor", password=VIEWER_PASSWORD)
        assert code == 2 and "role viewer; this needs admin" in doc["error"]
        code, doc = _cli("export", "--db", str(db), "--out", str(tmp_path / "x"),
                         "--account", "alice", password="not the password at all")
        assert code == 2 and "wrong account name or password" in doc["error"]
        # the dashboard: sign in as alice, find the participant, confirm, the audit record
        page = browser.new_page()
        page.goto(f"{srv.url}/dashboard")
        page.get_by_label("Account", exact=True).fill("alice")
        page.get_by_label("Password", exact=True).fill(ADMIN_PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_text("Withdraw a participant").wait_for(timeout=60_000)
        page.get_by_label("Id", exact=True).fill(by_dashboard)
        page.get_by_role("button", name="Find the participant").click()
        confirm = page.locator(".st-key-rs_wd_confirm")
        confirm.wait_for()
        text = confirm.inner_text()
        assert by_dashboard in text and "ratings" in text and "responses" in text
        page.locator(button("rs_wd_yes")).click()
        page.get_by_text(f"Withdrew {by_dashboard}").wait_for()
        assert "by alice" in page.locator("[data-testid='stMain']").inner_text()
        page.close()
        # a backup while serving, then one more withdrawal after it
        code, saved = _cli("backup", "--db", str(db), "--out", str(tmp_path / "b.duckdb"),
                           "--account", "alice", password=ADMIN_PASSWORD)
        assert code == 0 and saved["via"] == "server", saved
        assert saved["sha256"] == file_sha256(tmp_path / "b.duckdb")
        assert saved["tables"]["participants"]["rows"] == 5
        code, doc = _cli("withdraw", "--db", str(db), "--participant", after_backup,
                         "--account", "alice", password=ADMIN_PASSWORD)
        assert code == 0, doc
        code, doc = _cli("withdraw", "--db", str(db), "--recruitment-id", "nobody-77",
                         "--account", "alice", password=ADMIN_PASSWORD)
        assert code == 2 and "no participant with recruitment id 'nobody-77'" in doc["error"]
        code, live = _cli("export", "--db", str(db), "--out", str(tmp_path / "live"),
                          "--format", "csv", "--account", "alice", password=ADMIN_PASSWORD)
        assert code == 0 and live["via"] == "server", live
        # a restore while the server runs is refused: it would replace the served file
        code, doc = _cli("restore", "--backup", str(tmp_path / "b.duckdb"), "--db", str(db))
        assert code == 1 and "stop it first" in doc["error"]
    finally:
        srv.stop()
    assert not control_path(db).exists()
    code, stopped = _cli("export", "--db", str(db), "--out", str(tmp_path / "stopped"),
                         "--format", "csv", "--account", "alice", password=ADMIN_PASSWORD)
    assert code == 0 and stopped["via"] == "cli"
    assert stopped["tables"] == live["tables"]
    _frames_equal(tmp_path / "live", tmp_path / "stopped")
    assert set(load_export(tmp_path / "stopped")["participants"]["participant_id"]) == set(
        pids[3:])
    with Store(db) as store:
        audit = {r["participant_id"]: r["account"] for r in store.query(
            "SELECT participant_id, account FROM withdrawals")}
        assert audit == {by_cli: "alice", by_dashboard: "alice", after_backup: "alice"}
        acts = [(r["account"], r["action"], r["via"]) for r in store.query(
            "SELECT account, action, via FROM researcher_actions ORDER BY action_id")]
    assert ("alice", "withdraw", "server") in acts and ("alice", "withdraw", "dashboard") in acts
    assert ("alice", "sign_in", "dashboard") in acts and ("alice", "backup", "server") in acts
    assert ("alice", "export", "server") in acts and ("alice", "export", "cli") in acts
    # a damaged backup: refused, the database untouched
    damaged = tmp_path / "damaged.duckdb"
    shutil.copyfile(tmp_path / "b.duckdb", damaged)
    shutil.copyfile(tmp_path / "b.duckdb.sha256", tmp_path / "damaged.duckdb.sha256")
    with damaged.open("r+b") as f:
        f.seek(damaged.stat().st_size // 2)
        f.write(b"\xff" * 64)
    before = file_sha256(db)
    code, doc = _cli("restore", "--backup", str(damaged), "--db", str(db))
    assert code == 2 and "damaged" in doc["error"]
    assert file_sha256(db) == before
    # the backup restored: the participant who withdrew after it stays withdrawn
    code, back = _cli("restore", "--backup", str(tmp_path / "b.duckdb"), "--db", str(db))
    assert code == 0, back
    assert back["sha256_checked"] and back["tables"] == saved["tables"]
    assert all(len(v["checksum"]) == 32 for v in back["tables"].values())
    assert [r["participant_id"] for r in back["reapplied"]] == [after_backup]
    with Store(db) as store:
        status = {r["participant_id"]: r["status"] for r in store.query(
            "SELECT participant_id, status FROM participants")}
        assert {p for p, s in status.items() if s == "withdrawn"} == set(pids[:3])
        assert store.query("SELECT count(*) AS n FROM ratings WHERE participant_id = ?",
                           [after_backup]) == [{"n": 0}]
        # what researchers did after the backup stays on record
        kept = [(r["account"], r["action"], r["via"]) for r in store.query(
            "SELECT account, action, via FROM researcher_actions ORDER BY action_id")]
    assert kept[:len(acts)] == acts and kept[-1][1] == "restore"
