"""The dashboard's headline numbers add up, arm counts and HARE's answers, on a small study
with known visits (data.study_progress)."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from data import study_progress as sp
from data.store import Store
from protocols.definition.schema import parse_protocol
from protocols.running.session import Study
from study_app.simulator import simulate

PROTOCOL = parse_protocol("""\
id: progress
title: Progress test
scenario: loan
seed: 3
decision_model: bayes
profile: {source: persona}
elicitation: {scheme: binary}
arms:
  - {id: oracle, method: oracle, options: {bins: 6, plausibility: false}}
  - {id: pool, method: pool, options: {donors: 10}}
plans: {per_participant: 2, design: stratified, distance: l1_profile}
""")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = Store(str(tmp_path_factory.mktemp("progress") / "p.duckdb"))
    simulate(PROTOCOL, s, 3, chunk=3)  # three complete (synthetic)
    study = Study(PROTOCOL, s)
    study.start()  # a visit still on the consent page
    declined = study.start()
    declined.submit(declined.current_page().id, {"agree": False})
    for _ in range(3):  # three consent, one of them withdraws
        web = study.start()
        web.submit(web.current_page().id, {"agree": True})
    study.withdraw(web.participant_id, "participant")
    yield s
    s.close()


def test_headline_numbers_partition_the_visits(store) -> None:
    h = sp.headline(store, "progress")
    sp.check_headline(h)
    assert {k: h[k] for k in sp.HEADLINE} == {
        "visits": 8, "consented": 6, "in_progress": 2, "completed": 3,
        "ended_after_consent": 1, "screened_out": 0, "withdrawn": 1, "declined": 1,
        "not_consented_yet": 1}
    assert h["ended_after"] == {"withdrawn": 1} and h["ended_before"] == {}
    web = sp.headline(store, "progress", "web")
    assert (web["visits"], web["consented"], web["completed"]) == (5, 3, 0)
    broken = {**h, "in_progress": h["in_progress"] + 1}
    with pytest.raises(ValueError, match="consented does not add up"):
        sp.check_headline(broken)


def test_arm_counts_are_of_consented_participants(store) -> None:
    arms = sp.arm_counts(store, "progress")
    assert int(arms["consented"].sum()) == 6  # the withdrawn one keeps their arm
    assert int(arms["completed"].sum()) == 3 and int(arms["in_progress"].sum()) == 2
    assert set(arms["arm"]) == {"oracle", "pool"}


def test_hare_answers_count_choices_and_accepts(store) -> None:
    pid = store.query("SELECT participant_id FROM participants WHERE study_id = 'progress' "
                      "AND status = 'complete' ORDER BY seq LIMIT 2")
    at = datetime(2026, 1, 5, 10, 0)
    rows = []
    for k, r in enumerate(pid):  # HARE-like answers: two choices, one accept question
        for step, (page, kind, answer) in enumerate(
                [("hare-1", "hare_choice", {"choice": k}), ("hare-2", "hare_choice",
                 {"choice": 0}), ("hare-3", "hare_accept", {"accept": k == 0})], start=50):
            rows.append({"study_id": "progress", "participant_id": r["participant_id"],
                         "page_id": page, "kind": kind, "step": step,
                         "answer_json": json.dumps(answer), "correct": None,
                         "answered_at": at})
    with store.transaction() as tx:
        tx.insert("responses", rows)
    got = sp.hare_answers(store, "progress").set_index("page_id")
    assert list(got.index) == ["hare-1", "hare-2", "hare-3"]
    assert got.loc["hare-1", "chose_a"] == 0.5 and got.loc["hare-2", "chose_a"] == 1.0
    assert got.loc["hare-3", "accepted"] == 1 and got.loc["hare-3", "accept_rate"] == 0.5
    assert list(got["answers"]) == [2, 2, 2]
