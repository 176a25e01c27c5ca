"""import-ratings: a documented long CSV in, rows in ratings_long; bad rows listed, nothing in."""

from __future__ import annotations

import pytest

from data.imports import ImportRowsError, import_ratings
from data.store import Store

GOOD = """participant_id,plan_id,l0,l1,acceptance,action,satisfaction,violation,arm
P1,1,1,0.17,2,1,,,pool
P1,2,3,0.9,4,2,0.5,0,pool
P2,1,2,0.4,3,3,1,1,oracle
"""


def test_good_file_lands_in_ratings_long(tmp_path, store_target) -> None:
    csv = tmp_path / "r.csv"
    csv.write_text(GOOD)
    with Store(store_target) as store:
        result = import_ratings(store, csv, "reference")
        assert (result.participants, result.new_participants, result.ratings) == (2, 2, 3)
        long = store.ratings_long("reference")
        assert len(long) == 3 and set(long["source"]) == {"imported"}
        p1 = long[long["participant_id"] == "P1"].sort_values("position")
        assert p1["plan_id"].tolist() == ["1", "2"]
        assert p1["l0_actions"].tolist() == p1["l0_profile"].tolist() == [1.0, 3.0]
        assert p1["l1_profile"].tolist() == [0.17, 0.9]
        assert p1["satisfaction"].isna().tolist() == [True, False]
        assert long["acceptance"].dtype.kind == "i" and set(long["method"]) == {"imported"}
        assert (~long["impossible"]).all()
        # importing the same rows again is refused, nothing changes
        with pytest.raises(ImportRowsError, match="line 2: participant 'P1' plan '1' is already"):
            import_ratings(store, csv, "reference")
        assert len(store.ratings_long()) == 3
        more = tmp_path / "more.csv"
        more.write_text("participant_id,plan_id,l0,l1,acceptance,action\nP1,3,1,0.1,5,5\n")
        assert import_ratings(store, more, "reference").new_participants == 0
        assert store.ratings_long("reference").query("plan_id == '3'")["position"].tolist() == [2]


def test_bad_rows_are_reported_with_line_numbers_and_nothing_is_imported(tmp_path) -> None:
    csv = tmp_path / "bad.csv"
    csv.write_text(
        "participant_id,plan_id,l0,l1,acceptance,action,satisfaction,violation\n"
        "P1,1,1,0.2,3,2,,\n"        # line 2: fine
        "P1,2,1,0.2,8,2,,\n"        # line 3: acceptance out of range
        ",3,1,0.2,3,2,,\n"          # line 4: no participant
        "P2,1,-1,x,3,2.5,,\n"       # line 5: l0 < 0, l1 not a number, action not whole
        "P2,2,1,0.2,3,2,1.5,2\n"    # line 6: satisfaction > 1, violation not 0/1
        "P1,1,1,0.2,3,2,,\n"        # line 7: repeats line 2
        "P3,1,1,0.2\n"              # line 8: too few fields
    )
    with Store(tmp_path / "db.duckdb") as store:
        with pytest.raises(ImportRowsError) as info:
            import_ratings(store, csv, "x")
        lines = {n for n, _ in info.value.problems}
        assert lines == {3, 4, 5, 6, 7, 8}
        text = str(info.value)
        for fragment in ("line 3: acceptance: 8 is outside 1..7", "line 4: participant_id: "
                         "required", "line 5: l0: -1 is outside", "line 5: l1: 'x' is not a "
                         "number", "line 5: action: must be a whole number",
                         "line 6: satisfaction: 1.5 is outside", "line 6: violation: must be 0 "
                         "or 1", "line 7: participant 'P1' plan '1' repeats line 2",
                         "line 8: expected 8 fields", "nothing was imported"):
            assert fragment in text, text
        assert store.counts()["ratings"] == 0 and store.counts()["studies"] == 0


def test_header_problems_and_empty_file(tmp_path) -> None:
    csv = tmp_path / "h.csv"
    csv.write_text("participant,plan_id,l0,l1,acceptance,action,colour\n")
    with Store(tmp_path / "db.duckdb") as store:
        with pytest.raises(ImportRowsError) as info:
            import_ratings(store, csv, "x")
        assert info.value.problems == [
            (1, "missing column(s): participant_id"),
            (1, "unknown column(s): participant, colour; expected participant_id, plan_id, l0, "
                "l1, acceptance, action, satisfaction, violation, arm, impossible"),
        ]
        assert info.value.unknown_columns == ["participant", "colour"]
        csv.write_text("participant_id,plan_id,l0,l1,acceptance,action\n")
        with pytest.raises(ImportRowsError, match="no data rows"):
            import_ratings(store, csv, "x")


def test_unknown_columns_only_on_request_and_named(tmp_path) -> None:
    csv = tmp_path / "u.csv"
    csv.write_text(GOOD.replace("arm\n", "arm,age,\n").replace("pool\n", "pool,31,\n")
                   .replace("oracle\n", "oracle,45,\n"))
    with Store(tmp_path / "db.duckdb") as store:
        with pytest.raises(ImportRowsError) as info:
            import_ratings(store, csv, "x")
        assert info.value.unknown_columns == ["age", ""]
        assert "unknown column(s): age, ''" in str(info.value)
        assert store.counts()["ratings"] == 0
        result = import_ratings(store, csv, "x", ignore_unknown=True)
        assert result.ratings == 3 and result.ignored_columns == ["age", ""]
        assert "age" not in store.ratings_long("x")


def test_refuses_to_mix_into_a_protocol_study(tmp_path) -> None:
    from datetime import datetime

    csv = tmp_path / "r.csv"
    csv.write_text(GOOD)
    with Store(tmp_path / "db.duckdb") as store:
        with store.transaction() as tx:
            tx.insert("studies", [{"study_id": "real", "protocol_id": "p", "source": "protocol",
                                   "created_at": datetime(2024, 1, 1)}])
        with pytest.raises(ImportRowsError, match="exists and was not imported"):
            import_ratings(store, csv, "real")
