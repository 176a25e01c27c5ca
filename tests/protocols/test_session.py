"""The study session: page flow, validation, idempotence, resume, determinism, privacy."""

from __future__ import annotations

import json

import numpy as np
import pytest

from data.store import Store
from protocols.running.pages import AnswerError
from protocols.running.pages.close import NOTHING_CHANGEABLE
from protocols.running.session import (
    PageMismatchError,
    SessionEndedError,
    Study,
    StudyMismatchError,
    UnknownTokenError,
)
from protocols.running.state import profiles_row


def walk(session, answer, stop_at: str | None = None) -> list[str]:
    """Answer pages until the end (or until page ``stop_at`` is current); page ids seen."""
    seen = []
    page = session.current_page()
    while not page.terminal and page.id != stop_at:
        seen.append(page.id)
        page = session.submit(page.id, answer(page))
    seen.append(page.id)
    return seen


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
        # no plan, so no attention check on plans: the last page says why no plan came
        assert page.kind == "debrief"
        assert page.payload.no_plans == NOTHING_CHANGEABLE
        assert s.status == "complete"
    assert store.counts()["plans"] == 0
    assert store.table("elicitations")["levels"].tolist() == [1.0, 1.0]


def _same_state(a, b, names) -> None:
    """Two Participant objects hold the same state (field by field; arrays by value)."""
    for f in ("study_id", "participant_id", "seq", "source", "arm", "consent_seq", "status",
              "step", "answered", "profile_source", "note", "plans_ready", "completion_code"):
        assert getattr(a, f) == getattr(b, f), f
    assert (a.x is None) == (b.x is None)
    if a.x is not None:
        assert b.x.dtype == np.float64 and b.x.tolist() == a.x.tolist()
    assert (a.stated is None) == (b.stated is None)
    if a.stated is not None:
        assert profiles_row(b.stated, names) == profiles_row(a.stated, names)
    assert [p.plan_id for p in b.plans] == [p.plan_id for p in a.plans]


def test_a_reloaded_participant_is_the_one_that_was_written(tmp_path, small_protocol,
                                                            answer) -> None:
    """Study.load (a restart, another process, an evicted cache) rebuilds every field of the
    participant from the store: one mid-way (profile, elicitation, plans), one complete (its
    completion code), one that declined (no arm, no consent number, no profile)."""
    path = tmp_path / "study.duckdb"
    with Store(path) as store:
        study = Study(small_protocol, store)
        mid, done, declined = study.start(), study.start(), study.start()
        walk(mid, answer, stop_at="plan-2")
        walk(done, answer)
        declined.submit("consent", {"agree": False})
        before = {s.participant_id: study.participant(s.participant_id)
                  for s in (mid, done, declined)}
    assert all(len(p.completion_code) == 10 for p in before.values())  # given at the start
    assert before[declined.participant_id].arm is None
    with Store(path) as store:
        fresh = Study(small_protocol, store)
        for pid, old in before.items():
            _same_state(old, fresh.participant(pid), fresh.scenario.feature_names)
        assert fresh.participant(mid.participant_id).x is not None
        assert fresh.participant(mid.participant_id).stated is not None
        assert fresh.participant(declined.participant_id).x is None


def test_forget_drops_cached_state_so_another_writer_is_seen(store, small_protocol,
                                                             answer) -> None:
    """Two Study objects on one store: the second one's cache is stale after the first one
    writes; forget() (all) and forget([pid]) (one) make it read the store again."""
    first, second = Study(small_protocol, store), Study(small_protocol, store)
    a, b = first.start(), first.start()
    assert second.current_page(a.participant_id).id == "consent"
    assert second.current_page(b.participant_id).id == "consent"
    a.submit("consent", {"agree": True})
    b.submit("consent", {"agree": True})
    assert second.current_page(a.participant_id).id == "consent"  # stale until forgotten
    second.forget([a.participant_id])
    assert second.current_page(a.participant_id).id == "screening"
    assert second.current_page(b.participant_id).id == "consent"  # only a was dropped
    second.forget()
    assert second.current_page(b.participant_id).id == "screening"


def test_a_page_is_built_once_per_state(store, small_protocol, answer) -> None:
    """current_page returns the same Page object until the participant's state changes."""
    study = Study(small_protocol, store)
    s = study.start()
    walk(s, answer, stop_at="plan-1")
    page = s.current_page()
    assert s.current_page() is page
    nxt = s.submit("plan-1", answer(page))
    assert nxt is not page and s.current_page() is nxt
    assert study.current_page(s.participant_id) is nxt


def test_submit_many_answers_each_item_and_skips_only_answered_ones(store, small_protocol,
                                                                    answer) -> None:
    """An already answered page in a batch is the idempotent repeat for that participant
    only: the items after it are still answered and written."""
    from protocols.running.session import SubmitItem

    study = Study(small_protocol, store)
    a, b, c = study.start(), study.start(), study.start()
    a.submit("consent", {"agree": True})
    pages = study.submit_many([SubmitItem(a.participant_id, "consent", {"agree": True}),
                               SubmitItem(b.participant_id, "consent", {"agree": True}),
                               SubmitItem(c.participant_id, "consent", {"agree": False})])
    assert [p.id for p in pages] == ["screening", "screening", "end"]
    assert (a.status, b.status, c.status) == ("active", "active", "declined")
    assert store.counts()["responses"] == 3
    with pytest.raises(ValueError, match="^submit_many takes at most one answer per "
                       "participant$"):
        study.submit_many([SubmitItem(b.participant_id, "screening", {}),
                           SubmitItem(b.participant_id, "screening", {})])


