"""The ``tabular`` world of a scenario file: a real data set read as it is, with or without a
causal graph (engine.scenarios.tabular builds it; reference: docs/scenarios.md).

::

    world:
      kind: tabular
      data: data/real/adult.csv          # the raw file (relative to the scenario file), or
      # dataset: gmsc                    # a fetched data set (engine.scenarios.fetched)
      label: income-per-year             # its label column
      favourable: [">50K"]               # label values of the favourable outcome
      unfavourable: ["<=50K"]            # ... and of the unfavourable one (others: an error)
      missing: ["?"]                     # cells meaning "unknown": such rows are dropped
      rows:                              # keep only rows whose column passes (all must)
        days_b_screening_arrest: {min: -30, max: 30}   # numeric, bounds included
        c_charge_degree: {exclude: [O]}  # values whose rows are dropped
      columns:                           # how a feature is read (default: its own column)
        education_num: {column: education-num}
        sex: {column: sex, one: [Male]}  # binary one-vs-rest: these values -> levels[1]
        race: {map: {White: white, Black: other}}   # raw value -> level label
        debt_ratio: {column: DebtRatio, cap: 1}      # continuous: values above 1 read as 1
        late_90: {replace: {96: 18, 98: 18}}         # continuous: raw codes read as numbers
      scaling: minmax                    # continuous features scaled to [0, 1]
      classifier: ann                    # the decision model studies use: ann | lr

``one`` binarizes one category against the rest (CARLA's data sets); ``map`` names a level
for each raw value (any other value is an error); without either, raw values must be the
level labels (or numbers). ``replace`` then ``cap`` apply before scaling. ``scaling: minmax``
sets continuous display maps from the kept rows ((v - min) / (max - min)); the file gives
only units, decimals, plan bounds, codes and ``converted_from``. ``graph``: TabularWorld.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from engine.scenarios.fetched import DATASETS
from engine.scenarios.schema_base import (
    CausalGraph,
    Problems,
    Strict,
    check_split,
    labels_as_text,
)


class ColumnSpec(Strict):
    """How one feature is read from the raw table (module docstring)."""

    column: str | None = None  # the raw column; default: the feature's name
    one: list[str] | None = None  # binary: raw values read as levels[1]; the rest levels[0]
    map: dict[str, str] | None = None  # raw value -> level label
    replace: dict[str, float] | None = None  # continuous: raw value -> the number read
    cap: float | None = None  # continuous: values above it are read as it

    @field_validator("one", mode="before")
    @classmethod
    def _one_as_text(cls, v: Any) -> Any:
        return labels_as_text(v)

    @field_validator("replace", mode="before")
    @classmethod
    def _replace_keys_as_text(cls, v: Any) -> Any:
        return {str(k): x for k, x in v.items()} if isinstance(v, dict) else v

    @field_validator("map", mode="before")
    @classmethod
    def _map_as_text(cls, v: Any) -> Any:
        if not isinstance(v, dict):
            return v
        return {str(k): (str(x) if isinstance(x, (int, float)) else x) for k, x in v.items()}


class RowFilter(Strict):
    """Which rows of the raw table a world keeps, by one column (module docstring): its
    numeric value within [min, max] (either bound may be left out) and not one of
    ``exclude``."""

    min: float | None = None
    max: float | None = None
    exclude: list[str] = Field(default_factory=list)

    @field_validator("exclude", mode="before")
    @classmethod
    def _exclude_as_text(cls, v: Any) -> Any:
        return labels_as_text(v)


class TabularWorld(CausalGraph):
    """A real data set, read as the module docstring says.

    Without ``graph`` the world has no causal model (engine.scenarios.tabular_model is its
    world model; the HARE paper's setting). With a ``graph`` (edges ``parent -> child``,
    checked as a data world's are) the kept rows are a data world's samples: its world model
    is the causal flow learned from them and its decision model the data world's, trained on
    the labels (the iCARMA paper's setting: a real data set with the graph the paper states).
    ``unfavourable_weight`` w trains that decision model cost-sensitively (an unfavourable
    row's loss weighted by w: engine.decision.DecisionConfig), so that on a data set with few
    unfavourable rows it rejects about as often as the data does.
    """

    kind: Literal["tabular"]
    data: str | None = Field(None, min_length=1)
    dataset: str | None = Field(None, min_length=1)
    label: str = Field(min_length=1)
    favourable: list[str] = Field(min_length=1)
    unfavourable: list[str] = Field(min_length=1)
    missing: list[str] = Field(default_factory=list)
    columns: dict[str, ColumnSpec] = Field(default_factory=dict)
    rows: dict[str, RowFilter] = Field(default_factory=dict)
    split: tuple[float, float, float] = (0.5, 0.25, 0.25)
    scaling: Literal["minmax", "none"] = "minmax"
    classifier: Literal["ann", "lr"] = "ann"
    unfavourable_weight: float = Field(1.0, gt=0)

    @field_validator("favourable", "unfavourable", "missing", mode="before")
    @classmethod
    def _values_as_text(cls, v: Any) -> Any:
        return labels_as_text(v)

    @field_validator("split")
    @classmethod
    def _sums_to_one(cls, split: tuple[float, float, float]) -> tuple[float, float, float]:
        return check_split(split)

    @model_validator(mode="after")
    def _one_source(self) -> TabularWorld:
        if (self.data is None) == (self.dataset is None):
            raise ValueError("give the raw file as data or a fetched data set as dataset "
                             "(exactly one)")
        if self.dataset is not None:
            if self.dataset not in DATASETS:
                raise ValueError(f"dataset {self.dataset!r} is not a fetched data set "
                                 f"(known: {', '.join(DATASETS)})")
        return self

    def column_of(self, feature: str) -> str:
        """The raw column a feature is read from."""
        spec = self.columns.get(feature)
        return spec.column if spec is not None and spec.column else feature


def tabular_problems(world: TabularWorld, features: list[Any]) -> Problems:
    """Checks across the world and the features (each at its path in the file)."""
    problems: Problems = []
    by_name = {f.name: (i, f) for i, f in enumerate(features)}
    for name, spec in world.columns.items():
        where = ("world", "columns", name)
        if name not in by_name:
            problems.append((where, f"{name!r} is not a feature of this scenario"))
            continue
        i, f = by_name[name]
        if spec.one is not None and spec.map is not None:
            problems.append((where, "give one or map, not both"))
        if spec.one is not None and f.kind != "binary":
            problems.append(((*where, "one"), f"one-vs-rest reading is for binary features; "
                             f"{name!r} is {f.kind}"))
        if (spec.replace is not None or spec.cap is not None) and f.kind != "continuous":
            problems.append((where, f"replace and cap are for continuous features; {name!r} "
                             f"is {f.kind}"))
        if spec.map is not None:
            if f.kind == "continuous":
                problems.append(((*where, "map"), f"{name!r} is continuous: it is read as a "
                                 "number, not mapped to levels"))
            else:
                for raw, level in spec.map.items():
                    if level not in (f.levels or []):
                        problems.append(((*where, "map", raw), f"{level!r} is not one of the "
                                         f"levels of {name!r} ({', '.join(f.levels or [])})"))
    for column, keep in world.rows.items():
        if keep.min is not None and keep.max is not None and keep.min > keep.max:
            problems.append((("world", "rows", column), f"min {keep.min:g} is above max "
                             f"{keep.max:g}: no row would be kept"))
    overlap = sorted(set(world.favourable) & set(world.unfavourable))
    if overlap:
        problems.append((("world", "unfavourable"), f"{', '.join(overlap)} also listed as "
                         "favourable"))
    if world.unfavourable_weight != 1.0 and not world.graph:
        problems.append((("world", "unfavourable_weight"), "weights the decision model of a "
                         "world with a causal graph; without a graph the world's classifiers "
                         "are the HARE paper's (lr, ann), trained unweighted"))
    if world.label in by_name:
        problems.append((("world", "label"), f"the label column {world.label!r} is also a "
                         "feature"))
    if world.scaling == "minmax":
        for i, f in enumerate(features):
            d = f.display
            if f.kind == "continuous" and d is not None and (
                    d.map != "affine" or d.scale != 1.0 or d.offset != 0.0):
                problems.append((("features", i, "display"), "minmax scaling sets the display "
                                 "map from the data: give only unit, decimals, min, max, codes and "
                                 "converted_from"))
    return problems
