"""export: every table + codebook, round trip of row counts, types and values; free text and
linkage columns only on request; CSV formula cells neutralized, Parquet exact."""

from __future__ import annotations

import json
from datetime import datetime

import pandas as pd
import pytest

from data.codebook import MEANINGS, NOT_EXPORTED
from data.export import EXPORTED, FLAGS_TABLE, export, load_export
from data.quality import COLUMNS as FLAG_COLUMNS
from data.store import TABLES, VIEWS, Store

SAMPLE = {"VARCHAR": 'a, "quoted"\ntext', "INTEGER": 3, "BIGINT": 7, "DOUBLE": 0.25,
          "BOOLEAN": True, "TIMESTAMP": datetime(2024, 5, 6, 7, 8, 9)}


def _fill(store: Store) -> None:
    """Two rows per table: every column set, then only the NOT NULL ones (others NULL)."""
    with store.transaction() as tx:
        for table in TABLES:
            if table == "schema_version":
                continue
            cols = store.columns(table)
            notnull = {r["column_name"] for r in store.query(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                "AND table_schema = current_schema() AND is_nullable = 'NO'", [table])}
            full = {n: SAMPLE[t] for n, t in cols if n != "event_id"}
            sparse = {n: SAMPLE[t] for n, t in cols if n in notnull and n != "event_id"}
            for key in ("participant_id", "plan_id", "page_id", "study_id", "account"):
                if key in sparse:
                    sparse[key] = "second"
            if "step" in sparse:
                sparse["step"] = 4
            if "seq" in full:
                sparse["seq"] = 9
            if table in ("participants", "tokens"):
                sparse["token_hash"] = "other-hash"
            tx.insert(table, [full, sparse])


SECRETS = [c for cols in NOT_EXPORTED.values() for c in cols]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_export_round_trip(tmp_path, store_target, fmt: str) -> None:
    with Store(store_target) as store:
        _fill(store)
        manifest = export(store, tmp_path / "out", fmt,  # type: ignore[arg-type]
                          free_text=True, linkage=True)
        originals = {t: store.table(t) for t in EXPORTED}
    assert set(manifest["tables"]) == {*EXPORTED, FLAGS_TABLE}
    assert {f"{t}.{fmt}" for t in EXPORTED} | {"codebook.csv", "codebook.json"} <= set(
        manifest["files"])
    back = load_export(tmp_path / "out")
    for table in EXPORTED:
        orig = originals[table].drop(columns=SECRETS, errors="ignore")
        got = back[table]
        assert len(got) == len(orig) == manifest["tables"][table], table
        assert list(got.columns) == list(orig.columns), table
        assert [str(t) for t in got.dtypes] == [str(t) for t in orig.dtypes], table
        pd.testing.assert_frame_equal(
            got.sort_values(list(got.columns[:2])).reset_index(drop=True),
            orig.sort_values(list(orig.columns[:2])).reset_index(drop=True),
            check_dtype=True,
        )
    assert "salt" not in back["studies"] and "token_hash" not in back["participants"]
    assert "tokens" not in back and "dashboard_logins" not in back  # private tables
    assert "withdrawals" not in back
    assert len(back[FLAGS_TABLE]) == manifest["tables"][FLAGS_TABLE]


def test_codebook_describes_every_exported_column(tmp_path) -> None:
    with Store(tmp_path / "db.duckdb") as store:
        export(store, tmp_path / "out", "csv", free_text=True, linkage=True)
        book = json.loads((tmp_path / "out" / "codebook.json").read_text())
        for table in EXPORTED:
            cols = [r["column"] for r in book if r["table"] == table]
            assert cols == [n for n, _ in store.columns(table) if n not in SECRETS]
    assert all(r["meaning"] and r["type"] for r in book)
    assert set(MEANINGS) == set(TABLES + VIEWS) | {FLAGS_TABLE}
    assert [r["column"] for r in book if r["table"] == FLAGS_TABLE] == list(FLAG_COLUMNS)
