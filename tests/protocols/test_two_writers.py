"""Two writers answering the same page of the same participant: two ``Study`` objects in one
process (the second one's cached state is stale, so its write conflicts, is retried on
reloaded state and becomes the idempotent repeat), and two processes (DuckDB lets one
process write a file at a time: the second one waits for the file, then finds the page
answered). Either way the store holds exactly one answer: the first writer's."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from data.store import Store, WriteConflictError
from protocols.running.session import Study

REPO = Path(__file__).resolve().parents[2]


def _to_plan_1(study, answer):
    s = study.start()
    page = s.current_page()
    while page.id != "plan-1":
        page = s.submit(page.id, answer(page))
    return s, page


def _plan_1_rows(store, study_id, pid):
    resp = store.query("SELECT answer_json FROM responses WHERE study_id = ? AND "
                       "participant_id = ? AND page_id = 'plan-1'", [study_id, pid])
    ratings = store.query("SELECT acceptance, action FROM ratings WHERE study_id = ? AND "
                          "participant_id = ?", [study_id, pid])
    return [json.loads(r["answer_json"]) for r in resp], ratings


def test_two_study_objects_conflict_retry_and_keep_one_answer(tmp_path, small_protocol, answer):
    with Store(tmp_path / "s.duckdb") as store:
        first = Study(small_protocol, store)
        second = Study(small_protocol, store)
        assert first.study_id == second.study_id
        s1, page = _to_plan_1(first, answer)
        pid = s1.participant_id
        s2 = second.session(pid)
        assert s2.current_page().id == "plan-1"  # the second object caches step "plan-1"
        a1 = {**answer(page), "acceptance": 6, "action": 2}
        a2 = {**answer(page), "acceptance": 1, "action": 7}
        steps_before = int(store.table("participants")["step"].iloc[0])
        after_first = s1.submit("plan-1", a1)
        # the second object's state is stale: its write conflicts on the step guard, the
        # session reloads and finds the page answered: the same next page, nothing written
        after_second = s2.submit("plan-1", a2)
        assert after_first.id == after_second.id == "attention-c1"
        answers, ratings = _plan_1_rows(store, first.study_id, pid)
        assert len(answers) == 1 and (answers[0]["acceptance"], answers[0]["action"]) == (6, 2)
        assert [(r["acceptance"], r["action"]) for r in ratings] == [(6, 2)]
        assert int(store.table("participants")["step"].iloc[0]) == steps_before + 1
        # the second object goes on from the reloaded state
        nxt = s2.submit("attention-c1", answer(after_second))
        assert nxt.id == "plan-2" and s1.current_page().id == "attention-c1"  # s1 is stale now
        assert s1.submit("attention-c1", answer(after_second)).id == "plan-2"  # idempotent
        assert len(store.query("SELECT 1 FROM responses WHERE page_id = 'attention-c1'")) == 1


def test_a_conflict_that_persists_is_reported_not_swallowed(tmp_path, small_protocol, answer,
                                                            monkeypatch):
    """The retry is one reload and one more try, not a loop: a store that conflicts every
    time surfaces WriteConflictError (and nothing is written)."""
    with Store(tmp_path / "s.duckdb") as store:
        study = Study(small_protocol, store)
        s, page = _to_plan_1(study, answer)
        before = store.counts()
        calls = []

        def always_conflict(*args, **kwargs):
            calls.append(1)
            raise WriteConflictError("simulated conflict")

        monkeypatch.setattr(store, "transaction", always_conflict)
        with pytest.raises(WriteConflictError):
            s.submit("plan-1", answer(page))
        assert len(calls) == 2  # the first try and one retry
        monkeypatch.undo()
        assert store.counts() == before


_WRITER = textwrap.dedent("""
    import json, sys, time
    from data.store import Store, StoreError
    from protocols.definition.schema import parse_protocol
    from protocols.running.session import Study
    db, proto_path, token, answer_json, go = sys.argv[1:6]
    proto = parse_protocol(open(proto_path).read())
    while not __import__("os").path.exists(go):
        time.sleep(0.01)
    deadline = time.monotonic() + 120
    while True:  # DuckDB: one writing process per file; wait for the other one
        try:
            store = Store(db)
            break
        except StoreError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    with store:
        s = Study(proto, store).resume(token)
        page = s.current_page()
        ans = json.loads(answer_json)
        nxt = s.submit("plan-1", ans)  # an answered page: the idempotent repeat
        print(json.dumps({"next": nxt.id, "saw": page.id}))
""")


def test_two_processes_submit_the_same_page_one_answer_stored(tmp_path, small_protocol, answer):
    from tests.protocols.conftest import SMALL

    db = tmp_path / "p.duckdb"
    proto_path = tmp_path / "small.yaml"
    proto_path.write_text(SMALL)
    with Store(db) as store:
        study = Study(small_protocol, store)
        s, page = _to_plan_1(study, answer)
        token, pid, study_id = s.token, s.participant_id, study.study_id
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(db), str(proto_path), token,
                               json.dumps({**answer(page), "acceptance": acc}), str(go)],
                              cwd=REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for acc in (2, 6)]
    time.sleep(0.5)
    go.write_text("")  # both start writing at once
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        outs.append(json.loads(out.strip().splitlines()[-1]))
    assert [o["next"] for o in outs] == ["attention-c1", "attention-c1"]
    # exactly one of them found the page open; the other found it answered
    assert sorted(o["saw"] for o in outs) == ["attention-c1", "plan-1"]
    with Store(db, read_only=True) as store:
        answers, ratings = _plan_1_rows(store, study_id, pid)
    first = 2 if outs[0]["saw"] == "plan-1" else 6
    assert [a["acceptance"] for a in answers] == [first]
    assert [r["acceptance"] for r in ratings] == [first]
