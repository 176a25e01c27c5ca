"""Import ratings collected elsewhere so they can be analysed like a study run here.

The CSV is long: one row per rated plan, a header line naming the columns.

| column | required | meaning |
| --- | --- | --- |
| participant_id | yes | the participant (any non-empty text, unique within the study) |
| plan_id | yes | the plan (unique within a participant) |
| l0 | yes | sparsity: number of changed items (>= 0) |
| l1 | yes | proximity: sum of range-normalized changes (>= 0) |
| acceptance | yes | 7-point rating, integer 1..7 |
| action | yes | 7-point rating, integer 1..7 |
| satisfaction | no | stated-preference satisfaction in [0, 1] (empty: unknown) |
| violation | no | 0 or 1 (empty: unknown) |
| arm | no | condition / method name (empty: none) |
| impossible | no | 0 or 1: an item was marked impossible (empty or absent: 0) |

External plans do not separate actions from consequences, so ``l0``/``l1`` fill both the
``*_actions`` and the ``*_profile`` distance columns; ``method`` is ``imported`` and
``position`` the order of the participant's rows in the file. Rows land in a study with
``source = 'imported'`` (created if needed; an existing study must be an imported one) and
appear in ``ratings_long`` with source ``imported``.

All or nothing: every bad row is reported with its line number (the header is line 1) and
nothing is imported unless the whole file is good. A column outside the table above is a
problem too (never silently dropped); ``ignore_unknown=True`` imports the file without such
columns and names them in ``ImportResult.ignored_columns``.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from data.columns import EVENTS, PARTICIPANTS, PLANS, RATINGS, RATINGS_LONG, STUDIES
from data.store import Store

# The CSV's columns (module docstring): ratings_long's names (data.columns) for what another
# study can give, and l0 / l1, each filling a pair of the plans' distance columns.
REQUIRED = (*RATINGS_LONG.pick("participant_id", "plan_id"), "l0", "l1",
            *RATINGS_LONG.pick("acceptance", "action"))
OPTIONAL = RATINGS_LONG.pick("satisfaction", "violation", "arm", "impossible")


class ImportRowsError(ValueError):
    """The CSV has bad rows; ``problems`` lists (line, message); nothing was imported.
    ``unknown_columns``: header names outside the documented columns (if that was a problem).

    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from data import ImportRowsError, Store, import_ratings
    >>> folder = Path(tempfile.mkdtemp())
    >>> pd.DataFrame({"participant_id": ["p1"], "plan_id": ["a"], "l0": [1], "l1": [0.2],
    ...               "acceptance": [9], "action": [4]},   # 9 is not on a 7-point scale
    ...              ).to_csv(folder / "ratings.csv", index=False)
    >>> try:
    ...     import_ratings(Store(folder / "study.duckdb"), folder / "ratings.csv", "pilot")
    ... except ImportRowsError as e:
    ...     row, message = e.problems[0]
    ...     print(row, "acceptance" in message)
    2 True
    """

    def __init__(self, source: str, problems: list[tuple[int, str]],
                 unknown_columns: list[str] | None = None) -> None:
        self.problems = problems
        self.unknown_columns = unknown_columns or []
        shown = problems[:50]
        more = f"\n  ... and {len(problems) - 50} more" if len(problems) > 50 else ""
        lines = "\n".join(f"  line {n}: {msg}" for n, msg in shown)
        super().__init__(
            f"{source}: {len(problems)} problem(s); nothing was imported:\n{lines}{more}"
        )


@dataclass(frozen=True)
class ImportResult:
    study_id: str
    participants: int
    new_participants: int
    ratings: int
    ignored_columns: list[str]


def _number(text: str, name: str, lo: float | None = None, hi: float | None = None) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"{name}: {text!r} is not a number") from None
    if not math.isfinite(v):
        raise ValueError(f"{name}: must be finite, got {text!r}")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name}: {v:g} is outside {lo:g}..{hi if hi is not None else 'inf'}")
    return v


def _rating(text: str, name: str) -> int:
    v = _number(text, name, 1, 7)
    if v != int(v):
        raise ValueError(f"{name}: must be a whole number 1..7, got {text!r}")
    return int(v)


def _flag(text: str, name: str) -> float:
    if text not in ("0", "1", "0.0", "1.0"):
        raise ValueError(f"{name}: must be 0 or 1, got {text!r}")
    return float(text)


def unknown_columns(text: str) -> list[str]:
    """Header names of the CSV ``text`` outside the documented columns."""
    header = next(csv.reader(io.StringIO(text)), [])
    return [c for c in header if c not in REQUIRED + OPTIONAL]


def parse_rows(text: str, source: str,
               ignore_unknown: bool = False) -> list[tuple[int, dict[str, Any]]]:
    """(line, parsed row) of every row; ImportRowsError with every problem. Unknown
    columns are a problem unless ``ignore_unknown`` (then their cells are not read)."""
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    problems: list[tuple[int, str]] = []
    missing = [c for c in REQUIRED if c not in header]
    unknown = [c for c in header if c not in REQUIRED + OPTIONAL]
    if missing:
        problems.append((1, f"missing column(s): {', '.join(missing)}"))
    if unknown and not ignore_unknown:
        names = ", ".join(c if c.strip() else repr(c) for c in unknown)  # '' : a trailing comma
        problems.append((1, f"unknown column(s): {names}; expected "
                            f"{', '.join(REQUIRED + OPTIONAL)}"))
    if problems:
        raise ImportRowsError(source, problems, unknown if not ignore_unknown else None)
    rows: list[tuple[int, dict[str, Any]]] = []
    seen: dict[tuple[str, str], int] = {}
    line = 1
    for raw in reader:
        line = reader.line_num
        if None in raw or any(v is None for v in raw.values()):
            problems.append((line, f"expected {len(header)} fields"))
            continue
        cells = {k: (v or "").strip() for k, v in raw.items()}
        row: dict[str, Any] = {}
        errs: list[str] = []
        for key in ("participant_id", "plan_id"):
            if not cells[key]:
                errs.append(f"{key}: required")
            row[key] = cells[key]
        for key, parse in (("l0", lambda t, k: _number(t, k, 0)),
                           ("l1", lambda t, k: _number(t, k, 0)),
                           ("acceptance", _rating), ("action", _rating)):
            try:
                row[key] = parse(cells[key], key) if cells[key] else None
                if row[key] is None:
                    errs.append(f"{key}: required")
            except ValueError as e:
                errs.append(str(e))
        for key, parse in (("satisfaction", lambda t, k: _number(t, k, 0, 1)),
                           ("violation", _flag), ("impossible", _flag)):
            try:
                row[key] = parse(cells[key], key) if cells.get(key) else None
            except ValueError as e:
                errs.append(str(e))
        row["arm"] = cells.get("arm") or None
        ident = (row["participant_id"], row["plan_id"])
        if all(ident) and ident in seen:
            errs.append(f"participant {ident[0]!r} plan {ident[1]!r} repeats line {seen[ident]}")
        elif all(ident):
            seen[ident] = line
        if errs:
            problems += [(line, e) for e in errs]
        else:
            rows.append((line, row))
    if not problems and not rows:
        problems.append((max(line, 2), "no data rows"))
    if problems:
        raise ImportRowsError(source, problems)
    return rows


def import_ratings(store: Store, csv_path: str | Path, study_id: str, *,
                   ignore_unknown: bool = False) -> ImportResult:
    """Validate the whole file, then write it in one transaction (module docstring).

    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from data import Store, import_ratings
    >>> folder = Path(tempfile.mkdtemp())
    >>> pd.DataFrame({"participant_id": ["p1", "p1"], "plan_id": ["a", "b"], "l0": [1, 2],
    ...               "l1": [0.2, 0.6], "acceptance": [5, 3], "action": [4, 2]},
    ...              ).to_csv(folder / "ratings.csv", index=False)
    >>> store = Store(folder / "study.duckdb")
    >>> result = import_ratings(store, folder / "ratings.csv", study_id="pilot")
    >>> result.participants, result.ratings, list(store.ratings_long("pilot")["acceptance"])
    (1, 2, [5, 3])
    """
    path = Path(csv_path)
    if not study_id.strip():
        raise ValueError("study name must not be empty")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise ImportRowsError(str(path), [(0, f"cannot read the file: {e}")]) from None
    rows = parse_rows(text, str(path), ignore_unknown)
    ignored = unknown_columns(text) if ignore_unknown else []
    at = datetime.now(UTC).replace(tzinfo=None)
    with store.lock, store.transaction() as tx:
        study = tx.query("SELECT source FROM studies WHERE study_id = ?", [study_id])
        if study and study[0]["source"] != "imported":
            raise ImportRowsError(str(path), [(0, f"study {study_id!r} exists and was not "
                                                  "imported; choose another --study name")])
        existing = {r["participant_id"]: r for r in tx.query(
            "SELECT participant_id, seq FROM participants WHERE study_id = ?", [study_id])}
        stored = {(r["participant_id"], r["plan_id"]) for r in tx.query(
            "SELECT participant_id, plan_id FROM plans WHERE study_id = ?", [study_id])}
        clash = [(line, f"participant {r['participant_id']!r} plan {r['plan_id']!r} is "
                        f"already stored in study {study_id!r}")
                 for line, r in rows if (r["participant_id"], r["plan_id"]) in stored]
        if clash:
            raise ImportRowsError(str(path), clash)
        if not study:
            tx.insert(STUDIES.name, [STUDIES.row(
                study_id=study_id, protocol_id="imported", title=f"imported from {path.name}",
                source="imported", created_at=at)])
        next_seq = max((r["seq"] for r in existing.values()), default=-1) + 1
        positions = _positions(tx, study_id)
        participants, plans, ratings = [], [], []
        for _, r in rows:
            pid = r["participant_id"]
            if pid not in existing:
                existing[pid] = {"participant_id": pid, "seq": next_seq}
                participants.append(PARTICIPANTS.row(
                    study_id=study_id, participant_id=pid, seq=next_seq, source="imported",
                    arm=r["arm"], status="complete", step=0, state_json="{}", created_at=at,
                    updated_at=at))
                next_seq += 1
            pos = positions.get(pid, 0)
            positions[pid] = pos + 1
            plans.append(PLANS.row(
                study_id=study_id, participant_id=pid, plan_id=r["plan_id"], arm=r["arm"],
                method="imported", position=pos, selection="imported", l0_actions=r["l0"],
                l1_actions=r["l1"], l0_profile=r["l0"], l1_profile=r["l1"],
                satisfaction=r["satisfaction"], violation=r["violation"], created_at=at))
            ratings.append(RATINGS.row(
                study_id=study_id, participant_id=pid, plan_id=r["plan_id"],
                acceptance=r["acceptance"], action=r["action"],
                impossible=bool(r["impossible"]) if r["impossible"] is not None else False,
                impossible_json=json.dumps(None), answered_at=at))
        tx.insert(PARTICIPANTS.name, participants)
        tx.insert(PLANS.name, plans)
        tx.insert(RATINGS.name, ratings)
        tx.insert(EVENTS.name, [EVENTS.row(
            study_id=study_id, participant_id=p["participant_id"], event="imported",
            occurred_at=at) for p in participants])
    return ImportResult(study_id, len(existing), len(participants), len(ratings), ignored)


def _positions(tx: Any, study_id: str) -> dict[str, int]:
    """Next free position per participant already in the study."""
    return {r["participant_id"]: int(r["n"]) for r in tx.query(
        "SELECT participant_id, max(position) + 1 AS n FROM plans WHERE study_id = ? "
        "GROUP BY participant_id", [study_id])}
