"""data.columns, the catalogue of the store's columns: a freshly migrated database has
exactly its tables, views, columns, types, nullability and defaults; the codebook describes
exactly those columns; the plan metric columns are the engine's metric names; a catalogue
table's own DDL builds the same table the migrations built."""

from __future__ import annotations

import doctest

import duckdb
import pytest

import data.columns
from data.codebook import MEANINGS
from data.column_spec import Column, Table
from data.columns import (
    CATALOGUE,
    DISTANCE_COLUMNS,
    METRIC_COLUMNS,
    PLANS,
    PREFERENCE_COLUMNS,
    RATINGS,
)
from data.export import FLAGS_TABLE
from data.store import Store
from engine.metric_names import DISTANCES, METRIC_NAMES, PREFERENCE_METRICS

_SHAPE = ("SELECT table_name, column_name, data_type, is_nullable, column_default "
          "FROM information_schema.columns WHERE table_schema = 'main' "
          "ORDER BY table_name, ordinal_position")


def _shape(rows: list[tuple]) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for table, *column in rows:
        out.setdefault(table, []).append(tuple(column))
    return out


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple]]:
    """(column, type, nullable, default) of every table and view of a new store."""
    with Store(tmp_path_factory.mktemp("columns") / "study.duckdb") as store:
        return _shape([tuple(r.values()) for r in store.query(_SHAPE)])


def test_the_catalogue_is_the_migrated_schema(migrated) -> None:
    assert set(migrated) == set(CATALOGUE)
    for name, table in CATALOGUE.items():
        assert [(c, t) for c, t, _, _ in migrated[name]] == [
            (c.name, c.type) for c in table.columns], name


def test_the_codebook_describes_exactly_the_schema(migrated) -> None:
    assert set(MEANINGS) == set(migrated) | {FLAGS_TABLE}
    for name, columns in migrated.items():
        assert list(MEANINGS[name]) == [c for c, *_ in columns], name
        assert all(MEANINGS[name].values()), name


def test_a_catalogue_table_creates_the_migrated_table(migrated) -> None:
    """``create_sql`` of every table (nullability, defaults, keys) matches the history."""
    con = duckdb.connect()
    for seq in ("event_seq", "login_seq", "withdrawal_seq", "action_seq"):
        con.execute(f"CREATE SEQUENCE {seq} START 1")
    for table in CATALOGUE.values():
        if not table.view:
            con.execute(table.create_sql())
    built = _shape(con.execute(_SHAPE).fetchall())
    assert built == {n: cols for n, cols in migrated.items() if not CATALOGUE[n].view}
    keys = dict(con.execute(
        "SELECT table_name, list_sort(list(constraint_type)) FROM "
        "information_schema.table_constraints WHERE constraint_type IN ('PRIMARY KEY', "
        "'UNIQUE') GROUP BY table_name").fetchall())
    assert keys["participants"] == ["PRIMARY KEY", "UNIQUE", "UNIQUE"]
    assert keys["ratings"] == ["PRIMARY KEY"]


def test_add_column_sql_adds_the_catalogued_column() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE ratings (study_id VARCHAR NOT NULL)")
    con.execute(RATINGS.add_column_sql("language"))
    con.execute(RATINGS.add_column_sql("language"))  # re-runnable
    assert con.execute("SELECT column_name, data_type FROM information_schema.columns "
                       "WHERE table_name = 'ratings'").fetchall() == [
        ("study_id", "VARCHAR"), ("language", "VARCHAR")]


def test_plan_metric_columns_are_the_engine_metric_names() -> None:
    assert METRIC_COLUMNS == METRIC_NAMES
    assert PREFERENCE_COLUMNS == PREFERENCE_METRICS
    assert DISTANCE_COLUMNS == DISTANCES
    assert set(METRIC_COLUMNS + PREFERENCE_COLUMNS) <= set(PLANS.names)


def test_rows_and_picks_refuse_a_column_the_table_lacks() -> None:
    assert RATINGS.row(acceptance=5, action=4) == {"acceptance": 5, "action": 4}
    with pytest.raises(KeyError, match="ratings has no column acceptence"):
        RATINGS.row(acceptence=5)
    with pytest.raises(KeyError, match="plans has no column l2_actions"):
        PLANS.pick("l1_actions", "l2_actions")
    with pytest.raises(ValueError, match="repeats"):
        Table("t", (Column("a", "VARCHAR", "x"), Column("a", "DOUBLE", "y")))
    with pytest.raises(ValueError, match="is a view"):
        CATALOGUE["ratings_long"].create_sql()


def test_the_catalogue_module_example_runs() -> None:
    assert doctest.testmod(data.columns).failed == 0
