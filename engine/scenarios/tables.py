"""Tables of profiles (a pool, a data set) read against a scenario's features.

A table has one column per feature (any order; in display units: level features hold one of
their level labels, continuous features a number in the feature's display units) plus the
columns a world names (a data world's label). ``to_model_units`` checks the header (missing
and unknown columns) and every cell, and returns the (n, d) model-unit array in the
scenario's feature order; each problem names its row (1-based, as a spreadsheet counts data
rows), column and value. At most ``MAX_CELL_PROBLEMS`` cells are listed one by one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from engine.scenarios.base import FeatureSpec

MAX_CELL_PROBLEMS = 8


class TableError(ValueError):
    """Problems of one table, each a message naming its column / row."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def read_csv(path: Path) -> pd.DataFrame:
    """Every cell as text (the checks below parse them), empty cells as ''."""
    if not path.is_file():
        raise TableError([f"file {str(path)!r} does not exist"])
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise TableError([f"{path.name} is not a readable CSV table ({e})"]) from None


def check_columns(table: pd.DataFrame, features: Sequence[FeatureSpec],
                  extra: Sequence[str] = ()) -> None:
    """The columns must be exactly the features plus ``extra``."""
    names = [f.name for f in features]
    cols = [str(c).strip() for c in table.columns]
    problems = []
    dup = sorted({c for c in cols if cols.count(c) > 1})
    if dup:
        problems.append(f"column(s) listed twice: {', '.join(dup)}")
    missing = [n for n in [*names, *extra] if n not in cols]
    unknown = [c for c in cols if c not in names and c not in extra]
    if missing:
        problems.append(f"missing column(s) for feature(s) {', '.join(missing)}" if
                        all(m in names for m in missing) else
                        f"missing column(s) {', '.join(missing)}")
    if unknown:
        problems.append(f"column(s) {', '.join(unknown)} are not features of the scenario "
                        f"(features: {', '.join(names)})")
    if problems:
        raise TableError(problems)
    if len(table) == 0:
        raise TableError(["the table has no rows"])


def to_model_units(table: pd.DataFrame, features: Sequence[FeatureSpec]) -> np.ndarray:
    """(n, d) float64 in model units (module docstring); TableError lists bad cells."""
    table = table.rename(columns=lambda c: str(c).strip())
    out = np.empty((len(table), len(features)))
    problems: list[str] = []
    hidden = 0
    for j, f in enumerate(features):
        col = table[f.name].astype(str).str.strip()
        values, bad = _column(col, f)
        out[:, j] = values
        for row in np.flatnonzero(bad):
            if len(problems) < MAX_CELL_PROBLEMS:
                problems.append(f"row {row + 1}, column {f.name!r}: {_why(col.iloc[row], f)}")
            else:
                hidden += 1
    if hidden:
        problems.append(f"... and {hidden} more bad cell(s)")
    if problems:
        raise TableError(problems)
    return out


def _column(col: pd.Series, f: FeatureSpec) -> tuple[np.ndarray, np.ndarray]:
    """(model-unit values, bad-cell flags) of one column."""
    if f.levels:
        codes = col.map({label: k for k, label in enumerate(f.levels)})
        bad = codes.isna().to_numpy()
        return codes.fillna(0).to_numpy(dtype=float), bad
    num = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(num)
    if f.display.kind == "exp":
        bad |= ~(num > 0)
    safe = np.where(bad, 1.0, num)
    return np.asarray(f.display.from_data(safe), dtype=float), bad


def _why(value: str, f: FeatureSpec) -> str:
    if f.levels:
        return f"{value!r} is not one of its levels ({', '.join(f.levels)})"
    try:
        v = float(value)
    except ValueError:
        return f"{value!r} is not a number"
    if not math.isfinite(v):
        return f"{value!r} is not a finite number"
    return f"{value!r}: a value in {f.display.unit or 'its units'} must be positive"


def label_column(table: pd.DataFrame, column: str, favourable: str,
                 unfavourable: str) -> np.ndarray:
    """0/1 labels from a column of 0/1, true/false or the scenario's outcome labels."""
    col = table[column].astype(str).str.strip()
    ones = {"1", "1.0", "true", "True", favourable}
    zeros = {"0", "0.0", "false", "False", unfavourable}
    bad = ~(col.isin(ones) | col.isin(zeros))
    if bad.any():
        rows = np.flatnonzero(bad.to_numpy())
        raise TableError([f"row {r + 1}, column {column!r}: {col.iloc[r]!r} is not a label "
                          f"(1/0, true/false, {favourable}/{unfavourable})"
                          for r in rows[:MAX_CELL_PROBLEMS]])
    return col.isin(ones).to_numpy(dtype=float)
