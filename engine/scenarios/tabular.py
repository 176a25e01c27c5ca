"""A ``tabular`` world from its raw data file (engine.scenarios.tabular_schema states the format).

``build_tabular`` reads the file as it is and turns it into a ``Scenario``:

0. the raw file is ``data`` (relative to the scenario file) or the fetched data set
   ``dataset`` (engine.scenarios.fetched: checked against its checksum; absent or damaged,
   DatasetMissingError names the command that fetches it);
1. every feature's column (``columns.<f>.column``, default its name) and the label column must
   exist; a missing one is an error naming the feature (and its role: a feature listed as
   immutable that is not in the data is reported as such);
2. rows holding a ``missing`` value in a column the scenario reads are dropped, and so are
   rows outside ``rows`` (a column's numeric bounds, its excluded values: a data set's
   published selection of cases); both counted in the data description;
3. labels: the ``favourable`` values are 1, the ``unfavourable`` ones 0, any other value is
   an error naming its rows;
4. level features are read one-vs-rest (``one``), through ``map``, or as their labels;
   continuous ones as numbers, a raw value listed in ``replace`` as its replacement and a
   value above ``cap`` as the cap;
5. ``scaling: minmax``: a continuous feature's model value is (v - min) / (max - min) over
   the kept rows, so every continuous feature spans [0, 1] (its display map is set to
   display = min + (max - min) x, and its distance range M_i to 1);
6. the rows are shuffled once (seed 0) and split train / validation / test; a category of a
   level feature that occurs in the validation or test split but never in the training split
   is an error (a classifier trained on the split has never seen it).

Without a ``graph`` the world has no causal model: engine.scenarios.tabular_model is its
world model. With one, the Scenario is a data world (``world_kind`` ``data``, the graph as
parent indices per feature): its world model is the causal flow learned from the rows
(engine.flow_scm) and its decision model the one trained on their labels.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from engine.scenarios.base import DisplayMap, FeatureSpec, Scenario
from engine.scenarios.fetched import dataset_path
from engine.scenarios.graph import parent_indices
from engine.scenarios.samples import TableSamples
from engine.scenarios.tables import TableError, read_csv, to_model_units
from engine.scenarios.tabular_schema import TabularWorld


class TabularProblems(Exception):
    """Located problems of a tabular world: (path in the file, message) pairs."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{p}: {m}" for p, m in problems))
        self.problems = problems


def build_tabular(world: TabularWorld, common: dict[str, Any], path: Path) -> Scenario:
    """The Scenario of a tabular world (module docstring); TabularProblems on bad input."""
    features: tuple[FeatureSpec, ...] = common["features"]
    data_file = (dataset_path(world.dataset) if world.dataset
                 else (path.parent / str(world.data)).resolve())
    file = data_file.name
    try:
        raw = read_csv(data_file)
    except TableError as e:
        raise TabularProblems([("world.data", m) for m in e.problems]) from None
    raw = raw.rename(columns=lambda c: str(c).strip())
    _check_columns(world, features, raw, file)
    used = [world.column_of(f.name) for f in features] + [world.label]
    keep = ~raw[used].isin(world.missing).any(axis=1).to_numpy() if world.missing else \
        np.ones(len(raw), dtype=bool)
    selected = _selected_rows(world, raw, file)
    raw = raw[keep & selected].reset_index(drop=True)
    y = _labels(world, raw[world.label].astype(str).str.strip(), file)
    table = pd.DataFrame({f.name: _read_feature(world, f, raw, file) for f in features})
    if world.scaling == "minmax":
        features = tuple(_minmax(f, table[f.name], file) for f in features)
    try:
        x = to_model_units(table, features)
    except TableError as e:
        raise TabularProblems([("world.data", f"{file}: {m}") for m in e.problems]) from None
    dropped = int((~keep).sum())
    outside = int((keep & ~selected).sum())
    source = file + "".join(f" ({n:,} rows {why} dropped)" for n, why in (
        (outside, "outside the world's row selection"), (dropped, "with missing values"))
        if n)
    samples = TableSamples(torch.from_numpy(x), torch.from_numpy(y), source, split=world.split)
    _check_unseen(samples, features, file)
    extras = {"rows_dropped": dropped, "rows_not_selected": outside}
    if world.graph:
        return Scenario(**{**common, "features": features}, scm=None, samples=samples,
                        world_kind="data", graph=parent_indices(world.edges(), features),
                        extras={**extras, "unfavourable_weight": world.unfavourable_weight})
    return Scenario(**{**common, "features": features}, scm=None, samples=samples,
                    world_kind="tabular", extras={"classifier": world.classifier, **extras})



def _check_columns(world: TabularWorld, features: tuple[FeatureSpec, ...], raw: pd.DataFrame,
                   file: str) -> None:
    problems: list[tuple[str, str]] = []
    have = list(raw.columns)
    listed = ", ".join(have)
    for column in world.rows:
        if column not in have:
            problems.append((f"world.rows.{column}", f"{file} has no column {column!r} to "
                             f"select rows by (columns: {listed})"))
    if world.label not in have:
        problems.append(("world.label", f"{file} has no label column {world.label!r} "
                         f"(columns: {listed})"))
    for i, f in enumerate(features):
        column = world.column_of(f.name)
        if column not in have:
            what = f"the {f.role.value} feature {f.name!r}"
            problems.append((f"features[{i}]", f"{what} is read from column {column!r}, which "
                             f"{file} does not have (columns: {listed}); name its column "
                             f"in world.columns.{f.name}.column"))
    if problems:
        raise TabularProblems(problems)


