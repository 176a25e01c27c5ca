"""The study session: page flow, validation, idempotence, resume, determinism, privacy."""

from __future__ import annotations

import json

import pytest

from data.store import Store
from protocols.pages import AnswerError
from protocols.session import (
    PageMismatchError,
    SessionEndedError,
    Study,
    StudyMismatchError,
    UnknownTokenError,
)


def walk(session, answer, stop_at: str | None = None) -> list[str]:
    """Answer pages until the end (or until page ``stop_at`` is current); page ids seen."""
    seen = []
    page = session.current_page()
    while not page.terminal and page.id != stop_at:
        seen.append(page.id)
        page = session.submit(page.id, answer(page))
    seen.append(page.id)
    return seen


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "study.duckdb")
    yield s
    s.close()


def test_full_walk_writes_every_record(store, small_protocol, answer) -> None:
    study = Study(small_protocol, store)
    s = study.start()
    ids = walk(s, answer)
    assert ids[:6] == ["consent", "screening", "scenario", "profile", "decision", "elicitation"]
    assert ids[6:] == ["plan-1", "attention-c1", "plan-2", "plan-3", "debrief"]
    assert s.status == "complete"
    debrief = s.current_page()
    assert debrief.kind == "debrief" and len(debrief.payload.completion_code) == 10
    assert debrief.progress.step == debrief.progress.total == len(ids)
    c = store.counts()
    assert (c["participants"], c["plans"], c["ratings"], c["responses"]) == (1, 3, 3, 10)
    assert c["profiles"] == c["elicitations"] == 1
    long = store.ratings_long()
    assert list(long.columns[:16]) == [
        "study_id", "participant_id", "plan_id", "arm", "method", "position", "l0_actions",
        "l1_actions", "l0_profile", "l1_profile", "satisfaction", "violation", "acceptance",
        "action", "impossible", "source"]
    assert sorted(long["position"]) == [0, 1, 2]
    assert long["source"].unique().tolist() == ["web"]
    assert long["satisfaction"].between(0, 1).all()
    assert set(long["violation"]) <= {0.0, 1.0}
    plans = store.plans()
    assert plans["valid"].all()
    attention = store.table("responses").query("page_id == 'attention-c1'")
    assert attention["correct"].tolist() == [True]


def test_plan_pages_show_every_item_in_display_units(store, small_protocol, answer) -> None:
    study = Study(small_protocol, store)
    s = study.start()
    walk(s, answer, stop_at="plan-1")
    page = s.current_page()
    rows = page.payload.rows
    assert [r.feature for r in rows] == list(study.scenario.feature_names)
    actions = [r for r in rows if r.kind == "action"]
    assert actions and all(r.current != r.suggested for r in actions)
    assert [i.feature for i in page.payload.impossible] == [r.feature for r in actions]
    assert any("$" in r.current for r in rows)
    plan = study.participant(s.participant_id).plans[0]
    assert page.payload.plan_id == plan.plan_id


def test_resubmitting_an_answer_changes_nothing(store, small_protocol, answer) -> None:
    study = Study(small_protocol, store)
    s = study.start()
    walk(s, answer, stop_at="plan-2")
    before = store.counts()
    state = store.table("participants")["state_json"].tolist()
    page = s.submit("consent", {"agree": False})  # already answered: ignored
    assert page.id == "plan-2"
    first_plan = {"acceptance": 7, "action": 7, "impossible": {}}
    assert s.submit("plan-1", first_plan).id == "plan-2"
    assert store.counts() == before
    assert store.table("participants")["state_json"].tolist() == state
    assert store.table("ratings").query("plan_id.str.endswith('p1')")["acceptance"].tolist() == [4]


