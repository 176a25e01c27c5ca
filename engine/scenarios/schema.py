"""The scenario file format (YAML), validated with pydantic.

A scenario file states a world's features, the text people read, and the world itself::

    name: my-loan                      # registry name (lower case, digits, '-', '_')
    title: Car loan                    # participants read it (the scenario page, progress)
    about: UCI Statlog German Credit   # researchers only: listings, reports; never a page
    data_set: german-credit            # the published data set its rows are (reproductions)
    story: You want to buy a car ...   # the scenario text of a study
    outcome: {favourable: approved, unfavourable: rejected}
    features:                          # in column order (a causal order for graph worlds)
      - name: gender
        kind: binary                   # binary | ordinal | categorical | continuous
        levels: [female, male]         # level features: labels, coded 0..k-1
        role: immutable                # immutable | mutable | actionable
      - name: income
        label: Annual income
        kind: continuous
        display: {map: exp, unit: $, scale: 40000, rate: 0.12}   # model -> display units
        range: [-10, 12]               # M_i of the distances (model units); default: data
        direction: increase            # increase | decrease | any
    world:                             # one of four kinds (``kind``)
      kind: equations                  # an exact SCM: a Python module and its class
      module: engine.scenarios.loan    # dotted module, or a .py file next to this one
      scm: LoanSCM
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from engine.scenarios.graph import graph_problems
from engine.scenarios.rules import RuleSyntaxError, parse_rule
from engine.scenarios.schema_base import (
    CausalGraph,
    Problems,
    Strict,
    check_split,
    labels_as_text,
    report,
)
from engine.scenarios.tabular_schema import TabularWorld, tabular_problems

Identifier = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]*$", max_length=64)]
FeatureName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=64)]
FEATURE_KINDS: tuple[str, ...] = ("binary", "ordinal", "categorical", "continuous")
LEVEL_KINDS: tuple[str, ...] = ("binary", "ordinal", "categorical")
DIRECTIONS: dict[str, int] = {"increase": 1, "decrease": -1, "any": 0}


class ConversionSpec(Strict):
    """Amounts the data states in another unit: shown value = ``factor`` x the data's value
    in ``unit`` (Deutsche Mark shown in euro: ``{unit: DM, factor: 0.511292}``)."""

    unit: str = Field(min_length=1)
    factor: float = Field(gt=0)


class DisplaySpec(Strict):
    """Model units -> display units of a continuous feature: ``affine`` (display = offset +
    scale x) or ``exp`` (display = scale exp(rate x)); ``min``/``max`` bound the values a plan
    shows (display units; default the training split's 0.1% / 99.9% quantiles); ``codes``
    says what a number that is a code means (``{1: under a year, 4: four years or more}``),
    shown beside the number wherever it is read; ``converted_from`` shows amounts the data
    states in another unit (a currency) in ``unit`` by a declared factor."""

    map: Literal["affine", "exp"] = "affine"
    unit: str = ""
    scale: float = 1.0
    offset: float = 0.0
    rate: float = 1.0
    decimals: int = Field(0, ge=0, le=6)
    min: float | None = None
    max: float | None = None
    converted_from: ConversionSpec | None = None  # the data's unit and the factor to ``unit``
    # what a number that is a code means, shown beside it ("4 (the largest)"); whole values
    codes: dict[int, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _monotone(self) -> DisplaySpec:
        problems: Problems = []
        if self.scale <= 0:
            problems.append((("scale",), f"must be positive (an increasing map), got {self.scale}"))
        if self.map == "exp" and self.rate <= 0:
            problems.append((("rate",), f"must be positive (an increasing map), got {self.rate}"))
        if self.min is not None and self.max is not None and self.min >= self.max:
            problems.append((("max",), f"must exceed min ({self.min}), got {self.max}"))
        if self.map == "exp" and self.min is not None and self.min <= 0:
            problems.append((("min",), "an exp display is positive; min must be > 0"))
        if self.codes and self.decimals:
            problems.append((("codes",), "codes name whole numbers; set decimals: 0"))
        problems += [(("codes", k), "a code's meaning is a non-empty text")
                     for k, v in self.codes.items() if not v.strip()]
        report(problems)
        return self


class DerivedSpec(Strict):
    """A feature a participant does not enter: ``factor`` x ``feature`` (model units), set
    when a profile is entered (the reference study's loan: one third of the income)."""

    feature: str = Field(min_length=1)
    factor: float


class ChangeSpec(Strict):
    """How far one plan may move a feature, in display units (engine.recourse.plan_bounds):
    at most ``relative`` x |current value| or ``absolute`` (levels for an ordinal feature),
    whichever is larger; one of them may be left out, ``none: true`` lifts the limit."""

    relative: float | None = Field(None, gt=0)
    absolute: float | None = Field(None, gt=0)
    none: bool = False

    @model_validator(mode="after")
    def _one_limit(self) -> ChangeSpec:
        if self.none and (self.relative is not None or self.absolute is not None):
            report([((), "'none: true' lifts the limit: leave out relative and absolute")])
        if not self.none and self.relative is None and self.absolute is None:
            report([((), "state relative, absolute (or both), or none: true")])
        return self


class FeatureFileSpec(Strict):
    """One feature (module docstring). Level features are coded 0..k-1 in model units, in
    the order of ``levels`` (an ordinal feature's order is its ranking)."""

    name: FeatureName
    label: str = ""
    kind: str
    levels: list[str] | None = None
    display: DisplaySpec | None = None
    range: tuple[float, float] | None = None
    role: Literal["immutable", "mutable", "actionable"] = "actionable"
    direction: Literal["increase", "decrease", "any"] = "any"
    help: str = ""
    in_plan: bool = True  # False: a condition of the decision, never a plan row
    derived_from: DerivedSpec | None = None  # not entered: factor x another feature
    change: ChangeSpec | None = None  # how far a plan may move it (None: plan_bounds' default)

    @field_validator("levels", mode="before")
    @classmethod
    def _labels_as_text(cls, levels: Any) -> Any:
        """Numbers are labels too (``[1, 2, 3]``); YAML's booleans are a trap worth naming."""
        return labels_as_text(levels)

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        if kind not in FEATURE_KINDS:
            raise ValueError(f"unknown feature kind {kind!r}; expected one of "
                             f"{', '.join(FEATURE_KINDS)}")
        return kind

    @model_validator(mode="after")
    def _levels_fit_kind(self) -> FeatureFileSpec:
        problems: Problems = []
        if self.kind in LEVEL_KINDS:
            levels = self.levels or []
            if self.levels is None:
                problems.append((("levels",), f"a {self.kind} feature lists its levels"))
            elif self.kind == "binary" and len(levels) != 2:
                problems.append((("levels",), f"a binary feature has 2 levels, got {len(levels)}"))
            elif len(levels) < 2:
                problems.append((("levels",), f"a {self.kind} feature has at least 2 levels"))
            seen: set[str] = set()
            for i, level in enumerate(levels):
                if not level.strip():
                    problems.append((("levels", i), "a level label must not be empty"))
                elif level in seen:
                    problems.append((("levels", i), f"level {level!r} is listed twice"))
                seen.add(level)
            if self.display is not None:
                problems.append((("display",), f"a {self.kind} feature shows its level labels; "
                                 "display maps are for continuous features"))
        elif self.levels is not None:
            problems.append((("levels",), "a continuous feature has no levels (use display "
                             "for its units)"))
        if self.change is not None and self.kind in ("binary", "categorical"):
            problems.append((("change",), f"a {self.kind} feature has no size of change; "
                             "limit ordinal and continuous features"))
        if self.range is not None and not self.range[0] < self.range[1]:
            problems.append((("range",), f"must be [low, high] with low < high, got "
                             f"{list(self.range)}"))
        report(problems)
        return self

    @property
    def title(self) -> str:
        return self.label or self.name.replace("_", " ").capitalize()

    @property
    def max_change(self) -> tuple[float | None, float | None] | None:
        """The stated ``change`` as (relative, absolute); None when it states none."""
        c = self.change
        return None if c is None else (None, None) if c.none else (c.relative, c.absolute)


class ScmSamplesSpec(Strict):
    """``n`` draws from the exact SCM at ``seed``, split train / validation / test."""

    source: Literal["scm"] = "scm"
    n: int = Field(20_000, ge=10)
    seed: int = 0
    split: tuple[float, float, float] = (0.5, 0.25, 0.25)

    @field_validator("split")
    @classmethod
    def _sums_to_one(cls, split: tuple[float, float, float]) -> tuple[float, float, float]:
        return check_split(split)


class PublishedSamplesSpec(Strict):
    """A published experiment's tensors (engine.scenarios.samples.PublishedSamples)."""

    source: Literal["published"]
    folder: str = Field(min_length=1)  # relative to the scenario file
    note: str = ""


class EquationsWorld(Strict):
    """An exact SCM: class ``scm`` of ``module`` (a StructuralCausalModel subclass)."""

    kind: Literal["equations"]
    module: str = Field(min_length=1)
    scm: str = Field(min_length=1)
    samples: Annotated[ScmSamplesSpec | PublishedSamplesSpec,
                       Field(discriminator="source")] = ScmSamplesSpec()
    label_rule: Literal["threshold", "bernoulli"] = "threshold"
    # how the decision model is trained: ours (Adam) or as CARMA's reference code (SGD)
    decision_training: Literal["trained", "reference"] = "trained"


class RuleSpec(Strict):
    """A fixed decision rule: an ``expression`` over the features (favourable iff true) or
    a Python ``function`` (``module:function``, given a dict of display-unit arrays)."""

    expression: str | None = None
    function: str | None = None
    description: str = ""

    @model_validator(mode="after")
    def _one_of(self) -> RuleSpec:
        if (self.expression is None) == (self.function is None):
            raise ValueError("give exactly one of expression or function")
        if self.function is not None and ":" not in self.function:
            raise ValueError(f"function must be 'module:function', got {self.function!r}")
        return self


class GeneratorSpec(Strict):
    """A pool made by a Python function ``module:function`` (called with ``seed``), returning
    rows (a pandas DataFrame or a list of dicts) in display units."""

    generator: str = Field(pattern=r"^[A-Za-z0-9_.]+:[A-Za-z_][A-Za-z0-9_]*$")
    seed: int = 0


class PoolWorld(Strict):
    """A table of profiles and a fixed rule (the reference user study's world).

    ``world.kind: pool`` holds a CSV of profiles (``pool``, display units, level labels) and a
    fixed decision ``rule`` (an expression over the features, engine.scenarios.rules, or a
    Python function ``module:function``); ``world.kind: data`` holds a CSV of samples
    (``data``), its ``label`` column and the causal ``graph`` (edges ``parent -> child``): the
    world model is a causal flow learned from the data and the decision model is trained on the
    labels; ``world.kind: tabular`` reads a real data set as it is, without a causal graph
    (engine.scenarios.tabular_schema). ``extends: <scenario>`` starts from another scenario's file (its keys merged, these
    win). Every check is a validator here, so each problem is reported at its path
    (``features[3].levels[2]``, ``world.graph[1]``); ``engine.scenarios.loader`` adds the
    checks of the CSV files (columns, cells) at their rows and columns.
    """

    kind: Literal["pool"]
    pool: str | GeneratorSpec  # a CSV file (relative to the scenario file) or a generator
    rule: str | RuleSpec
    # people like a study's participants (same columns; the validation and test splits, so
    # synthetic participants are drawn from them); default: the pool itself
    applicants: str | GeneratorSpec | None = None

    @property
    def rule_spec(self) -> RuleSpec:
        return RuleSpec(expression=self.rule) if isinstance(self.rule, str) else self.rule


class DataWorld(CausalGraph):
    """Samples and a causal graph: a causal flow learned from ``data``, a decision model
    trained on its ``label`` column. ``truth`` names a scenario with the exact SCM that made
    the data (optional: then benchmarks also evaluate plans under the exact world)."""

    kind: Literal["data"]
    data: str = Field(min_length=1)
    label: str = Field(min_length=1)
    split: tuple[float, float, float] = (0.5, 0.25, 0.25)
    truth: str | None = None

    @field_validator("split")
    @classmethod
    def _sums_to_one(cls, split: tuple[float, float, float]) -> tuple[float, float, float]:
        return check_split(split)


World = Annotated[EquationsWorld | PoolWorld | DataWorld | TabularWorld,
                  Field(discriminator="kind")]


class Outcome(Strict):
    favourable: str = "approved"
    unfavourable: str = "rejected"


class PersonasSpec(Strict):
    """Which of the data's profiles a study may show people as personas: per feature the
    least (``min``) and most (``max``) display value (an applicant is an adult: ``min: {age:
    18}``). Benchmarks and training use every profile."""

    min: dict[str, float] = Field(default_factory=dict)
    max: dict[str, float] = Field(default_factory=dict)

    def limits(self) -> dict[str, tuple[float | None, float | None]]:
        """{feature: (min, max)} in display units, None where a side is not stated."""
        return {n: (self.min.get(n), self.max.get(n)) for n in sorted({*self.min, *self.max})}


class ScenarioFile(Strict):
    """A whole scenario file (module docstring)."""

    name: Identifier
    title: str = Field(min_length=1)
    about: str = ""  # for researchers only: the data set and what it stands for
    # the published data set whose rows these are: a paper's figures are compared with a
    # scenario of the data set the paper reports only (engine.papers.icarma.datasets)
    data_set: Identifier | None = None
    story: str = ""
    outcome: Outcome = Outcome()
    features: list[FeatureFileSpec] = Field(min_length=1)
    world: World
    personas: PersonasSpec = PersonasSpec()

    @model_validator(mode="after")
    def _across_fields(self) -> ScenarioFile:
        problems: Problems = []
        names = [f.name for f in self.features]
        for side in ("min", "max"):
            problems += [(("personas", side, n), f"no feature {n!r} in this scenario")
                         for n in getattr(self.personas, side) if n not in names]
        for i, name in enumerate(names):
            if name in names[:i]:
                problems.append((("features", i, "name"), f"feature {name!r} is listed twice"))
        if not any(f.role == "actionable" for f in self.features):
            problems.append((("features",), "no feature is actionable (role: actionable)"))
        for i, f in enumerate(self.features):
            src = f.derived_from.feature if f.derived_from is not None else None
            if src is not None and (src not in names or src == f.name):
                problems.append((("features", i, "derived_from", "feature"),
                                 f"{src!r} is not another feature of this scenario"))
        if isinstance(self.world, CausalGraph):  # a data world, or a tabular one
            problems += graph_problems(self.world.edges(), names)
            children = {c for _, p, c in self.world.edges() if p is not None}
            for i, f in enumerate(self.features):
                if f.kind in ("binary", "categorical") and f.name in children:
                    problems.append((("features", i, "kind"), f"the learned flow models a "
                                     f"{f.kind} feature only as a cause (a root of the "
                                     f"graph); {f.name!r} has causes"))
        if isinstance(self.world, DataWorld):
            if self.world.label in names:
                problems.append((("world", "label"), f"the label column {self.world.label!r} "
                                 "is also a feature"))
        if isinstance(self.world, TabularWorld):
            problems += tabular_problems(self.world, self.features)
        if isinstance(self.world, PoolWorld):
            problems += rule_problems(self.world.rule_spec, self.features)
        report(problems)
        return self

    @property
    def feature_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.features)


def rule_problems(rule: RuleSpec, features: list[FeatureFileSpec]) -> Problems:
    """An expression rule that does not parse, names an unknown feature or compares a level
    feature with a label outside its levels (engine.scenarios.rules)."""
    if rule.expression is None:
        return []
    try:
        parse_rule(rule.expression, {f.name: tuple(f.levels or ()) for f in features})
    except RuleSyntaxError as e:
        return [(("world", "rule"), str(e))]
    return []
