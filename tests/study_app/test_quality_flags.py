"""The data-quality flags find simulated careless participants (simulate --speeders
--straightliners: their kind is simulation truth, apart from the answers), and analyze's
--exclude leaves the flagged out, counted per reason."""

from __future__ import annotations

import pytest

from data.store import Store
from protocols.definition.schema import parse_protocol
from study_app.exclusion_rules import study_rules
from study_app.simulator import simulate
from study_app.study_analysis import StudyAnalysisInputError, exclusion_flags, load_flags

PROTOCOL = """\
id: careless
title: Careless participants
scenario: loan
seed: 4
decision_model: bayes
profile: {source: persona}
elicitation: {scheme: binary}
arms:
  - {id: oracle, method: oracle, options: {bins: 6, plausibility: false, grid_range: training}}
plans:
  per_participant: 4
  design: stratified
  distance: l1_profile
  # every participant rates enough plans for a straight line to show (no step limit)
  bounds: {loan_amount: {none: true}, loan_duration: {none: true}, income: {none: true},
           savings: {none: true}}
attention_checks:
  - {id: c1, after: plan-1, question: "Pick b", options: [a, b], correct: b}
quality: {speeder_fraction: 0.5, straightliner_min_ratings: 3}
"""


def test_flags_find_synthetic_speeders_and_straightliners(tmp_path) -> None:
    db = tmp_path / "careless.duckdb"
    summary = simulate(parse_protocol(PROTOCOL), db, 40, speeders=0.2, straightliners=0.2)
    found = summary["flag_recovery"]
    assert found["speeder"]["truth"] >= 4 and found["straightliner"]["truth"] >= 4
    assert found["speeder"]["precision"] >= 0.9 and found["speeder"]["recall"] >= 0.8
    assert found["straightliner"]["precision"] >= 0.8
    assert found["straightliner"]["recall"] >= 0.7
    with Store(db, read_only=True) as store:
        row = store.studies().iloc[0].to_dict()
        ratings = store.ratings_long("careless")
    flagged = load_flags(str(db), "careless")
    speeders = {p for p, f in flagged.items() if "speeder" in f} & set(ratings["participant_id"])
    kept, record, _ = study_rules(ratings, row, flagged=flagged,
                                  asked=exclusion_flags("speeders,straightliners"))
    assert record["rules"]["speeder"] and record["rules"]["straightliner"]
    by_reason = {e["participant_id"]: e["reason"] for e in record["excluded"]}
    # each participant under the first rule that drops them: attention, then the flags
    assert {p for p, r in by_reason.items() if r == "speeder"} <= speeders
    assert speeders <= set(by_reason)  # every flagged speeder is out, under some rule
    assert record["counts"]["speeder"] == sum(r == "speeder" for r in by_reason.values()) > 0
    assert record["counts"]["straightliner"] > 0
    assert not set(by_reason) & set(kept["participant_id"])
    assert record["n_ratings_kept"] == len(kept) < len(ratings)


def test_exclude_names_are_checked() -> None:
    assert exclusion_flags("speeders, attention") == ("speeder", "failed_attention")
    assert exclusion_flags(None) == ()
    with pytest.raises(StudyAnalysisInputError, match="unknown sleepers"):
        exclusion_flags("speeders,sleepers")


def test_an_imported_study_says_it_has_no_protocol() -> None:
    """An imported study stores no protocol: the note says so (not a validation error), and
    no protocol exclusion drops anyone."""
    import pandas as pd

    ratings = pd.DataFrame({"participant_id": ["a", "a", "b"], "arm": ["x", "x", "x"],
                            "acceptance": [1, 2, 3], "action": [3, 2, 1]})
    notes: list[str] = []
    kept, record, truth = study_rules(ratings, {"protocol_json": None}, note=notes.append)
    assert notes == ["note: an imported study has no protocol; no protocol exclusions applied"]
    assert len(kept) == 3 and record["excluded"] == [] and truth is None
