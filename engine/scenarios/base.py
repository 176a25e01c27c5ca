"""What a scenario is: its features (with roles, bounds and display maps) and its world model.

A display map is a monotone, invertible transform from model units (abstract, possibly
negative) to the realistic units participants see (years, dollars, months, ...). Every
computation stays in model units; only pages convert.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from engine.metrics import changed_items
from engine.scenarios.pool_world import PoolWorld
from engine.scenarios.samples import (
    LABEL_RULES,
    ROLES,
    DataSource,
    SCMSamples,
    Splits,
)
from engine.scm import StructuralCausalModel


class Role(StrEnum):
    """How a feature may change: never, only as a consequence, or by a person's action."""

    IMMUTABLE = "immutable"
    MUTABLE = "mutable"  # changes only through its causes (not globally actionable)
    ACTIONABLE = "actionable"  # globally actionable


CURRENCY_SIGNS = ("$", "€", "£")  # units written before the amount ("$15,000", "€2,290")


@dataclass(frozen=True)
class DisplayMap:
    """Monotone increasing map model units <-> display units.

    ``kind`` is ``affine`` (display = offset + scale * x) or ``exp``
    (display = scale * exp(rate * x), for money and durations that must stay positive), or
    ``categorical`` (x is an integer code; ``categories`` names them).
    """

    kind: str
    unit: str
    scale: float = 1.0
    offset: float = 0.0
    rate: float = 1.0
    decimals: int = 0
    categories: tuple[str, ...] = ()
    codes: tuple[tuple[int, str], ...] = ()  # (whole number, its meaning) of a coded number
    per_data_unit: float = 1.0  # display units per unit of the data's tables (a conversion)

    def to_display(self, x: float | np.ndarray) -> float | np.ndarray:
        """Model units -> display units: the map in the data's units, times
        ``per_data_unit`` (a declared conversion; 1 for most features)."""
        if self.kind == "categorical":
            return np.asarray(x, dtype=float)
        data = self.to_data(x)
        return data if self.per_data_unit == 1.0 else self.per_data_unit * data

    def to_data(self, x: float | np.ndarray) -> float | np.ndarray:
        """Model units -> the data's units (display units before a conversion)."""
        if self.kind == "affine":
            return self.offset + self.scale * np.asarray(x, dtype=float)
        if self.kind == "exp":
            return self.scale * np.exp(self.rate * np.asarray(x, dtype=float))
        if self.kind == "categorical":
            return np.asarray(x, dtype=float)
        raise ValueError(f"unknown display map kind {self.kind!r}")

    def from_display(self, v: float | np.ndarray) -> float | np.ndarray:
        """Display units -> model units (``to_display``'s inverse)."""
        arr = np.asarray(v, dtype=float)
        if self.per_data_unit != 1.0 and self.kind != "categorical":
            arr = arr / self.per_data_unit
        return self.from_data(arr)

    def from_data(self, v: float | np.ndarray) -> float | np.ndarray:
        """The data's units (a table's values) -> model units."""
        arr = np.asarray(v, dtype=float)
        if not np.isfinite(arr).all():
            raise ValueError(f"display value must be finite, got {v!r}")
        if self.kind == "affine":
            return (arr - self.offset) / self.scale
        if self.kind == "exp":
            if (arr <= 0).any():
                raise ValueError(f"a value in {self.unit} must be positive, got {v!r}")
            return np.log(arr / self.scale) / self.rate
        if self.kind == "categorical":
            if not np.isin(arr, np.arange(len(self.categories))).all():
                raise ValueError(f"category code must be one of 0..{len(self.categories) - 1}")
            return arr
        raise ValueError(f"unknown display map kind {self.kind!r}")

    def format(self, x: float) -> str:
        """Human-readable display string of a model-unit value."""
        if self.kind == "categorical":
            return self.categories[int(round(x))]
        v = float(self.to_display(x))
        if self.unit in CURRENCY_SIGNS:
            return f"{self.unit}{v:,.{self.decimals}f}"
        return f"{v:,.{self.decimals}f} {self.unit}".strip() + self.meaning(v)

    def meaning(self, v: float) -> str:
        """" (its meaning)" of a display value that is a code with one, else ""."""
        found = dict(self.codes).get(int(round(v)))
        return f" ({found})" if found is not None else ""


