"""The store contract, run on both backends (DuckDB file, PostgreSQL schema): migrations,
all-or-nothing transactions, conflicts, guarded updates, the cross-process lock, typed reads,
snapshots and a whole study written by many threads through two store objects."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from data.migrations import LATEST, SchemaVersionError
from data.store import Store, StoreError, WriteConflictError
from tests.data.study_rows import AT, insert_study, participant_row


def test_new_database_is_migrated_and_versioned(store_target) -> None:
    with Store(store_target) as store:
        assert store.query("SELECT max(version) AS v FROM schema_version")[0]["v"] == LATEST
        assert set(store.counts()) >= {"studies", "ratings_long", "sim_ratings"}
    with Store(store_target) as store:  # reopening applies nothing twice
        assert store.counts()["schema_version"] == LATEST
        with store.transaction() as tx:
            tx.execute("INSERT INTO schema_version VALUES (?, ?, ?)", [999, "future", AT])
    with pytest.raises(SchemaVersionError, match="newer than this code"):
        Store(store_target)


def test_transaction_is_all_or_nothing(store_target) -> None:
    with Store(store_target) as store:
        with pytest.raises(RuntimeError, match="boom"):
            with store.transaction() as tx:
                insert_study(tx)
                raise RuntimeError("boom")
        assert store.counts()["studies"] == 0
        with pytest.raises(WriteConflictError):
            with store.transaction() as tx:
                insert_study(tx, "x")
                insert_study(tx, "x")  # duplicate key inside one transaction
        assert store.counts()["studies"] == 0
        with pytest.raises(StoreError, match="no column"):
            with store.transaction() as tx:
                tx.insert("studies", [{"study_id": "y", "colour": "blue"}])
        with store.transaction() as tx:  # the store is usable after every failure
            insert_study(tx)
        assert store.counts()["studies"] == 1


def test_guarded_update_detects_stale_state(store_target) -> None:
    with Store(store_target) as store:
        with store.transaction() as tx:
            insert_study(tx)
            tx.insert("participants", [participant_row("s", "p", step=3, seq=0)])
        row = {"study_id": "s", "participant_id": "p", "step": 4, "state_json": "{\"a\": 1}"}
        with pytest.raises(WriteConflictError, match="changed since"):
            with store.transaction() as tx:
                tx.insert("events", [{"study_id": "s", "participant_id": "p",
                                      "event": "answer", "occurred_at": AT}])
                tx.update("participants", ["study_id", "participant_id"], [row],
                          guard="step", expected=[2])
        assert store.query("SELECT step FROM participants")[0]["step"] == 3
        assert store.counts()["events"] == 0  # the event went with the failed update
        with store.transaction() as tx:
            assert tx.update("participants", ["study_id", "participant_id"], [row],
                             guard="step", expected=[3]) == 1
        assert store.query("SELECT step, state_json FROM participants")[0] == {
            "step": 4, "state_json": "{\"a\": 1}"}


def test_two_writers_of_one_step_one_wins(store_target) -> None:
    """Two store objects (two server processes on PostgreSQL) submit the same step: exactly
    one commits, the other gets WriteConflictError and its rows are gone."""
    a, b = Store(store_target), Store(store_target)
    try:
        with a.transaction() as tx:
            insert_study(tx)
            tx.insert("participants", [participant_row("s", "p", step=0, seq=0)])
        barrier = threading.Barrier(2)
        outcome: dict[str, str] = {}

        def submit(store, name: str) -> None:
            try:
                with store.transaction() as tx:
                    assert tx.query("SELECT step FROM participants")[0]["step"] == 0
                    barrier.wait(timeout=10)  # both read step 0 before either writes
                    tx.insert("responses", [{"study_id": "s", "participant_id": "p",
                                             "page_id": "consent", "kind": "consent", "step": 0,
                                             "answer_json": f'"{name}"', "answered_at": AT}])
                    tx.update("participants", ["study_id", "participant_id"],
                              [{"study_id": "s", "participant_id": "p", "step": 1}],
                              guard="step", expected=[0])
                outcome[name] = "committed"
            except WriteConflictError:
                outcome[name] = "conflict"

        threads = [threading.Thread(target=submit, args=(s, n)) for s, n in ((a, "a"), (b, "b"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(outcome.values()) == ["committed", "conflict"]
        winner = next(n for n, o in outcome.items() if o == "committed")
        assert a.query("SELECT answer_json FROM responses") == [{"answer_json": f'"{winner}"'}]
        assert a.query("SELECT step FROM participants")[0]["step"] == 1
    finally:
        a.close()
        b.close()


def test_lock_excludes_other_store_objects(store_target) -> None:
    """``lock`` sections of two store objects never overlap (on PostgreSQL: two processes)."""
    a, b = Store(store_target), Store(store_target)
    inside: list[str] = []
    overlaps = []

    def work(store, name: str) -> None:
        for _ in range(5):
            with store.lock:
                inside.append(name)
                if len(inside) > 1:
                    overlaps.append(list(inside))
                time.sleep(0.01)
                inside.remove(name)

    try:
        threads = [threading.Thread(target=work, args=(s, n)) for s, n in ((a, "a"), (b, "b"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert overlaps == []
    finally:
        a.close()
        b.close()


def test_reads_are_typed_alike_and_numpy_values_are_stored(store_target, tmp_path) -> None:
    with Store(store_target) as store:
        with store.transaction() as tx:
            insert_study(tx)
            tx.insert("plans", [{"study_id": "s", "participant_id": "p", "plan_id": "x",
                                 "position": np.int64(2), "valid": np.bool_(True),
                                 "cost": np.float32(0.5), "created_at": AT}])
        plans = store.plans("s")
        reference = Store(tmp_path / "reference.duckdb")
        with reference.transaction() as tx:
            tx.insert("plans", [{"study_id": "s", "participant_id": "p", "plan_id": "x",
                                 "position": 2, "valid": True, "cost": 0.5, "created_at": AT}])
        expected = reference.plans("s")
        reference.close()
        assert plans.dtypes.to_dict() == expected.dtypes.to_dict()
        assert plans.iloc[0].to_dict().keys() == expected.iloc[0].to_dict().keys()
        assert (plans.position[0], bool(plans.valid[0]), plans.cost[0]) == (2, True, 0.5)
        assert store.columns("plans")[:3] == [("study_id", "VARCHAR"),
                                              ("participant_id", "VARCHAR"),
                                              ("plan_id", "VARCHAR")]
        with pytest.raises(StoreError, match="unknown table"):
            store.table("secrets")


def test_snapshot_holds_the_same_rows(store_target) -> None:
    with Store(store_target) as store:
        with store.transaction() as tx:
            insert_study(tx)
            tx.insert("participants", [participant_row("s", "p", step=3, seq=0)])
            tx.insert("events", [{"study_id": "s", "participant_id": "p", "event": "start",
                                  "occurred_at": AT}] * 3)
        snap = store.snapshot()
        try:
            assert snap.counts() == store.counts()
            # DuckDB's SQL (the dashboard's) runs on the snapshot
            assert snap.query("SELECT count(*) AS n FROM events GROUP BY ALL")[0]["n"] == 3
        finally:
            if snap is not store:
                snap.close()


def test_read_only_refuses_writes(store_target) -> None:
    Store(store_target).close()
    with Store(store_target, read_only=True) as store:
        assert store.counts()["studies"] == 0
        with pytest.raises(StoreError, match="read-only"):
            with store.transaction():
                pass


@pytest.mark.parametrize("n", [1, 8, 9, 40])  # both sides of the DuckDB driver's FEW_ROWS
def test_few_and_many_rows_are_written_and_updated_alike(store_target, n: int) -> None:
    """A handful of rows (SQL parameters) and many (DuckDB: one Arrow table) store the same
    values, NumPy numbers and integral floats included; a guarded update of many rows is
    all or nothing like one of few."""
    rows = [{"study_id": "s", "participant_id": f"p{i:02d}", "seq": np.int64(i),
             "source": "web", "status": "active", "step": float(i % 3), "state_json": "{}",
             "arm": None, "created_at": AT, "updated_at": AT} for i in range(n)]
    with Store(store_target) as store:
        with store.transaction() as tx:
            insert_study(tx)
            assert tx.insert("participants", rows) == n
        got = store.query("SELECT participant_id, seq, step, arm, created_at FROM participants "
                          "ORDER BY participant_id")
        assert got == [{"participant_id": f"p{i:02d}", "seq": i, "step": i % 3, "arm": None,
                        "created_at": AT} for i in range(n)]
        new = [{"study_id": "s", "participant_id": f"p{i:02d}", "step": 7, "arm": "b"}
               for i in range(n)]
        stale = [i % 3 for i in range(n)]
        stale[-1] += 1  # one row was changed by someone else: nothing is written
        with pytest.raises(WriteConflictError, match="^1 row\\(s\\) of participants changed"):
            with store.transaction() as tx:
                tx.update("participants", ["study_id", "participant_id"], new, guard="step",
                          expected=stale)
        assert store.query("SELECT count(*) AS k FROM participants WHERE step = 7")[0]["k"] == 0
        with store.transaction() as tx:
            assert tx.update("participants", ["study_id", "participant_id"], new, guard="step",
                             expected=[i % 3 for i in range(n)]) == n
        assert store.query("SELECT DISTINCT step, arm FROM participants") == [
            {"step": 7, "arm": "b"}]


@pytest.mark.parametrize("n", [1, 9])
@pytest.mark.parametrize(("column", "value", "message"), [
    ("step", 2.5, "expected an integer, got float 2.5"),
    ("step", "3", "expected an integer, got str '3'"),
    ("status", 3, "expected text, got int 3"),
])
def test_a_value_of_the_wrong_type_is_refused_and_nothing_written(
        store_target, n: int, column: str, value, message: str) -> None:
    with Store(store_target) as store:
        with store.transaction() as tx:
            insert_study(tx)
        rows = [{"study_id": "s", "participant_id": f"p{i}", "seq": i, "source": "web",
                 "status": "active", "step": 0, "state_json": "{}", "created_at": AT,
                 "updated_at": AT} for i in range(n)]
        rows[-1][column] = value
        with pytest.raises(StoreError, match=message):
            with store.transaction() as tx:
                tx.insert("participants", rows)
        assert store.counts()["participants"] == 0


def _participants_at_step_0(store: Store, n: int) -> list[str]:
    """A study with ``n`` participants at step 0 (ids p00, p01, ...); their ids."""
    ids = [f"p{i:02d}" for i in range(n)]
    with store.transaction() as tx:
        insert_study(tx)
        for i, pid in enumerate(ids):
            tx.insert("participants", [participant_row("s", pid, step=0, seq=i)])
    return ids


@pytest.mark.parametrize("n", [1, 9])  # both sides of the DuckDB driver's FEW_ROWS
@pytest.mark.parametrize(("where", "value", "message"), [
    ("set", "x", "expected an integer, got str 'x'"),
    ("key", 5, "expected text, got int 5"),
    ("expected", "x", "expected an integer, got str 'x'"),
])
def test_an_update_refuses_a_wrong_type_in_its_values_keys_and_expected_values(
        store_target, n: int, where: str, value, message: str) -> None:
    with Store(store_target) as store:
        rows = [{"study_id": "s", "participant_id": pid, "step": 1}
                for pid in _participants_at_step_0(store, n)]
        expected: list = [0] * n
        if where == "set":
            rows[-1]["step"] = value
        elif where == "key":
            rows[-1]["participant_id"] = value
        else:
            expected[-1] = value
        with pytest.raises(StoreError, match=f"^{message}$"):
            with store.transaction() as tx:
                tx.update("participants", ["study_id", "participant_id"], rows, guard="step",
                          expected=expected)
        assert store.query("SELECT DISTINCT step FROM participants") == [{"step": 0}]


def test_each_column_type_names_what_it_expected(store_target) -> None:
    """BIGINT and DOUBLE columns refuse text with the type they expected; integral floats
    and NumPy numbers are stored as the column's type."""
    with Store(store_target) as store:
        with pytest.raises(StoreError, match="^expected an integer, got str '7'$"):
            with store.transaction() as tx:
                tx.insert("studies", [{"study_id": "s", "protocol_id": "p", "source": "protocol",
                                       "seed": "7", "created_at": AT}])
        with store.transaction() as tx:
            tx.insert("studies", [{"study_id": "s", "protocol_id": "p", "source": "protocol",
                                   "seed": 7.0, "created_at": AT}])
        profile = {"study_id": "s", "participant_id": "p", "source": "web", "x_json": "{}",
                   "display_json": "{}", "rejected": True}
        with pytest.raises(StoreError, match="^expected a number, got str 'high'$"):
            with store.transaction() as tx:
                tx.insert("profiles", [{**profile, "proba": "high"}])
        with store.transaction() as tx:
            tx.insert("profiles", [{**profile, "proba": np.float32(0.25)}])
        assert store.query("SELECT seed FROM studies") == [{"seed": 7}]
        assert store.query("SELECT proba, rejected FROM profiles") == [
            {"proba": 0.25, "rejected": True}]