def _selected_rows(world: TabularWorld, raw: pd.DataFrame, file: str) -> np.ndarray:
    """Bool per raw row: inside every ``rows`` filter (a column's bounds, not excluded)."""
    keep = np.ones(len(raw), dtype=bool)
    for column, spec in world.rows.items():
        col = raw[column]
        if spec.exclude:
            keep &= ~col.astype(str).str.strip().isin(spec.exclude).to_numpy()
        if spec.min is None and spec.max is None:
            continue
        v = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
        if not np.isfinite(v).any():
            raise TabularProblems([(f"world.rows.{column}", f"{file}, column {column!r} has "
                                    "no numbers to compare with min / max")])
        inside = np.isfinite(v)
        if spec.min is not None:
            inside &= v >= spec.min
        if spec.max is not None:
            inside &= v <= spec.max
        keep &= inside
    return keep


def _labels(world: TabularWorld, col: pd.Series, file: str) -> np.ndarray:
    good, bad = col.isin(world.favourable), col.isin(world.unfavourable)
    unknown = ~(good | bad)
    if unknown.any():
        values = sorted(set(col[unknown]))
        raise TabularProblems([("world.label", f"{file}, column {world.label!r}: value(s) "
                                f"{', '.join(map(repr, values[:8]))} in {int(unknown.sum())} "
                                "row(s) are neither favourable "
                                f"({', '.join(world.favourable)}) nor unfavourable "
                                f"({', '.join(world.unfavourable)}); list them (or under "
                                "missing)")])
    return good.to_numpy(dtype=float)


def _read_feature(world: TabularWorld, f: FeatureSpec, raw: pd.DataFrame, file: str) -> pd.Series:
    """The feature's column in display units (level labels or numbers as text)."""
    column = world.column_of(f.name)
    col = raw[column].astype(str).str.strip()
    spec = world.columns.get(f.name)
    if spec is not None and spec.one is not None:
        return pd.Series(np.where(col.isin(spec.one), f.levels[1], f.levels[0]))
    if spec is not None and spec.map is not None:
        out = col.map(spec.map)
        unmapped = sorted(set(col[out.isna()]))
        if unmapped:
            raise TabularProblems([(f"world.columns.{f.name}.map", f"{file}, column "
                                    f"{column!r}: value(s) {', '.join(map(repr, unmapped[:8]))} "
                                    "have no level; map them (or list them under missing)")])
        return out
    if spec is not None and (spec.replace is not None or spec.cap is not None):
        return _numbers(spec.replace or {}, spec.cap, col, column, file)
    return col


def _numbers(replace: dict[str, float], cap: float | None, col: pd.Series, column: str,
             file: str) -> pd.Series:
    """A continuous column's numbers after ``replace`` (raw value -> number), then ``cap``
    (v -> min(v, cap)); as text, as every feature column is until to_model_units."""
    v = pd.to_numeric(col.map(lambda c: replace.get(c, c)), errors="coerce")
    bad = sorted(set(col[v.isna()]))
    if bad:
        raise TabularProblems([("world.data", f"{file}, column {column!r}: value(s) "
                                f"{', '.join(map(repr, bad[:8]))} are not numbers; list them "
                                "under missing (or in replace)")])
    if cap is not None:
        v = v.clip(upper=cap)
    return v.astype(str)


def _minmax(f: FeatureSpec, col: pd.Series, file: str) -> FeatureSpec:
    """A continuous feature with model units (v - min) / (max - min) (module docstring)."""
    if f.levels:
        return f
    v = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
    v = v[np.isfinite(v)]
    if len(v) == 0 or v.max() <= v.min():
        raise TabularProblems([("world.scaling", f"{file}: feature {f.name!r} has no spread "
                                "to scale (a constant or non-numeric column)")])
    lo, hi = float(v.min()), float(v.max())
    d = f.display
    display = DisplayMap("affine", d.unit, scale=hi - lo, offset=lo, decimals=d.decimals,
                         codes=d.codes, per_data_unit=d.per_data_unit)
    return replace(f, display=display, range=f.range or (0.0, 1.0))


def _check_unseen(samples: TableSamples, features: tuple[FeatureSpec, ...], file: str) -> None:
    splits = samples.load(None, "threshold")["decision"]  # type: ignore[arg-type]
    train = splits["train"][0]
    problems: list[tuple[str, str]] = []
    for j, f in enumerate(features):
        if not f.levels:
            continue
        seen = set(train[:, j].round().long().tolist())
        for split in ("validation", "test"):
            codes = splits[split][0][:, j].round().long()
            for code in sorted(set(codes.tolist()) - seen):
                n = int((codes == code).sum())
                problems.append((f"features[{j}]", f"{file}: category {f.levels[code]!r} of "
                                 f"{f.name!r} occurs in {n} row(s) of the {split} split but "
                                 "never in the training split, so no classifier trained on "
                                 "it has seen it; merge it into another level (world.columns."
                                 f"{f.name}.map) or list it under missing"))
    if problems:
        raise TabularProblems(problems)
