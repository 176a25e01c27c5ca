"""`recourse-study withdraw` on both backends: one participant's answers deleted in one
transaction with an exact audit record, nobody else's touched; by id or resume token; an
unknown participant, a second withdrawal and a participant in the middle of a page get clear
messages; exports and analyses leave the withdrawn out."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from data.export import export, load_export
from data.store import Store
from data.withdrawal import ANSWER_TABLES
from protocols.definition.schema import parse_protocol
from protocols.running.session import SessionEndedError, Study
from study_app.cli import app
from study_app.simulator import simulate

PROTOCOL = """\
id: wd
title: Withdrawal study
scenario: loan
seed: 3
decision_model: bayes
screening:
  - {id: adult, question: "Are you 18 or older?", options: ["Yes", "No"], eligible: ["Yes"]}
profile: {source: persona}
elicitation: {scheme: binary}
arms:
  - {id: oracle, method: oracle, options: {bins: 6, plausibility: false, grid_range: training}}
plans: {per_participant: 2, design: stratified, distance: l1_profile}
attention_checks:
  - {id: c1, after: plan-1, question: "Pick b", options: [a, b], correct: b}
"""


def _counts(store: Store) -> dict[str, dict[str, int]]:
    """table -> participant id -> rows."""
    return {t: {r["participant_id"]: int(r["n"]) for r in store.query(
        f"SELECT participant_id, count(*) AS n FROM {t} GROUP BY participant_id")}
        for t in ANSWER_TABLES}


def _withdraw(target: str, who: str) -> tuple[int, dict]:
    out = CliRunner().invoke(app, ["withdraw", "--db", target, "--participant", who, "--json"])
    return out.exit_code, json.loads(out.stdout)


def test_withdraw_deletes_one_participant_with_an_exact_audit(store_target, tmp_path) -> None:
    protocol = parse_protocol(PROTOCOL)
    with Store(store_target) as store:
        simulate(protocol, store, 4)
        before = _counts(store)
        victim, *others = [r["participant_id"] for r in
                           store.query("SELECT participant_id FROM participants ORDER BY seq")]
        study = Study(protocol, store)
        web = study.start(external_id="ext-1", session="sess-1")
        web.submit("consent", {"agree": True})
        web.submit("screening", {"answers": {"adult": "Yes"}})  # now mid-page: scenario
        code, record = _withdraw(store_target, victim)
        assert code == 0, record
        assert record["rows"] == {t: before[t].get(victim, 0) for t in ANSWER_TABLES}
        assert record["rows"]["ratings"] == 2 and record["rows"]["sim_participants"] == 1
        assert record["rows_deleted"] == sum(record["rows"].values())
        assert (record["requested_by"], record["status_before"], record["was_active"]) == (
            "researcher", "complete", False)
        after = _counts(store)
        for table in ANSWER_TABLES:
            assert victim not in after[table], table
            assert {p: n for p, n in after[table].items() if p in others} == {
                p: n for p, n in before[table].items() if p in others}, table
        # a second withdrawal: a clear message, nothing changed, the audit as it was
        code, again = _withdraw(store_target, victim)
        assert code == 1 and "already withdrew" in again["error"]
        assert again["withdrawal"]["rows"] == record["rows"]
        assert _withdraw(store_target, "nobody-at-all")[0] == 2
        assert _counts(store) == after
        # by resume token, while the participant is in the middle of a page
        code, mid = _withdraw(store_target, web.token)
        assert code == 0 and mid["status_before"] == "active" and mid["was_active"]
        assert mid["page_before"] == "scenario" and mid["rows"]["responses"] == 2
        with pytest.raises(SessionEndedError, match="withdrawn"):
            web.submit("scenario", {})  # the page they were on: refused, nothing written
        assert store.query("SELECT count(*) AS n FROM responses WHERE participant_id = ?",
                           [web.participant_id]) == [{"n": 0}]
        audit = store.query("SELECT participant_id, requested_by, rows_deleted FROM "
                            "withdrawals ORDER BY withdrawal_id")
        assert audit == [
            {"participant_id": victim, "requested_by": "researcher",
             "rows_deleted": record["rows_deleted"]},
            {"participant_id": web.participant_id, "requested_by": "researcher",
             "rows_deleted": mid["rows_deleted"]}]
        assert len(store.ratings_long()) == sum(before["ratings"].values()) - 2
        export(store, tmp_path / "out")
    back = load_export(tmp_path / "out")
    gone = {victim, web.participant_id}
    assert set(back["participants"]["participant_id"]) == set(others)
    for table in ("responses", "ratings", "events", "ratings_long", "quality_flags"):
        assert not gone & set(back[table]["participant_id"]), table
    assert "withdrawals" not in back


def test_a_duckdb_file_another_process_holds_is_refused_clearly(tmp_path) -> None:
    import subprocess
    import sys

    db = tmp_path / "held.duckdb"
    Store(db).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
         "print('ready', flush=True); time.sleep(60)", str(db)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        code, doc = _withdraw(str(db), "anyone")
        assert code == 2 and "stop that process" in doc["error"] and "serve" in doc["error"]
    finally:
        holder.kill()
        holder.wait()