@pytest.mark.parametrize("n", [1, 9])
def test_unknown_columns_and_rows_of_other_columns_are_named(store_target, n: int) -> None:
    with Store(store_target) as store:
        rows = [{"study_id": "s", "participant_id": pid, "step": 1}
                for pid in _participants_at_step_0(store, n)]
        bad = [*rows[:-1], {**rows[-1], "colour": "red", "mood": 1}]
        with pytest.raises(StoreError, match="^table participants has no column\\(s\\) colour, mood$"):
            with store.transaction() as tx:
                tx.update("participants", ["study_id", "participant_id"], bad)
        with pytest.raises(StoreError, match="^table participants has no column\\(s\\) colour$"):
            with store.transaction() as tx:
                tx.insert("participants", [{"study_id": "s", "participant_id": "q", "colour": 1}])
        if n > 1:
            other = [*rows[:-1], {"study_id": "s", "participant_id": f"p{n - 1:02d}", "arm": "b"}]
            with pytest.raises(StoreError, match="^every row of an update of participants must "
                                                 "carry the same columns$"):
                with store.transaction() as tx:
                    tx.update("participants", ["study_id", "participant_id"], other)
        assert store.query("SELECT DISTINCT step FROM participants") == [{"step": 0}]


@pytest.mark.parametrize("n", [1, 8, 9, 40])
def test_an_unguarded_update_writes_every_row(store_target, n: int) -> None:
    """Without a guard (no expected values), few rows and many are updated alike; the rows'
    columns may come in any order."""
    with Store(store_target) as store:
        rows = [{"study_id": "s", "participant_id": pid, "step": i, "arm": f"a{i}"}
                if i % 2 else
                {"arm": f"a{i}", "step": i, "participant_id": pid, "study_id": "s"}
                for i, pid in enumerate(_participants_at_step_0(store, n))]
        with store.transaction() as tx:
            assert tx.update("participants", ["study_id", "participant_id"], rows) == n
        assert store.query("SELECT participant_id, step, arm FROM participants "
                           "ORDER BY participant_id") == [
            {"participant_id": f"p{i:02d}", "step": i, "arm": f"a{i}"} for i in range(n)]