def test_bad_answers_are_rejected_and_nothing_is_written(store, small_protocol, answer) -> None:
    study = Study(small_protocol, store)
    s = study.start()
    walk(s, answer, stop_at="plan-1")
    page = s.current_page()
    before = store.counts()
    items = {i.feature: False for i in page.payload.impossible}
    bad = [
        ({"acceptance": "4", "action": 3, "impossible": items}, "acceptance"),
        ({"acceptance": 8, "action": 3, "impossible": items}, "less than or equal to 7"),
        ({"acceptance": 4, "action": 0, "impossible": items}, "greater than or equal to 1"),
        ({"acceptance": 4, "action": True, "impossible": items}, "valid integer"),
        ({"acceptance": 4, "action": 3, "impossible": {}}, "missing impossibility item"),
        ({"acceptance": 4, "action": 3, "impossible": {**items, "gender": True}}, "unknown"),
        ({"acceptance": 4, "action": 3, "impossible": items, "extra": 1}, "Extra inputs"),
        (["not", "a", "dict"], "mapping"),
    ]
    for raw, fragment in bad:
        with pytest.raises(AnswerError) as info:
            s.submit("plan-1", raw)
        assert fragment in str(info.value), (raw, str(info.value))
    with pytest.raises(AnswerError) as info:
        s.submit("plan-1", {"acceptance": 9, "action": "x", "impossible": items})
    assert len(info.value.problems) == 2
    with pytest.raises(PageMismatchError, match="current page is 'plan-1'"):
        s.submit("plan-2", answer(page))
    assert store.counts() == before


def test_elicitation_and_profile_validation(store, protocol_text, answer) -> None:
    proto = protocol_text(("profile: {source: persona}", "profile: {source: own}"))
    study = Study(proto, store)
    s = study.start()
    walk(s, answer, stop_at="profile")
    page = s.current_page()
    assert page.kind == "profile_entry"
    good = answer(page)["values"]
    with pytest.raises(AnswerError, match="age: 500.0 is outside"):
        s.submit("profile", {"values": {**good, "age": 500.0}})
    with pytest.raises(AnswerError, match="gender: 'other' is not one of"):
        s.submit("profile", {"values": {**good, "gender": "other"}})
    with pytest.raises(AnswerError, match="missing item"):
        s.submit("profile", {"values": {k: v for k, v in good.items() if k != "income"}})
    # a profile the decision model approves: a persona is assigned instead
    lo_loan = {**good, "loan_amount": page.payload.fields[3].min,
               "income": page.payload.fields[5].max, "savings": page.payload.fields[6].max}
    nxt = s.submit("profile", {"values": lo_loan})
    assert nxt.kind == "decision" and "would approve" in nxt.payload.note
    assert store.table("profiles")["source"].tolist() == ["persona_fallback"]
    s.submit("decision", {})
    names = [i.feature for i in s.current_page().payload.items]
    with pytest.raises(AnswerError, match="ranks must be 1..2"):
        s.submit("elicitation", {"answers": {names[0]: 1, names[1]: 3, names[2]: None,
                                             names[3]: None}})
    with pytest.raises(AnswerError, match="expected a number or null"):
        s.submit("elicitation", {"answers": {n: True for n in names}})


def test_unknown_token_and_resume_after_restart(tmp_path, small_protocol, answer) -> None:
    path = tmp_path / "study.duckdb"
    with Store(path) as store:
        study = Study(small_protocol, store)
        s = study.start()
        walk(s, answer, stop_at="plan-2")
        token = s.token
        plans = [(p.plan_id, p.array("x_cf").tolist()) for p in study.participant(s.participant_id).plans]
        with pytest.raises(UnknownTokenError, match="unknown participant token"):
            study.resume("not-a-token")
        with pytest.raises(UnknownTokenError):
            study.resume("")
    with Store(path) as store:  # a fresh process would see exactly this
        study = Study(small_protocol, store)
        s2 = study.resume(token)
        assert s2.current_page().id == "plan-2"
        again = [(p.plan_id, p.array("x_cf").tolist()) for p in study.participant(s2.participant_id).plans]
        assert again == plans
        assert store.counts()["plans"] == 3  # never regenerated
        walk(s2, answer)
        assert s2.status == "complete"
        with pytest.raises(SessionEndedError):
            s2.submit("debrief", {})


