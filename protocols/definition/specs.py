"""The blocks of a protocol, one pydantic model each, every check a validator.

A block checks itself (an attention check's answer is one of its options, a why question's
minimum is below its maximum, an arm's method exists and takes its options, ...); checks
across blocks live on ``protocols.definition.schema.Protocol``. A validator with several problems
reports each at its own location (``report``), so a file's problems all come out at once,
each with its path and line.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationInfo,
    field_validator,
    model_validator,
)

from protocols.definition import registries
from protocols.definition.problems import report
from protocols.definition.simulation import DistanceName

SCALE_LABELS = ("Strongly no", "No", "Slightly no", "Neutral", "Slightly yes", "Yes", "Strongly yes")

Identifier = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,62}$")]


# Participant-visible texts a protocol may leave out (``validate`` marks them as defaults).
DEFAULT_TEXTS = {
    "profile.own": "Please enter your profile.",
    "profile.persona": "In this study, imagine you are this applicant.",
    "elicitation.binary": "For each item, tell us whether you could change it.",
    "elicitation.ranking": "Rank the items you could change from easiest (1) to hardest; "
    "leave out the ones you cannot change.",
    "elicitation.likert.easiest": "For each item you could change, say how hard it would be "
    "(1 = very easy); mark the ones you cannot change.",
    "elicitation.likert.hardest": "For each item you could change, say how hard it would be "
    "(1 = very hard); mark the ones you cannot change.",
}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProfileSpec(Strict):
    """``own``: the participant enters their profile; ``persona``: one is assigned.
    ``from_screening``: profile features answered by a screening question's bracket
    (feature -> question id), left out of the profile page; the feature takes the chosen
    bracket's midpoint (protocols.definition.screening). Empty (the default): every feature is
    entered on the profile page."""

    source: Literal["own", "persona"] = "persona"
    on_approved: Literal["persona", "end"] = "persona"
    persona_split: Literal["train", "validation", "test"] = "test"
    text: str = ""
    from_screening: dict[str, str] = Field(default_factory=dict)

    def shown_text(self) -> str:
        """What the profile page says (``text``, or the default for the source)."""
        return self.text or DEFAULT_TEXTS[f"profile.{self.source}"]


class ElicitationSpec(Strict):
    """``likert_levels`` (default: one level per actionable item) and ``likert_low``: what
    the lowest level means to the participant (``easiest``: 1 = very easy; ``hardest``:
    1 = very hard). The stored answer is what the participant chose; the constraints are
    built with 1 = easiest either way."""

    scheme: Literal["none", "binary", "ranking", "likert"] = "none"
    likert_levels: int | None = Field(default=None, ge=2, le=10)
    likert_low: Literal["easiest", "hardest"] = "easiest"
    text: str = ""
    # An item left unanswered takes this value, and the stored answer names it in
    # ``left_at_default`` (None: every item must be answered; an untouched ranking is refused).
    default: Literal["shown_order", "cannot"] | StrictInt | StrictBool | None = None
    # The fewest items a participant must leave changeable (0: no minimum); a page answer
    # with fewer is refused with the interface text ``elicitation.min_changeable``.
    min_changeable: int = Field(default=0, ge=0)

    def shown_text(self) -> str:
        """What the elicitation page says (``text``, or the scheme's default)."""
        key = f"elicitation.{self.scheme}" + (f".{self.likert_low}" if self.scheme == "likert"
                                              else "")
        return self.text or DEFAULT_TEXTS.get(key, "")

    @model_validator(mode="after")
    def _levels_need_likert(self) -> ElicitationSpec:
        stray = [name for name, default in (("likert_levels", None), ("likert_low", "easiest"))
                 if getattr(self, name) != default and self.scheme != "likert"]
        report([((name,), "only a likert elicitation has this setting") for name in stray])
        return self

    @model_validator(mode="after")
    def _minimum_needs_scheme(self) -> ElicitationSpec:
        if self.min_changeable and self.scheme == "none":
            report([(("min_changeable",), "only an elicitation with a scheme has a minimum")])
        return self

    @model_validator(mode="after")
    def _default_fits_scheme(self) -> ElicitationSpec:
        d = self.default
        ok = (d is None or (self.scheme == "ranking" and d == "shown_order")
              or (self.scheme == "binary" and isinstance(d, bool))
              or (self.scheme == "likert" and (d == "cannot" or (
                  isinstance(d, int) and not isinstance(d, bool)
                  and 1 <= d <= (self.likert_levels or 10)))))
        if not ok:
            report([(("default",), {
                "ranking": "a ranking's default is shown_order (the order first shown)",
                "binary": "a binary default is true (can change) or false",
                "likert": "a likert default is a level 1..likert_levels or cannot",
            }.get(self.scheme, "only an elicitation with a scheme has a default"))])
        return self


class ArmSpec(Strict):
    """A method and its options. ``personalized: false`` hides the stated constraints from
    the method (it sees everybody able to act on every globally actionable feature);
    satisfaction and violation are still measured against the stated constraints.
    ``cost_profile`` maps stated difficulty to action-cost weights (engine.preferences);
    ``source``: plans come from the method's candidate set or its single recourse;
    ``base``/``base_options``: the base generator of a ``hare`` arm; ``weight``: share of
    participants in between-participant assignment.

    >>> from protocols import ArmSpec
    >>> arm = ArmSpec(id="oracle", method="oracle", options={"bins": 11})
    >>> arm.personalized, arm.cost_profile, arm.weight
    (True, 'linear', 1)
    """

    id: Identifier
    method: str
    options: dict[str, Any] = Field(default_factory=dict)
    personalized: bool = True
    cost_profile: Literal["constant", "concave", "linear", "convex"] = "linear"
    source: Literal["candidates", "recourse"] = "candidates"
    base: str | None = None
    base_options: dict[str, Any] = Field(default_factory=dict)
    weight: int = Field(default=1, ge=1, le=100)

    @model_validator(mode="after")
    def _registry(self) -> ArmSpec:
        report(registries.method_problems(self.method, self.options)
                + registries.base_problems(self.method, self.base, self.base_options))
        return self

    @property
    def interactive(self) -> bool:
        """The arm's method asks the participant (its plans come out of the interaction)."""
        return registries.is_interactive(self.method)


class FallbackSpec(Strict):
    """The method that fills a shortfall (``shortfall.then: fallback``)."""

    method: str
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _registry(self) -> FallbackSpec:
        report(registries.method_problems(self.method, self.options))
        return self


class ShortfallSpec(Strict):
    """What happens when an arm's method finds fewer shown-worthy plans for a participant
    than ``per_participant`` (no valid plan under their constraints, plans outside the
    scenario's display bounds): ``fewer`` shows the plans there are; ``fallback`` fills the
    gap with plans of ``fallback.method``; ``end`` ends the session with ``message``."""

    then: Literal["fewer", "fallback", "end"] = "fewer"
    fallback: FallbackSpec | None = None
    message: str = ("Thank you. We could not find plans that fit your situation, so the "
                    "study ends here.")

    @model_validator(mode="after")
    def _fallback_named(self) -> ShortfallSpec:
        if self.then == "fallback" and self.fallback is None:
            report([(("fallback",), "then: fallback needs fallback: {method: ..., options: ...}")])
        if self.then != "fallback" and self.fallback is not None:
            report([(("fallback",), "a fallback method is used only with then: fallback")])
        return self


class BoundSpec(Strict):
    """A study's own plausible-change bound of one feature (engine.recourse.plan_bounds), in
    display units: the largest step per plan, ``relative`` x |current value| or
    ``absolute`` (levels of an ordinal item), whichever is larger (``none: true``: no step
    limit; both left out: the scenario's step), and the range ``min`` .. ``max`` a plan
    keeps it in (left out: the scenario's population)."""

    relative: float | None = Field(None, gt=0)
    absolute: float | None = Field(None, gt=0)
    none: bool = False
    min: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _consistent(self) -> BoundSpec:
        problems = []
        if self.none and (self.relative is not None or self.absolute is not None):
            problems.append(((), "'none: true' lifts the step limit: leave out relative and "
                             "absolute"))
        if self.min is not None and self.max is not None and not self.min < self.max:
            problems.append((("min",), f"min ({self.min:g}) must be below max ({self.max:g})"))
        report(problems)
        return self


class PlanSpec(Strict):
    """How many plans each participant rates and how they are chosen from a candidate set.

    ``tominaga``: one of the sparsest (least ``sparsity``), one of the most proximate (least
    ``proximity``), the rest at random (``ties``: which of several sparsest / most proximate
    candidates, ``random`` or ``nearest`` on the other measure); ``stratified``: one plan from each of
    ``per_participant`` equal-count bins of ``distance``; ``best``: the method's recourse.
    ``per_participant`` counts plans per arm when assignment is ``within``.
    ``prune_actions``: an action is dropped when the plan stays valid without it, and a
    plan whose change to an item is below the item's display resolution does not show it
    as an action (engine.recourse.realism; off reproduces a paper's plans as generated).
    ``shortfall``: what happens when fewer plans than asked can be shown.
    ``directions``: allowed directions of change (feature -> increase | decrease | any) on
    top of the scenario's, which every method of the study obeys with the other plan rules
    (engine.recourse.plan_rules: no no-op or invisible change); ``consequences``: an item
    the person cannot change that moves as a consequence of the plan's actions is
    ``explain``-ed on the plan page ("follows from ...") or ``forbid``-den (such plans are
    not shown). ``bounds``: how far a plan may move a feature and the range it stays in
    (feature -> BoundSpec), in place of the scenario's (engine.recourse.plan_bounds).
    """

    per_participant: int = Field(default=5, ge=1, le=20)
    design: Literal["tominaga", "stratified", "best"] = "tominaga"
    distance: DistanceName = "l1_profile"
    sparsity: Literal["l0_actions", "l0_profile"] = "l0_profile"
    proximity: Literal["l1_actions", "l1_profile"] = "l1_profile"
    order: Literal["counterbalanced", "random", "fixed"] = "counterbalanced"
    prune_actions: bool = True
    shortfall: ShortfallSpec = ShortfallSpec()
    directions: dict[str, Literal["increase", "decrease", "any"]] = Field(default_factory=dict)
    consequences: Literal["explain", "forbid"] = "explain"
    bounds: dict[str, BoundSpec] = Field(default_factory=dict)
    ties: Literal["random", "nearest"] = "random"

    @model_validator(mode="after")
    def _best_is_one(self) -> PlanSpec:
        if self.design == "best" and self.per_participant != 1:
            report([(("per_participant",), "design best gives one plan per arm; set "
                      "per_participant: 1")])
        return self


class RatingQuestion(Strict):
    text: str = Field(min_length=1)
    labels: list[str] = Field(default_factory=lambda: list(SCALE_LABELS))

    @field_validator("labels")
    @classmethod
    def _two_or_seven(cls, labels: list[str]) -> list[str]:
        if len(labels) not in (2, 7):
            raise ValueError(f"a 7-point scale needs 2 or 7 labels, got {len(labels)}")
        return labels


class WhySpec(Strict):
    enabled: bool = True
    text: str = "For the above question, why did you make the evaluation you did?"
    min_chars: int = Field(default=0, ge=0)
    max_chars: int = Field(default=1000, ge=1, le=10_000)

    @model_validator(mode="after")
    def _min_below_max(self) -> WhySpec:
        if self.min_chars > self.max_chars:
            report([(("min_chars",), "min_chars exceeds max_chars")])
        return self


class QuestionsSpec(Strict):
    acceptance: RatingQuestion = RatingQuestion(
        text="Is the AI system's plan a reasonable explanation for the rejection of your "
        "application?"
    )
    action: RatingQuestion = RatingQuestion(
        text="Would you carry out the plan presented by the AI system to obtain approval?"
    )
    why: WhySpec = WhySpec()
    impossible: bool = True
    impossible_text: str = "Is it impossible for you to implement this change?"


class PlanViewSpec(Strict):
    """How the decision and each plan are framed: ``decision_text`` on the decision page
    (default: the scenario's "The automated system rejected the application."), ``text``
    above each plan (``{ordinal}`` becomes 1st, 2nd, ...; ``{number}``/``{of}`` the plan's
    number and the count), and the two column headings of the plan table."""

    decision_text: str = ""
    text: str = "If your profile were the suggested one, your application would be approved."
    current_label: str = Field(default="Your profile now", min_length=1, max_length=40)
    suggested_label: str = Field(default="Suggested profile", min_length=1, max_length=40)

    @field_validator("text")
    @classmethod
    def _known_fields(cls, text: str) -> str:
        try:
            text.format(ordinal="1st", number=1, of=5)
        except (KeyError, IndexError, ValueError) as e:
            raise ValueError(f"only {{ordinal}}, {{number}} and {{of}} may appear in braces "
                             f"({type(e).__name__}: {e})") from None
        return text

    def plan_text(self, number: int, of: int) -> str:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(number % 10 if number % 100 not in
                                                (11, 12, 13) else 0, "th")
        return self.text.format(ordinal=f"{number}{suffix}", number=number, of=of)


class AttentionCheck(Strict):
    """Shown right after the page ``after`` (a page id such as ``plan-2`` or ``decision``)."""

    id: Identifier
    after: str
    question: str = Field(min_length=1)
    options: list[str] = Field(min_length=2)
    correct: str

    @field_validator("correct")
    @classmethod
    def _an_option(cls, correct: str, info: ValidationInfo) -> str:
        if correct not in info.data.get("options", [correct]):
            raise ValueError(f"{correct!r} is not an option")
        return correct


class ExclusionSpec(Strict):
    """Which ratings and participants ``analyze`` leaves out of the models (they stay in
    the data and the export; analysis.exclusions): ``impossible_items`` a rating whose
    participant marked a changed item impossible (the reference study's rule, its
    section 4); ``failed_attention`` every rating of a participant who answered an attention
    check wrongly; ``fewer_plans`` a participant who rated fewer plans than the protocol
    asks."""

    impossible_items: bool = True
    failed_attention: bool = True
    fewer_plans: bool = False


class DebriefSpec(Strict):
    """The last page. ``fewer_plans``: shown instead of ``text`` to a participant who rated
    fewer plans than the protocol promises (a ``text`` that speaks of "the two plans you
    rated" must not reach someone who rated one); None: ``text`` for everybody.
    ``no_plans``: shown instead of both to a participant for whom no plan was found (the
    shortfall's message above it says why); None: ``fewer_plans``, else ``text``."""

    text: str = "Thank you for taking part."
    fewer_plans: str | None = None
    no_plans: str | None = None
    completion_code: str | None = None  # None: a per-participant code