@dataclass(frozen=True)
class FeatureSpec:
    """One feature: name, label for people, role, display map, allowed direction of change.

    ``direction`` is +1 (may only increase), -1 (only decrease) or 0 (either) and is used by
    methods that restrict changes the way the reference user study did. ``kind`` is binary,
    ordinal, categorical or continuous (engine.scenarios.schema); ``discrete`` features
    (binary, categorical) count any change fully in L1, ordinal ones by levels. ``range``
    (model units) is the M_i of the distances when the scenario file states it (None: the
    training split's max - min).
    ``display_min``/``display_max`` (display units) bound the values a plan may show a
    person (a loan of at least $1,000); None: the training split's 0.1% / 99.9% quantile
    (``Scenario.display_bounds``).
    ``in_plan``: shown as a row of a plan (False: a condition of the decision that a plan
    does not ask to change, e.g. the reference study's income and loan).
    ``derived_from``: (feature, factor): not entered by a participant but set to factor x
    that feature's model-unit value when a profile is entered (the reference study's loan,
    one third of the entered income).
    ``max_change``: (relative, absolute) display-unit limit on how far one plan may move it
    (engine.recourse.plan_bounds); None: that module's default; (None, None): no limit.

    >>> from engine import get_scenario
    >>> income = get_scenario("loan").features[5]
    >>> income.name, income.role.value, income.display.unit
    ('income', 'actionable', '$')
    >>> income.display.format(0.0)        # model units -> what a participant reads
    '$40,000'
    """

    name: str
    label: str
    role: Role
    display: DisplayMap
    help: str = ""
    direction: int = 0
    discrete: bool = False
    display_min: float | None = None
    display_max: float | None = None
    kind: str = "continuous"
    range: tuple[float, float] | None = None
    in_plan: bool = True
    derived_from: tuple[str, float] | None = None
    max_change: tuple[float | None, float | None] | None = None

    @property
    def levels(self) -> tuple[str, ...]:
        """Level labels of a binary / ordinal / categorical feature (codes 0..k-1)."""
        return self.display.categories if self.display.kind == "categorical" else ()

    @property
    def resolution(self) -> float:
        """The smallest change a person sees, in display units (one category, or one unit
        of the last shown decimal)."""
        return 1.0 if self.display.kind == "categorical" else 10.0 ** -self.display.decimals


