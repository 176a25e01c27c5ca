"""Who enters a study and when they count (protocols.running.admission): a recruitment id resumes
only with its first visit's recruitment session, tokens are never revoked, ids are checked
against the protocol's pattern, assignment follows the order of consent (junk visits change
nothing), caches stay bounded, and the salt cannot change silently."""

from __future__ import annotations

import json

import pytest
from test_session import walk

from data.store import Store
from protocols.definition.schema import ProtocolError, parse_protocol
from protocols.running import design, session
from protocols.running.registration import SALT_ENV
from protocols.running.session import (
    IdRefusedError,
    InvalidExternalIdError,
    SaltMismatchError,
    Study,
    UnknownTokenError,
)

PID = "5f9a1b2c3d4e5f60718293a4"


def _events(store: Store, kind: str) -> list[dict]:
    """The details of the ``kind`` events, each with its participant as ``pid``."""
    rows = store.query("SELECT participant_id, detail_json FROM events WHERE event = ? "
                       "ORDER BY event_id", [kind])
    return [{**json.loads(r["detail_json"] or "{}"), "pid": r["participant_id"]} for r in rows]


def test_an_id_resumes_only_with_its_first_recruitment_session(store, small_protocol,
                                                               answer) -> None:
    study = Study(small_protocol, store)
    a = study.start(external_id=PID, session="SESSION-A", recruitment={"STUDY_ID": "st"})
    walk(a, answer, stop_at="scenario")
    n_tokens = store.counts()["tokens"]
    for other in ("SESSION-B", None):  # another session, or none: refused, nothing created
        with pytest.raises(IdRefusedError):
            study.start(external_id=PID, session=other)
    assert store.counts()["participants"] == 1 and store.counts()["tokens"] == n_tokens
    refused = _events(store, "id_refused")
    assert [e["session"] for e in refused] == [study.hash_external("SESSION-B"), None]
    assert all(e["pid"] == a.participant_id for e in refused)
    # the owner's own token keeps working, and their link (same session) resumes anywhere
    assert study.resume(a.token).current_page().id == "scenario"
    b = study.start(external_id=PID, session="SESSION-A")
    assert b.participant_id == a.participant_id and b.token != a.token
    assert b.current_page().id == "scenario"
    assert study.resume(a.token).participant_id == a.participant_id  # never revoked
    row = store.query("SELECT session_hash FROM participants")[0]
    assert row["session_hash"] == study.hash_external("SESSION-A")
    kinds = [r["event"] for r in store.query("SELECT event FROM events ORDER BY event_id")]
    assert kinds[:3] == ["start", "recruitment", "answer"]  # recruitment with the start
    assert kinds.count("token_issued") == 1
    assert [e["outcome"] for e in _events(store, "recruitment")] == ["started", "resumed"]


def test_an_id_first_seen_without_a_session_resumes_only_by_token(store, small_protocol) -> None:
    study = Study(small_protocol, store)
    a = study.start(external_id=PID)
    for other in (None, "SESSION-A"):
        with pytest.raises(IdRefusedError):
            study.start(external_id=PID, session=other)
    assert study.resume(a.token).participant_id == a.participant_id


def test_id_pattern_is_checked_before_anything_is_written(store, protocol_text) -> None:
    proto = protocol_text(("seed: 5", "seed: 5\nrecruitment: {id_pattern: '[0-9a-f]{24}'}"))
    study = Study(proto, store)
    for bad in ("made-up", PID + "0", PID.upper()):
        with pytest.raises(InvalidExternalIdError):
            study.start(external_id=bad, session="s")
    assert store.counts()["participants"] == 0
    assert study.start(external_id=PID, session="s").participant_id
    assert study.start().participant_id  # no id at all: the server decides (--require-id)


@pytest.mark.parametrize("pattern, problem", [
    ("[0-9", "not a regular expression"), (".*", "accepts an empty id"),
])
def test_a_broken_id_pattern_is_a_protocol_error(protocol_text, pattern, problem) -> None:
    with pytest.raises(ProtocolError, match=problem) as e:
        protocol_text(("seed: 5", f"seed: 5\nrecruitment: {{id_pattern: '{pattern}'}}"))
    assert "recruitment.id_pattern" in str(e.value)


def test_a_protocol_without_the_new_block_keeps_its_fingerprint(small_protocol) -> None:
    """Studies stored before the recruitment block existed reopen with the same protocol."""
    assert "recruitment" not in json.loads(small_protocol.canonical_json())
    with_pattern = small_protocol.model_copy(update={"recruitment": small_protocol.recruitment
                                                     .model_copy(update={"id_pattern": "x+"})})
    assert with_pattern.fingerprint() != small_protocol.fingerprint()


def _consent_all(study: Study, sessions, answer) -> None:
    for s in sessions:
        s.submit("consent", answer(s.current_page()))


