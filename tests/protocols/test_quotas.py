"""Quotas among completers and session time limits (protocols.definition.quotas,
protocols.running.quotas, protocols.running.limits): the arm of the largest shortfall,
"study full", timing out, the warning, and the checks of a protocol's blocks."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from test_session import walk

from data.arm_tally import arm_tally
from data.store import Store
from protocols.definition.schema import ProtocolError
from protocols.running import design
from protocols.running.limits import SessionTimedOutError
from protocols.running.session import SessionEndedError, Study

QUOTAS = """\
quotas: {targets: {pool: 1, oracle: 1}}
time_limit: {seconds: 600, warning_seconds: 480}
recruitment:
  timed_out: {code: LATE-7, url: "https://platform.example/return?code={code}"}
  study_full: {code: FULL-3}
arms:"""


class Clock:
    """A clock the test moves (the study's timer)."""

    def __init__(self) -> None:
        self.t = datetime(2030, 1, 1, 9, 0, 0)

    def __call__(self) -> datetime:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += timedelta(seconds=seconds)


@pytest.fixture(params=["duckdb", "postgresql"])
def any_store(request, tmp_path):
    """A DuckDB file, or a fresh schema of the test PostgreSQL."""
    target = (request.getfixturevalue("postgres_url") if request.param == "postgresql"
              else tmp_path / "study.duckdb")
    s = Store(target)
    yield s
    s.close()


def _events(store: Store, kind: str) -> list[dict]:
    rows = store.query("SELECT participant_id, detail_json FROM events WHERE event = ? "
                       "ORDER BY event_id", [kind])
    return [{**json.loads(r["detail_json"] or "{}"), "pid": r["participant_id"]} for r in rows]


def test_bad_quota_and_time_limit_blocks_are_refused_with_their_place(protocol_text) -> None:
    cases = {
        "quotas: {targets: {pool: 3, oracle: 3, hare: 2}}\narms:":
            ("quotas.targets.hare", "no arm 'hare'; the arms are pool, oracle"),
        "quotas: {targets: {pool: 3}}\narms:":
            ("quotas.targets", "no target for arm 'oracle'"),
        "quotas: {targets: {pool: 0, oracle: 3}}\narms:":
            ("quotas.targets.pool", "greater than or equal to 1"),
        "quotas: {targets: {pool: 3, oracle: 3}, counts: finished}\narms:":
            ("quotas.counts", "complete_unflagged"),
        "time_limit: {seconds: 0}\narms:": ("time_limit.seconds", "greater than 0"),
        "time_limit: {seconds: 60, warning_seconds: 90}\narms:":
            ("time_limit", "warning_seconds (90) must be less than the limit seconds (60)"),
    }
    for block, (where, message) in cases.items():
        with pytest.raises(ProtocolError) as e:
            protocol_text(("arms:", block))
        assert any(path.startswith(where) and message in msg for path, msg in e.value.problems), \
            (block, e.value.problems)


def test_the_largest_shortfall_gets_the_next_person_and_a_full_study_says_so(
        any_store, protocol_text, answer) -> None:
    store = any_store
    protocol = protocol_text(("arms:", QUOTAS))
    clock = Clock()
    study = Study(protocol, store, timer=clock)
    first = study.start()
    walk(first, answer)  # consents, gets the block's first arm, completes
    done_arm = study.participant(first.participant_id).arm
    assert done_arm == design.assign_arm(protocol, 0)  # level arms: the block decides
    other = "oracle" if done_arm == "pool" else "pool"
    second = study.start()
    walk(second, answer, stop_at="scenario")  # consents: the arm still short, then leaves
    assert study.participant(second.participant_id).arm == other
    decision = _events(store, "assigned")[-1]
    assert decision["arm"] == other
    assert decision["quota"][done_arm] == {"target": 1, "counted": 1, "in_progress": 0,
                                           "shortfall": 0}
    assert decision["quota"][other]["shortfall"] == 1
    # both places taken (one complete, one in progress): the next link finds the study full
    third = study.start()
    page = third.current_page()
    assert (page.kind, page.payload.reason, page.payload.ending, page.payload.code) == \
        ("end", "full", "study_full", "FULL-3")
    assert third.status == "full"
    assert store.query("SELECT arm FROM participants WHERE participant_id = ?",
                       [third.participant_id])[0]["arm"] is None
    assert _events(store, "study_full")[0]["arms"][other]["in_progress"] == 1
    # the one who left passes the time limit: the next visit frees their place and gets it
    clock.advance(601)
    fourth = study.start()
    assert store.query("SELECT status FROM participants WHERE participant_id = ?",
                       [second.participant_id])[0]["status"] == "timed_out"
    walk(fourth, answer, stop_at="scenario")
    assert study.participant(fourth.participant_id).arm == other
    # the one who left comes back: the time-is-up ending with its code, never a form
    study.forget(None)
    page = second.current_page()
    assert (page.kind, page.payload.reason, page.payload.ending, page.payload.code) == \
        ("end", "timed_out", "timed_out", "LATE-7")
    assert page.payload.url == "https://platform.example/return?code={code}"
    with pytest.raises(SessionEndedError):
        second.submit("scenario", {})


def test_a_late_answer_is_refused_and_times_the_session_out(store, protocol_text,
                                                           answer) -> None:
    clock = Clock()
    study = Study(protocol_text(("arms:", QUOTAS)), store, timer=clock)
    s = study.start()
    walk(s, answer, stop_at="scenario")
    assert study.seconds_left(s.participant_id) is None  # before the warning time
    clock.advance(500)
    assert study.seconds_left(s.participant_id) == pytest.approx(100)
    page = s.current_page()
    assert page.id == "scenario"
    clock.advance(100)
    responses = store.counts()["responses"]
    with pytest.raises(SessionTimedOutError):
        s.submit(page.id, answer(page))
    assert store.counts()["responses"] == responses  # nothing of the late answer stored
    assert s.status == "timed_out" and s.current_page().payload.reason == "timed_out"
    row = store.query("SELECT status, current_page FROM participants WHERE "
                      "participant_id = ?", [s.participant_id])[0]
    assert row == {"status": "timed_out", "current_page": "end"}
    assert [e["pid"] for e in _events(store, "timed_out")] == [s.participant_id]


def test_without_quotas_assignment_is_the_permuted_blocks(store, small_protocol,
                                                          answer) -> None:
    study = Study(small_protocol, store)
    arms = []
    for _ in range(6):
        s = study.start()
        walk(s, answer, stop_at="scenario")
        arms.append(study.participant(s.participant_id).arm)
    assert arms == [design.assign_arm(small_protocol, k) for k in range(6)]
    assert "quota" not in _events(store, "assigned")[0]


def test_counting_rules(store, protocol_text, answer) -> None:
    """``not_excluded`` leaves out a completer who failed the attention check (the
    protocol's exclusions.failed_attention); ``complete`` counts them."""
    protocol = protocol_text(("arms:", "quotas: {targets: {pool: 5, oracle: 5}, "
                                       "counts: not_excluded}\narms:"))
    study = Study(protocol, store)
    careless = study.start()
    walk(careless, lambda page: {"choice": "a"} if page.kind == "attention" else answer(page))
    careful = study.start()
    walk(careful, answer)
    arms = {s.participant_id: study.participant(s.participant_id).arm
            for s in (careless, careful)}
    complete = arm_tally(store, protocol.id, "complete")
    kept = arm_tally(store, protocol.id, "not_excluded")
    assert sum(a["counted"] for a in complete.values()) == 2
    assert kept[arms[careless.participant_id]]["counted"] == \
        complete[arms[careless.participant_id]]["counted"] - 1
    assert study.standing().arms[arms[careful.participant_id]].counted == \
        kept[arms[careful.participant_id]]["counted"]


def test_a_consent_that_finds_the_study_full_ends_there(store, protocol_text, answer) -> None:
    """Three visits start while places are left; the third to consent finds both taken (in
    progress) and ends on the study-full page with no arm."""
    study = Study(protocol_text(("arms:", QUOTAS)), store, timer=Clock())
    visits = [study.start() for _ in range(3)]
    for s in visits:
        assert s.current_page().id == "consent"
    for s in visits:
        s.submit("consent", {"agree": True})
    arms = [study.participant(s.participant_id).arm for s in visits]
    assert sorted(arms[:2]) == ["oracle", "pool"] and arms[2] is None
    page = visits[2].current_page()
    assert (page.kind, page.payload.reason, page.payload.code) == ("end", "full", "FULL-3")
    full = _events(store, "study_full")
    assert [e["pid"] for e in full] == [visits[2].participant_id]
    assert all(arm["shortfall"] == 0 for arm in full[0]["quota"].values())
    assert store.query("SELECT consent_seq, status FROM participants WHERE participant_id = ?",
                       [visits[2].participant_id])[0] == {"consent_seq": 2, "status": "full"}