def test_extra_rows_are_written_with_the_answer(store, small_protocol, answer,
                                                monkeypatch) -> None:
    """A driver's own rows (extra_rows) go into the answer's transaction: written with it,
    by submit and by submit_many, and by the retry after a write conflict."""
    from data.store import WriteConflictError
    from protocols.running.session import SubmitItem

    study = Study(small_protocol, store)
    s = study.start()
    pid = s.participant_id

    def note(tag):
        return {"events": [study.event(pid, None, "imported", {"tag": tag})]}

    study.submit(pid, "consent", {"agree": True}, extra_rows=note("submit"))
    study.submit_many([SubmitItem(pid, "screening", {"answers": {"adult": "Yes"}})],
                      extra_rows=note("many"))
    real = store.transaction
    calls = []

    def conflict_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise WriteConflictError("simulated conflict")
        return real(*args, **kwargs)

    monkeypatch.setattr(store, "transaction", conflict_once)
    assert study.submit(pid, "scenario", {}, extra_rows=note("retried")).id == "profile"
    monkeypatch.undo()
    assert len(calls) == 2
    events = store.query("SELECT detail_json FROM events WHERE event = 'imported'")
    assert sorted(json.loads(e["detail_json"])["tag"] for e in events) == [
        "many", "retried", "submit"]
    assert store.query("SELECT count(*) AS n FROM responses WHERE page_id = 'scenario'") == [
        {"n": 1}]


def test_completing_records_a_complete_event(store, small_protocol, answer) -> None:
    study = Study(small_protocol, store)
    s = study.start()
    walk(s, answer)
    events = store.query("SELECT participant_id, event FROM events WHERE event = 'complete'")
    assert events == [{"participant_id": s.participant_id, "event": "complete"}]


def test_rejected_submits_name_the_page_and_unknown_participants_their_id(
        store, small_protocol, answer) -> None:
    study = Study(small_protocol, store)
    s = study.start()
    with pytest.raises(PageMismatchError) as info:
        s.submit("screening", {"answers": {"adult": "Yes"}})
    assert info.value.page_id == "screening"
    s.submit("consent", {"agree": False})
    with pytest.raises(SessionEndedError) as info:
        s.submit("screening", {"answers": {"adult": "Yes"}})
    assert info.value.page_id == "screening" and "declined" in str(info.value)
    with pytest.raises(UnknownTokenError, match="no participant 'nobody' in small"):
        study.participant("nobody")


def test_decision_model_argument_overrides_the_protocol(store, protocol_text) -> None:
    """Study(..., decision_model=...) is the model the study runs on, whatever the protocol
    names (here a trained model the protocol asks for is replaced by the exact Bayes rule)."""
    from engine.decision import BayesDecision

    proto = protocol_text(("decision_model: bayes", "decision_model: trained"))
    study = Study(proto, store, decision_model="bayes")
    assert isinstance(study.resources.classifier, BayesDecision)


def test_simulation_settings_are_stored_with_the_study(store, small_protocol) -> None:
    Study(small_protocol, store, simulation={"participants": 12, "seed": 3})
    (row,) = store.query("SELECT simulation_json FROM studies WHERE study_id = 'small'")
    assert json.loads(row["simulation_json"]) == {"participants": 12, "seed": 3}


def test_personas_follow_the_persona_stream_of_the_seed_and_consent_number(
        store, small_protocol, protocol_text) -> None:
    """The persona of consent number seq is drawn from the protocol seed's persona stream
    (protocols.running.design.STREAM_PERSONA) at key seq: different people get different personas,
    another seed other ones, and no other stream's draw is reused."""
    from protocols.running import design
    study = Study(small_protocol, store)
    pool = study.rejected_population
    assert len(pool) > 10
    personas = [study.persona(seq) for seq in range(8)]
    expect = [pool[int(design.rng_for(5, design.STREAM_PERSONA, seq).integers(len(pool)))]
              for seq in range(8)]
    assert all(np.array_equal(p, e) for p, e in zip(personas, expect, strict=True))
    assert len({tuple(p) for p in personas}) > 1
    other = Study(protocol_text(("seed: 5", "seed: 6")), store, study_id="small-6")
    assert any(not np.array_equal(study.persona(s), other.persona(s)) for s in range(8))


def test_an_attention_check_keeps_its_place_among_fewer_plans(protocol_text) -> None:
    """A check after plan 3 of 5 comes after plan 2 of 3 and after plan 1 of 1, and is left
    out without plans; the consent promises "up to five plans" when fewer may come."""
    from protocols.definition.sequence import page_sequence

    proto = protocol_text(("per_participant: 3", "per_participant: 5"),
                          ("after: plan-1", "after: plan-3"))
    plans = lambda ids: [i for i in ids if i.startswith(("plan-", "attention-"))]  # noqa: E731
    assert plans(page_sequence(proto, 5, promised=5)) == [
        "plan-1", "plan-2", "plan-3", "attention-c1", "plan-4", "plan-5"]
    assert plans(page_sequence(proto, 3, promised=5)) == [
        "plan-1", "plan-2", "attention-c1", "plan-3"]
    assert plans(page_sequence(proto, 1, promised=5)) == ["plan-1", "attention-c1"]
    assert plans(page_sequence(proto, 0, promised=5)) == []
    assert proto.promised_plans() == "up to five plans"
    ended = protocol_text(("per_participant: 3", "per_participant: 5"),
                          ("design: stratified", "design: stratified, shortfall: {then: end}"))
    assert ended.promised_plans() == "five plans"
    assert ended.model_copy(update={"consent": "Rate {plans}?"}).consent_text() == \
        "Rate five plans?"