def test_junk_visits_that_never_consent_do_not_change_arm_balance(tmp_path, small_protocol,
                                                                  answer) -> None:
    """Ten people consent; in the second study 25 junk visits (opened and left, or
    declined) come in between. The consenting people get the same arms, personas and
    consent numbers in both, and the arms stay balanced."""
    outcomes = []
    for junk in (0, 25):
        with Store(tmp_path / f"j{junk}.duckdb") as store:
            study = Study(small_protocol, store)
            real = []
            for k in range(10):
                for j in range(junk // 10 + (k < junk % 10)):
                    visit = study.start(external_id=f"junk-{k}-{j}")
                    if j % 2:
                        visit.submit("consent", {"agree": False})
                real.append(study.start())
            _consent_all(study, real, answer)
            rows = store.query("SELECT p.consent_seq, p.arm, pr.x_json FROM participants p "
                               "JOIN profiles pr USING (study_id, participant_id) "
                               "WHERE p.consent_seq IS NOT NULL ORDER BY p.consent_seq")
            outcomes.append(rows)
            unassigned = store.query("SELECT count(*) AS n FROM participants WHERE arm IS NULL "
                                     "AND consent_seq IS NULL")[0]["n"]
            assert unassigned == junk
            assert store.query("SELECT count(*) AS n FROM profiles")[0]["n"] == 10
    assert outcomes[0] == outcomes[1]
    arms = [r["arm"] for r in outcomes[0]]
    assert [r["consent_seq"] for r in outcomes[0]] == list(range(10))
    assert arms == [design.assign_arm(small_protocol, k) for k in range(10)]
    assert arms.count("pool") == arms.count("oracle") == 5


def test_consent_order_not_arrival_order_drives_assignment(store, small_protocol,
                                                           answer) -> None:
    study = Study(small_protocol, store)
    first, second = study.start(), study.start()
    assert first.current_page().id == "consent"  # no arm needed before consent
    second.submit("consent", {"agree": True})
    first.submit("consent", {"agree": True})
    rows = {r["participant_id"]: r for r in store.query("SELECT * FROM participants")}
    assert rows[second.participant_id]["consent_seq"] == 0
    assert rows[first.participant_id]["consent_seq"] == 1
    assigned = _events(store, "assigned")
    assert [(e["pid"], e["consent_seq"]) for e in assigned] == [(second.participant_id, 0),
                                                               (first.participant_id, 1)]
    walk(first, answer)
    assert first.status == "complete"  # the whole session works on the consent number


def test_caches_stay_bounded(store, small_protocol, answer, monkeypatch) -> None:
    monkeypatch.setattr(session, "CACHE_SIZE", 5)
    study = Study(small_protocol, store)
    people = [study.start() for _ in range(12)]
    _consent_all(study, people, answer)
    for s in people:
        s.current_page()
    assert len(study._cache) <= 5 and len(study._pages) <= 5
    # evicted participants come back from the store, at their page
    assert [s.current_page().id for s in people] == ["screening"] * 12
    walk(people[0], answer)
    assert people[0].status == "complete"


def test_salt_from_the_environment_is_checked_not_stored(tmp_path, small_protocol,
                                                         monkeypatch) -> None:
    path = tmp_path / "salt.duckdb"
    salt = "a-long-secret-salt-value"
    monkeypatch.setenv(SALT_ENV, salt)
    with Store(path) as store:
        study = Study(small_protocol, store)
        h = study.hash_external(PID)
        row = store.query("SELECT salt, salt_check FROM studies")[0]
        assert row["salt"] is None and row["salt_check"] and salt not in row["salt_check"]
    assert salt.encode() not in path.read_bytes()
    for value in ("another-long-salt-value", None):
        if value is None:
            monkeypatch.delenv(SALT_ENV)
        else:
            monkeypatch.setenv(SALT_ENV, value)
        with Store(path) as store, pytest.raises(SaltMismatchError):
            Study(small_protocol, store)
    monkeypatch.setenv(SALT_ENV, salt)
    with Store(path) as store:
        assert Study(small_protocol, store).hash_external(PID) == h


def test_stored_salt_cannot_be_replaced_by_the_environment(tmp_path, small_protocol,
                                                           monkeypatch) -> None:
    path = tmp_path / "stored.duckdb"
    monkeypatch.delenv(SALT_ENV, raising=False)
    with Store(path) as store:
        h = Study(small_protocol, store).hash_external(PID)
    monkeypatch.setenv(SALT_ENV, "a-long-secret-salt-value")
    with Store(path) as store, pytest.raises(SaltMismatchError, match="stored salt"):
        Study(small_protocol, store)
    monkeypatch.setenv(SALT_ENV, "short")
    with Store(tmp_path / "new.duckdb") as store, pytest.raises(SaltMismatchError,
                                                                 match="at least 16"):
        Study(small_protocol, store)
    monkeypatch.delenv(SALT_ENV)
    with Store(path) as store:
        assert Study(small_protocol, store).hash_external(PID) == h


def test_unknown_token_is_refused(store, small_protocol) -> None:
    study = Study(small_protocol, store)
    study.start(external_id=PID, session="s")
    with pytest.raises(UnknownTokenError):
        study.resume("A" * 32)


def test_new_database_files_are_private(tmp_path) -> None:
    path = tmp_path / "private.duckdb"
    Store(path).close()
    assert path.stat().st_mode & 0o077 == 0


def test_protocol_pattern_round_trips_through_yaml(protocol_text) -> None:
    proto = protocol_text(("seed: 5", "seed: 5\nrecruitment: {id_pattern: '[A-Z]{3}'}"))
    assert parse_protocol(proto.model_dump_json()).recruitment.id_pattern == "[A-Z]{3}"


def test_simulated_participants_consent_in_order_so_their_numbers_are_unchanged(
        tmp_path, small_protocol) -> None:
    """Everyone consents in order of arrival in a simulation: the consent number equals the
    sequence number, so assignment (and every number drawn from it) is what it was when
    assignment used the sequence number."""
    from study_app.simulator import simulate

    with Store(tmp_path / "sim.duckdb") as store:
        simulate(small_protocol, store, 7, chunk=3)
        rows = store.query("SELECT seq, consent_seq, arm FROM participants ORDER BY seq")
    assert [r["consent_seq"] for r in rows] == [r["seq"] for r in rows] == list(range(7))
    assert [r["arm"] for r in rows] == [design.assign_arm(small_protocol, k) for k in range(7)]
