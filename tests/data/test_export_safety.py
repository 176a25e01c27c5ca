"""What an export lets out: formula cells neutralized in CSV only (stored data and Parquet
exact), free text and linkage columns only on request, every event kind in the codebook."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import zipfile
from datetime import datetime
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from data.codebook import EVENT_KINDS, check_event_kind
from data.export import TRIGGERS, export, formula_cells, load_export
from data.store import Store

AT = datetime(2024, 1, 1)
# Formula triggers (OWASP "CSV injection"), one already prefixed, and harmless text.
REASONS = ["=HYPERLINK(\"http://evil.example\",\"click\")", "+cmd|' /C calc'!A0", "-2+3",
           "@SUM(A1:A9)", "\tTAB", "\rCR", "'=already quoted", "plain reason, with a comma",
           "a = b in the middle", "", "''+two quotes"]


def _study(store: Store) -> None:
    """One participant per reason, with a rating, a response, linkage and recruitment."""
    with store.transaction() as tx:
        tx.insert("studies", [{"study_id": "s", "protocol_id": "p", "source": "protocol",
                               "created_at": AT}])
        for k, reason in enumerate(REASONS):
            pid = f"p{k:02d}"
            tx.insert("participants", [{
                "study_id": "s", "participant_id": pid, "seq": k, "consent_seq": k,
                "token_hash": f"tok{k}", "external_id_hash": f"ext{k}", "session_hash": f"ses{k}",
                "source": "web", "arm": "a", "status": "complete", "step": 2,
                "state_json": "{}", "completion_code": f"CODE{k}", "created_at": AT,
                "updated_at": AT}])
            tx.insert("tokens", [{"token_hash": f"tok{k}", "study_id": "s", "participant_id": pid,
                                  "issued_at": AT, "via": "start"}])
            tx.insert("plans", [{"study_id": "s", "participant_id": pid, "plan_id": "x",
                                 "arm": "a", "position": 0, "created_at": AT}])
            tx.insert("ratings", [{"study_id": "s", "participant_id": pid, "plan_id": "x",
                                   "acceptance": 4, "action": 5, "acceptance_why": reason,
                                   "action_why": reason[::-1], "answered_at": AT}])
            answer = {"acceptance": 4, "action": 5, "acceptance_why": reason,
                      "action_why": reason[::-1], "impossible": {}}
            tx.insert("responses", [{"study_id": "s", "participant_id": pid, "page_id": "plan-1",
                                     "kind": "plan", "step": 1, "answer_json": json.dumps(answer),
                                     "answered_at": AT}])
            tx.insert("events", [
                {"study_id": "s", "participant_id": pid, "event": "recruitment",
                 "detail_json": json.dumps({"outcome": "started", "hashes": {"S": f"h{k}"}}),
                 "occurred_at": AT},
                {"study_id": "s", "participant_id": pid, "event": "plans",
                 "detail_json": json.dumps({"n": 1}), "occurred_at": AT}])


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "study.duckdb"
    with Store(path) as store:
        _study(store)
    return path


def _cells(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_csv_neutralizes_formulas_parquet_and_store_keep_the_text(db, tmp_path) -> None:
    with Store(db, read_only=True) as store:
        export(store, tmp_path / "csv", "csv", free_text=True)
        export(store, tmp_path / "pq", "parquet", free_text=True)
        stored = store.table("ratings").sort_values("participant_id")
        # the same table written raw, as a check that formula_cells finds what it should
        (tmp_path / "raw").mkdir()
        shutil.copy(tmp_path / "csv" / "codebook.json", tmp_path / "raw")
        store.cursor().execute(f"COPY ratings TO '{tmp_path / 'raw' / 'ratings.csv'}' "
                               "(FORMAT csv, HEADER true)")
    assert stored["acceptance_why"].tolist() == REASONS  # the store keeps what was typed
    assert formula_cells(tmp_path / "csv") == []  # no text cell of any file starts a formula
    raw = {v for _, c, v in formula_cells(tmp_path / "raw") if c == "acceptance_why"}
    assert raw == {r for r in REASONS if r.startswith(TRIGGERS)}
    cells = _cells(tmp_path / "csv" / "ratings.csv")
    rows, acc = {r[1]: r for r in cells[1:]}, cells[0].index("acceptance_why")
    assert rows["p00"][acc] == "'" + REASONS[0] and rows["p03"][acc] == "'@SUM(A1:A9)"
    assert rows["p06"][acc] == "''=already quoted"  # an apostrophe of its own is kept apart
    assert rows["p07"][acc] == REASONS[7] and rows["p08"][acc] == REASONS[8]
    # Parquet keeps the exact text; the CSV reads back exactly too.
    parquet = pq.read_table(tmp_path / "pq" / "ratings.parquet").to_pandas()
    assert parquet.sort_values("participant_id")["acceptance_why"].tolist() == REASONS
    back = load_export(tmp_path / "csv")["ratings"].sort_values("participant_id")
    assert back["acceptance_why"].fillna("").tolist() == REASONS
    assert back["action_why"].fillna("").tolist() == [r[::-1] for r in REASONS]
    answers = load_export(tmp_path / "csv")["responses"].sort_values("participant_id")
    assert [json.loads(a)["acceptance_why"] for a in answers["answer_json"]] == REASONS


@pytest.mark.skipif(shutil.which("soffice") is None, reason="needs LibreOffice (soffice)")
def test_a_spreadsheet_opens_the_csv_as_text(db, tmp_path) -> None:
    """LibreOffice Calc converts the exported CSV: no cell becomes a formula, while the raw
    text would ("=..." is a formula to it; Excel also runs "+", "-" and "@")."""
    with Store(db, read_only=True) as store:
        export(store, tmp_path / "csv", "csv", free_text=True)
    raw = tmp_path / "raw.csv"
    raw.write_text("reason\n" + "\n".join(f'"{r}"' for r in REASONS[:4]) + "\n")
    formulas = _spreadsheet_formulas(tmp_path, tmp_path / "csv" / "ratings.csv", raw)
    assert formulas["ratings"] == []
    assert formulas["raw"]  # the control: LibreOffice does run the unprotected text


def _spreadsheet_formulas(tmp_path: Path, *csvs: Path) -> dict[str, list[str]]:
    """The formulas LibreOffice makes of each CSV (converted to xlsx), by file stem."""
    out = tmp_path / "xlsx"
    subprocess.run(["soffice", "--headless", "--norestore", f"-env:UserInstallation=file://"
                    f"{tmp_path / 'lo-profile'}", "--convert-to", "xlsx", "--outdir", str(out),
                    *map(str, csvs)], check=True, capture_output=True, timeout=180)
    found = {}
    for path in csvs:
        with zipfile.ZipFile(out / f"{path.stem}.xlsx") as z:
            sheet = z.read("xl/worksheets/sheet1.xml").decode()
        found[path.stem] = re.findall(r"<f[^>]*>(.*?)</f>", sheet)
    return found


def test_free_text_and_linkage_only_on_request(db, tmp_path) -> None:
    with Store(db, read_only=True) as store:
        manifest = export(store, tmp_path / "default", "csv")
        full = export(store, tmp_path / "full", "parquet", free_text=True, linkage=True)
    assert manifest["free_text"] is False and manifest["linkage"] is False
    assert set(manifest["withheld"]["ratings"]) == {"acceptance_why", "action_why"}
    assert {"external_id_hash", "completion_code", "session_hash", "token_hash"} <= set(
        manifest["withheld"]["participants"])
    everything = " ".join(p.read_text(encoding="utf-8") for p in (tmp_path / "default").iterdir()
                          if p.suffix == ".csv" and p.name != "codebook.csv")
    for secret in ("HYPERLINK", "SUM(A1", "plain reason", "CODE1", "ext1", "ses1", "tok1",
                   '"h1"'):
        assert secret not in everything, secret
    got = load_export(tmp_path / "default")
    assert "acceptance_why" not in got["ratings"] and "completion_code" not in got["participants"]
    answer = json.loads(got["responses"]["answer_json"].iloc[0])
    assert answer == {"acceptance": 4, "action": 5, "impossible": {}}  # reasons removed
    events = got["events"]
    assert events.loc[events["event"] == "recruitment", "detail_json"].isna().all()
    assert events.loc[events["event"] == "plans", "detail_json"].notna().all()
    both = load_export(tmp_path / "full")
    assert both["participants"]["completion_code"].notna().all()
    assert "tokens" not in full["tables"] and "token_hash" not in both["participants"]


def test_codebook_lists_every_event_kind(db, tmp_path) -> None:
    with Store(db, read_only=True) as store:
        export(store, tmp_path / "out", "csv")
    book = pd.read_csv(tmp_path / "out" / "codebook.csv")
    meaning = book.loc[(book["table"] == "events") & (book["column"] == "event"),
                       "meaning"].iloc[0]
    for kind in ("start", "recruitment", "id_refused", "token_issued", "assigned", "answer",
                 "plans", "complete", "declined", "screened_out", "approved", "imported"):
        assert f"{kind} = " in meaning and kind in EVENT_KINDS
    with pytest.raises(ValueError, match="EVENT_KINDS"):
        check_event_kind("made_up")


def test_coding_sheet_has_one_row_per_reason_and_empty_code_columns(db, tmp_path) -> None:
    """One row per non-empty reason (acceptance and action separately), with the rating it
    explains, the plan's distances and empty code columns; formulas neutralized; free text
    only on request."""
    from data.export import CODE_COLUMNS

    with Store(db) as store, store.transaction() as tx:
        tx.execute("UPDATE plans SET l0_actions = 2, l1_actions = 0.5 WHERE participant_id "
                   "= 'p07'")
    with Store(db, read_only=True) as store:
        with pytest.raises(ValueError, match="free text"):
            export(store, tmp_path / "no", "csv", coding=True)
        manifest = export(store, tmp_path / "csv", "parquet", free_text=True, coding=True)
    sheet = pd.read_csv(tmp_path / "csv" / "coding_sheet.csv", keep_default_na=False)
    reasons = [r for r in REASONS if r.strip()]
    assert manifest["coding_sheet"] == {"file": "coding_sheet.csv", "rows": 2 * len(reasons),
                                        "code_columns": list(CODE_COLUMNS)}
    assert len(sheet) == 2 * len(reasons) and set(sheet["question"]) == {"acceptance", "action"}
    assert list(sheet.columns[-len(CODE_COLUMNS):]) == list(CODE_COLUMNS)
    assert (sheet[list(CODE_COLUMNS)] == "").all().all()
    row = sheet[(sheet["participant_id"] == "p07") & (sheet["question"] == "action")].iloc[0]
    assert row["reason"] == REASONS[7][::-1] and row["rating"] == 5 and row["acceptance"] == 4
    assert (float(row["l0_actions"]), float(row["l1_actions"])) == (2.0, 0.5)
    first = sheet[(sheet["participant_id"] == "p00") & (sheet["question"] == "acceptance")]
    assert first["reason"].iloc[0] == "'" + REASONS[0]  # a formula is shown as text
    assert "coding_sheet.csv" in manifest["files"]