@dataclass
class Scenario:
    """A scenario: features in column order, its world, and where its data come from.

    ``world_kind`` is ``equations`` (``scm`` is the exact SCM), ``pool`` (``pool`` holds the
    profiles and the fixed decision rule; no SCM) or ``data`` (no exact SCM: ``graph`` holds
    the causal parents, the world model is the causal flow learned from the samples, and
    ``truth`` may name the scenario whose exact SCM, ``truth_scm``, made the data).
    ``source`` is the scenario file.

    ``samples`` is the data source and ``label_rule`` how labels are made from the SCM
    (engine.scenarios.samples: ``threshold`` by default, ``bernoulli`` as a named option;
    published samples carry their own labels). ``bounds`` are the model-unit (min, max) per
    feature over the recourse role's training split; every split is deterministic, so every
    process agrees on them without any trained artifact.

    >>> from engine import get_scenario
    >>> loan = get_scenario("loan")
    >>> loan.world_kind, loan.d, [loan.feature_names[j] for j in loan.actionable]
    ('equations', 7, ['loan_amount', 'loan_duration', 'income', 'savings'])
    >>> {k: tuple(v[0].shape) for k, v in loan.dataset.items()}
    {'train': (10000, 7), 'validation': (5000, 7), 'test': (5000, 7)}
    """

    name: str
    title: str  # participants read it
    features: tuple[FeatureSpec, ...]
    scm: StructuralCausalModel | None
    samples: DataSource = field(default_factory=SCMSamples)
    label_rule: str = "threshold"
    story: str = ""
    favourable_label: str = "approved"
    unfavourable_label: str = "rejected"
    extras: dict = field(default_factory=dict)
    world_kind: str = "equations"
    graph: dict[int, tuple[int, ...]] | None = None
    pool: PoolWorld | None = None
    truth: str | None = None
    truth_scm: StructuralCausalModel | None = None
    source: Path | None = None
    about: str = ""  # for researchers only: the data set and what it stands for
    # {feature: (min, max)} display values a persona may have (None: no limit on that side)
    persona_limits: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.label_rule not in LABEL_RULES:
            raise ValueError(
                f"scenario {self.name!r}: unknown label rule {self.label_rule!r}; expected one "
                f"of {', '.join(LABEL_RULES)}"
            )

    @property
    def feature_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.features)

    @property
    def parents(self) -> dict[int, tuple[int, ...]]:
        """Causal parents per feature index: the SCM's, else the file's graph (a pool world
        has none: its features are taken as independent)."""
        if self.scm is not None:
            return dict(self.scm.parents)
        return dict(self.graph or {})

    def adjacency(self) -> Tensor:
        """Boolean (d, d): A[i, j] iff x_j is a parent of x_i (or i == j)."""
        a = torch.eye(self.d, dtype=torch.bool)
        for i, pa in self.parents.items():
            a[i, list(pa)] = True
        return a

    @property
    def exact_scm(self) -> StructuralCausalModel | None:
        """The exact SCM: the world's own, else (a data world) the SCM of the ``truth``
        scenario that made the data, else None."""
        return self.scm if self.scm is not None else self.truth_scm

    def require_scm(self, what: str) -> StructuralCausalModel:
        """The exact SCM, or a ValueError saying that ``what`` needs one."""
        if self.scm is None:
            raise ValueError(f"{what} needs an exact SCM; scenario {self.name!r} is a "
                             f"{self.world_kind} world")
        return self.scm

    @property
    def d(self) -> int:
        return len(self.features)

    def index(self, name: str) -> int:
        try:
            return self.feature_names.index(name)
        except ValueError:
            raise KeyError(
                f"unknown feature {name!r} for scenario {self.name!r}; expected one of "
                f"{', '.join(self.feature_names)}"
            ) from None

    @property
    def actionable(self) -> tuple[int, ...]:
        """Indices of the globally actionable features."""
        return tuple(i for i, f in enumerate(self.features) if f.role is Role.ACTIONABLE)

    @property
    def immutable(self) -> tuple[int, ...]:
        return tuple(i for i, f in enumerate(self.features) if f.role is Role.IMMUTABLE)

    def actionable_mask(self) -> Tensor:
        """Boolean (d,) mask of the globally actionable features."""
        m = torch.zeros(self.d, dtype=torch.bool)
        m[list(self.actionable)] = True
        return m

    @cached_property
    def datasets(self) -> dict[str, Splits]:
        """role -> split -> (x (n, d) float64, y (n,) float64), from ``samples``."""
        return self.samples.load(self.scm, self.label_rule)  # type: ignore[arg-type]

    def data(self, role: str) -> Splits:
        """The splits of one role: ``decision``, ``flow`` or ``recourse``."""
        if role not in ROLES:
            raise ValueError(f"unknown data role {role!r}; expected one of {', '.join(ROLES)}")
        return self.datasets[role]

    @property
    def dataset(self) -> Splits:
        """The recourse role's splits (deployment population = its test split)."""
        return self.data("recourse")

    @cached_property
    def bounds(self) -> Tensor:
        """(2, d) model-unit min and max of each feature over the training split."""
        x = self.dataset["train"][0]
        return torch.stack([x.min(dim=0).values, x.max(dim=0).values])

    @cached_property
    def display_bounds(self) -> Tensor:
        """(2, d) model-unit bounds of the values shown in plans: each feature's
        ``display_min``/``display_max``, else the training split's 0.1% / 99.9% quantiles
        (the extreme min and max of a skewed feature are far from anything realistic: a
        $172 car loan); categories: their whole range."""
        x = self.dataset["train"][0]
        q = torch.quantile(x, torch.tensor([0.001, 0.999], dtype=x.dtype), dim=0)
        for j, f in enumerate(self.features):
            if f.display.kind == "categorical":
                q[:, j] = self.bounds[:, j]
                continue
            for row, v in ((0, f.display_min), (1, f.display_max)):
                if v is not None:
                    q[row, j] = float(f.display.from_display(v))
        return q

    @property
    def ranges(self) -> Tensor:
        """(d,) the M_i of the metrics: a feature's stated ``range`` (high - low), else its
        max - min over the training split."""
        b = self.bounds
        out = b[1] - b[0]
        for j, f in enumerate(self.features):
            if f.range is not None:
                out[j] = f.range[1] - f.range[0]
        return out

    @property
    def categorical(self) -> Tensor:
        """(d,) bool: features whose value is a category code (any change counts fully)."""
        return torch.tensor([f.discrete for f in self.features])

    def changed(self, x: np.ndarray | Tensor, x_cf: np.ndarray | Tensor) -> Tensor:
        """(n, d) bool: items that change from x to x_cf by more than
        ``engine.metrics.CHANGE_TOLERANCE`` of their range (the rule of L0 over the profile)."""
        return changed_items(torch.as_tensor(np.atleast_2d(x)),
                             torch.as_tensor(np.atleast_2d(x_cf)), self.ranges, self.categorical)

    @cached_property
    def stds(self) -> Tensor:
        return self.dataset["train"][0].std(dim=0)

    def display_columns(self, x: np.ndarray | Tensor) -> dict[str, np.ndarray]:
        """Profiles (n, d) in model units as feature -> display values (level codes for
        level features): what a fixed rule reads, in the units of the table it was written
        for (before a declared conversion, ``DisplayMap.to_data``)."""
        arr = np.asarray(x, dtype=float).reshape(-1, self.d)
        return {f.name: np.asarray(f.display.to_data(arr[:, i]), dtype=float)
                for i, f in enumerate(self.features)}

    def to_display(self, x: np.ndarray | Tensor) -> list[dict[str, float]]:
        """Rows of model-unit profiles as dicts of display values."""
        arr = np.asarray(x, dtype=float).reshape(-1, self.d)
        return [
            {f.name: float(f.display.to_display(row[i])) for i, f in enumerate(self.features)}
            for row in arr
        ]

    @property
    def entered(self) -> tuple[FeatureSpec, ...]:
        """The features a participant enters (every feature not ``derived_from`` another)."""
        return tuple(f for f in self.features if f.derived_from is None)

    def from_display(self, values: dict[str, float]) -> np.ndarray:
        """One profile from display values (every entered feature required; a derived one
        may be left out and is then computed) to model units."""
        values = dict(values)
        missing = [f.name for f in self.entered if f.name not in values]
        if missing:
            raise ValueError(f"profile is missing feature(s): {', '.join(missing)}")
        unknown = sorted(set(values) - set(self.feature_names))
        if unknown:
            raise ValueError(f"profile has unknown feature(s): {', '.join(unknown)}")
        out = np.empty(self.d)
        for i, f in enumerate(self.features):
            if f.name not in values:
                continue  # derived: set below
            v = values[f.name]
            if v is None or (isinstance(v, float) and math.isnan(v)):
                raise ValueError(f"{f.label}: a value is required")
            out[i] = float(f.display.from_display(float(v)))
        for i, f in enumerate(self.features):
            if f.derived_from is not None and f.name not in values:
                source, factor = f.derived_from
                out[i] = factor * out[self.index(source)]
        return out
