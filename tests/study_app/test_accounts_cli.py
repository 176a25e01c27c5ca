"""Researcher accounts (`recourse-study accounts`, data.accounts, study_app.operations): scrypt
hashes, roles that allow export (exporter) and withdrawal (admin) and refuse the rest with
a clear message, every action audited with the account; without accounts the command
line acts as local:<user>; a control file beside the database is trusted only when it is
private and its server alive."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from data import accounts
from data.store import Store
from protocols.definition.schema import parse_protocol
from study_app.cli import app
from study_app.live_server import control_path, read_control
from study_app.operations import OperationError, local_account
from study_app.simulator import simulate
from tests.cli_process import cli_json

PROTOCOL = """\
id: ac
title: Accounts study
scenario: loan
seed: 2
decision_model: bayes
profile: {source: persona}
elicitation: {scheme: binary}
arms:
  - {id: oracle, method: oracle, options: {bins: 6, plausibility: false, grid_range: training}}
plans: {per_participant: 2, design: stratified, distance: l1_profile}
"""
PASSWORDS = {"alice": "alice long pass phrase", "eve": "eve's long pass phrase",
             "vic": "vic's long pass phrase"}


def _cli(*args: str, password: str | None = None) -> tuple[int, dict]:
    env = {"RECOURSE_STUDY_PASSWORD": password} if password is not None else {}
    out = CliRunner().invoke(app, [*args, "--json"], env=env)
    return out.exit_code, json.loads(out.stdout.strip().splitlines()[-1])


def test_passwords_are_scrypt_hashes() -> None:
    stored = accounts.hash_password("a long pass phrase")
    assert stored.startswith("scrypt$16384$8$1$") and "a long pass phrase" not in stored
    assert accounts.check_password("a long pass phrase", stored)
    assert not accounts.check_password("a long pass phrasE", stored)
    assert stored != accounts.hash_password("a long pass phrase")  # salted
    assert not accounts.check_password("x", "md5$whatever")


def test_roles_allow_and_refuse_with_the_account_audited(tmp_path) -> None:
    db = str(tmp_path / "study.duckdb")
    with Store(db) as store:
        simulate(parse_protocol(PROTOCOL), store, 3)
        pids = [r["participant_id"] for r in store.query(
            "SELECT participant_id FROM participants ORDER BY seq")]
    # no accounts: the command line acts as the file's owner
    code, doc = _cli("withdraw", "--db", db, "--participant", pids[0])
    assert code == 0 and (doc["account"], doc["via"]) == (local_account(), "cli")
    code, doc = _cli("withdraw", "--db", db, "--recruitment-id", "PID-1")
    assert code == 2 and "looked up by the running server or the dashboard" in doc["error"]
    code, doc = _cli("withdraw", "--db", db)
    assert code == 2 and "--participant" in doc["error"]
    for name, role in (("alice", "admin"), ("eve", "exporter"), ("vic", "viewer")):
        code, doc = _cli("accounts", "add", "--db", db, "--account", name, "--role", role,
                         password=PASSWORDS[name])
        assert code == 0 and (doc["name"], doc["role"]) == (name, role), doc
    code, doc = _cli("accounts", "add", "--db", db, "--account", "alice", "--role", "admin",
                     password=PASSWORDS["alice"])
    assert code == 2 and "exists already" in doc["error"]
    # a role outside the choices is refused by the console script before the command runs
    code, doc = cli_json("accounts", "add", "--db", db, "--account", "bob", "--role", "boss",
                         env={"RECOURSE_STUDY_PASSWORD": "bob's long pass phrase"})
    assert code == 2 and "'boss' is not one of 'viewer', 'exporter', 'admin'" in doc["error"]
    code, doc = _cli("accounts", "add", "--db", db, "--account", "bob", "--role", "admin",
                     password="short")
    assert code == 2 and "at least 12" in doc["error"]
    code, listed = _cli("accounts", "list", "--db", db)
    assert [(a["account"], a["role"]) for a in listed["accounts"]] == [
        ("alice", "admin"), ("eve", "exporter"), ("vic", "viewer")]
    assert "scrypt" not in json.dumps(listed)
    # with accounts, who acts must say so and prove it
    code, doc = _cli("withdraw", "--db", db, "--participant", pids[1])
    assert code == 2 and "--account" in doc["error"]
    code, doc = _cli("withdraw", "--db", db, "--participant", pids[1], "--account", "alice",
                     password="not alice's password")
    assert code == 2 and "wrong account name or password" in doc["error"]
    code, doc = _cli("export", "--db", db, "--out", str(tmp_path / "v"), "--account", "vic",
                     password=PASSWORDS["vic"])
    assert code == 2 and "role viewer; this needs exporter" in doc["error"]
    assert not (tmp_path / "v").exists()
    code, doc = _cli("withdraw", "--db", db, "--participant", pids[1], "--account", "eve",
                     password=PASSWORDS["eve"])
    assert code == 2 and "role exporter; this needs admin" in doc["error"]
    code, doc = _cli("export", "--db", db, "--out", str(tmp_path / "e"), "--account", "eve",
                     password=PASSWORDS["eve"])
    assert code == 0 and (doc["account"], doc["via"]) == ("eve", "cli")
    assert doc["tables"]["participants"] == 2  # the withdrawn one left out
    code, doc = _cli("withdraw", "--db", db, "--participant", pids[1], "--account", "alice",
                     password=PASSWORDS["alice"])
    assert code == 0 and doc["account"] == "alice"
    code, doc = _cli("accounts", "set-role", "--db", db, "--account", "vic", "--role",
                     "exporter")
    assert code == 0 and doc["role"] == "exporter"
    code, doc = _cli("accounts", "remove", "--db", db, "--account", "eve")
    assert code == 0
    code, doc = _cli("export", "--db", db, "--out", str(tmp_path / "e2"), "--account", "eve",
                     password=PASSWORDS["eve"])
    assert code == 2 and "wrong account name or password" in doc["error"]
    with Store(db) as store:
        audit = {r["participant_id"]: r["account"] for r in store.query(
            "SELECT participant_id, account FROM withdrawals")}
        assert audit == {pids[0]: local_account(), pids[1]: "alice"}
        acts = [(r["account"], r["action"], r["via"]) for r in store.query(
            "SELECT account, action, via FROM researcher_actions ORDER BY action_id")]
    assert acts == [(local_account(), "withdraw", "cli")] + [
        (local_account(), "accounts", "cli")] * 4 + [
        ("eve", "export", "cli"), ("alice", "withdraw", "cli")] + [
        (local_account(), "accounts", "cli")] * 2


def test_a_control_file_is_trusted_only_when_private_and_alive(tmp_path) -> None:
    db = tmp_path / "study.duckdb"
    Store(db).close()
    path = control_path(db)
    path.write_text(json.dumps({"pid": os.getpid(), "url": "http://127.0.0.1:9",
                                "token": "t", "db": str(db)}))
    os.chmod(path, 0o644)
    with pytest.raises(OperationError, match="not private to you"):
        read_control(db)
    os.chmod(path, 0o600)
    assert read_control(db) is not None and read_control(db).pid == os.getpid()
    # a server that crashed: its control file is ignored, the command opens the file itself
    path.write_text(json.dumps({"pid": 2**22 + 12345, "url": "http://127.0.0.1:9",
                                "token": "t", "db": str(db)}))
    assert read_control(db) is None
    code, doc = _cli("export", "--db", str(db), "--out", str(tmp_path / "out"))
    assert code == 0 and doc["via"] == "cli"