def test_same_seed_same_participant_same_study(tmp_path, small_protocol, answer) -> None:
    results = []
    for name in ("a", "b"):
        with Store(tmp_path / f"{name}.duckdb") as store:
            study = Study(small_protocol, store)
            sessions = [study.start() for _ in range(4)]
            for s in sessions:
                walk(s, answer)
            df = store.plans().sort_values(["position"], kind="stable")
            parts = store.table("participants").sort_values("seq")
            results.append((parts["arm"].tolist(),
                            [json.loads(x) for x in store.table("profiles").sort_values(
                                "participant_id")["x_json"]],
                            sorted(zip(df["arm"], df["position"], df["x_cf_json"],
                                       strict=True))))
    assert results[0][0] == results[1][0]
    assert sorted(map(str, results[0][1])) == sorted(map(str, results[1][1]))
    assert results[0][2] == results[1][2]
    arms = results[0][0]
    assert sorted(arms[:2]) == ["oracle", "pool"] and sorted(arms[2:]) == ["oracle", "pool"]


def test_external_ids_are_only_stored_hashed(tmp_path, small_protocol, answer) -> None:
    path = tmp_path / "study.duckdb"
    raw = "5f9a1b2c3d4e5f60718293a4"
    with Store(path) as store:
        study = Study(small_protocol, store)
        s = study.start(external_id=raw, session="sess-1", recruitment={"STUDY_ID": "st-9"})
        walk(s, answer, stop_at="scenario")
        again = study.start(external_id=raw, session="sess-1")
        assert again.participant_id == s.participant_id and again.token != s.token
        assert again.current_page().id == "scenario"
        assert study.resume(s.token).participant_id == s.participant_id  # never revoked
        assert study.start(external_id="someone-else").participant_id != s.participant_id
    assert raw.encode() not in path.read_bytes()
    with Store(path) as store:
        text = " ".join(str(v) for t in ("participants", "events", "responses")
                        for v in store.table(t).to_numpy().ravel())
        assert raw not in text and "sess-1" not in text and "st-9" not in text


def test_declined_and_screened_out_end_the_session(store, small_protocol) -> None:
    study = Study(small_protocol, store)
    s = study.start()
    end = s.submit("consent", {"agree": False})
    assert end.kind == "end" and end.payload.reason == "declined" and s.status == "declined"
    with pytest.raises(SessionEndedError):
        s.submit("screening", {"answers": {"adult": "Yes"}})
    s2 = study.start()
    s2.submit("consent", {"agree": True})
    end = s2.submit("screening", {"answers": {"adult": "No"}})
    assert end.payload.reason == "screened_out"
    assert store.counts()["plans"] == 0


def test_changed_protocol_is_refused(store, small_protocol, protocol_text) -> None:
    Study(small_protocol, store)
    changed = protocol_text(("seed: 5", "seed: 6"))
    with pytest.raises(StudyMismatchError, match="different protocol"):
        Study(changed, store)
    Study(changed, store, study_id="small-v2")  # another id is fine


def test_nothing_changeable_means_no_plans(store, protocol_text, answer) -> None:
    proto = protocol_text(("scheme: ranking", "scheme: binary"))
    study = Study(proto, store)
    for _ in range(2):  # one participant per arm
        s = study.start()
        walk(s, answer, stop_at="elicitation")
        names = [i.feature for i in s.current_page().payload.items]
        page = s.submit("elicitation", {"answers": {n: False for n in names}})
        assert page.id == "attention-c1"  # placed after the last plan; there is none
        assert s.submit(page.id, {"choice": "a"}).kind == "debrief"
        assert s.status == "complete"
    assert store.counts()["plans"] == 0
    assert store.table("elicitations")["levels"].tolist() == [1.0, 1.0]
