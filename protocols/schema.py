"""The protocol file format (YAML), validated with pydantic.

A protocol says what a study is: the scenario, consent and debrief texts, screening
questions, where the participant's profile comes from, the pre-hoc elicitation scheme, the
arms (recourse method + options), how many plans each participant rates and how they are
chosen (distance design), the rating questions, attention checks, the completion code, the
seed, and the ``simulation`` block of the synthetic participants' behaviour.

``load_protocol(id_or_path)`` accepts a shipped protocol's id (``protocols/<id>.yaml``) or a
path. Every problem of a broken file is reported at once, each with its path in the file
(``arms[1].method``) and its line: structural problems first (wrong type, unknown key,
missing field); when the structure is sound, the cross-field checks (unknown scenario or
method, unknown method option, inconsistent design, references to missing arms or pages).
Minimal example::

    id: my-study
    title: My study
    scenario: loan
    elicitation: {scheme: ranking}
    arms:
      - {id: oracle, method: oracle, options: {bins: 10}}
    plans: {per_participant: 3, design: stratified, distance: l1_profile}
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

PROTOCOL_DIR = Path(__file__).resolve().parent
DISTANCES = ("l0_actions", "l1_actions", "l0_profile", "l1_profile")
SCALE_LABELS = ("Strongly no", "No", "Slightly no", "Neutral", "Slightly yes", "Yes", "Strongly yes")

Identifier = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,62}$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScreeningQuestion(_Strict):
    id: Identifier
    question: str = Field(min_length=1)
    options: list[str] = Field(min_length=2)
    eligible: list[str] = Field(min_length=1)


class ProfileSpec(_Strict):
    """``own``: the participant enters their profile; ``persona``: one is assigned."""

    source: Literal["own", "persona"] = "persona"
    on_approved: Literal["persona", "end"] = "persona"
    persona_split: Literal["train", "validation", "test"] = "test"
    text: str = ""


class ElicitationSpec(_Strict):
    scheme: Literal["none", "binary", "ranking", "likert"] = "none"
    likert_levels: int | None = Field(default=None, ge=2, le=10)
    text: str = ""


class ArmSpec(_Strict):
    """A method and its options. ``personalized: false`` hides the stated constraints from
    the method (it sees everybody able to act on every globally actionable feature);
    satisfaction and violation are still measured against the stated constraints.
    ``cost_profile`` maps stated difficulty to action-cost weights (engine.preferences);
    ``source``: plans come from the method's candidate set or its single recourse;
    ``base``/``base_options``: the base generator of a ``hare`` arm; ``weight``: share of
    participants in between-participant assignment.
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


class PlanSpec(_Strict):
    """How many plans each participant rates and how they are chosen from a candidate set.

    ``tominaga``: one of the sparsest (least ``sparsity``), one of the most proximate (least
    ``proximity``), the rest at random; ``stratified``: one plan from each of
    ``per_participant`` equal-count bins of ``distance``; ``best``: the method's recourse.
    ``per_participant`` counts plans per arm when assignment is ``within``.
    """

    per_participant: int = Field(default=5, ge=1, le=20)
    design: Literal["tominaga", "stratified", "best"] = "tominaga"
    distance: Literal["l0_actions", "l1_actions", "l0_profile", "l1_profile"] = "l1_profile"
    sparsity: Literal["l0_actions", "l0_profile"] = "l0_profile"
    proximity: Literal["l1_actions", "l1_profile"] = "l1_profile"
    order: Literal["counterbalanced", "random", "fixed"] = "counterbalanced"


class RatingQuestion(_Strict):
    text: str = Field(min_length=1)
    labels: list[str] = Field(default_factory=lambda: list(SCALE_LABELS))


class WhySpec(_Strict):
    enabled: bool = True
    text: str = "For the above question, why did you make the evaluation you did?"
    min_chars: int = Field(default=0, ge=0)
    max_chars: int = Field(default=1000, ge=1, le=10_000)


class QuestionsSpec(_Strict):
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


class AttentionCheck(_Strict):
    """Shown right after the page ``after`` (a page id such as ``plan-2`` or ``decision``)."""

    id: Identifier
    after: str
    question: str = Field(min_length=1)
    options: list[str] = Field(min_length=2)
    correct: str


class DebriefSpec(_Strict):
    text: str = "Thank you for taking part."
    completion_code: str | None = None  # None: a per-participant code


class HareSpec(_Strict):
    """Synthetic HARE answers: Luce choice with ``temperature`` on the true personal cost;
    accept when the cost is under the person's threshold (lognormal around ``threshold``)."""

    temperature: float = Field(default=0.05, gt=0)
    threshold: float = Field(default=0.15, gt=0)
    threshold_sd: float = Field(default=0.5, ge=0)


class OutcomeOverrides(_Strict):
    """Overrides of one rating model's parameters (None keeps the reference value)."""

    intercept: float | None = None
    drop: float | None = None
    scale: float | None = Field(default=None, gt=0)
    satisfaction: float | None = None
    violation: float | None = None
    sd_intercept: float | None = Field(default=None, ge=0)
    sd_slope: float | None = Field(default=None, ge=0)
    cutpoints: list[float] | None = Field(default=None, min_length=6, max_length=6)


class RatingOverrides(_Strict):
    distance: Literal["l0_actions", "l1_actions", "l0_profile", "l1_profile"] | None = None
    acceptance: OutcomeOverrides = OutcomeOverrides()
    action: OutcomeOverrides = OutcomeOverrides()


class ConstraintsSpec(_Strict):
    """True hard/soft constraints: Plackett-Luce preference order (engine.preferences) and
    the number of actionable features drawn from ``n_actionable_probs`` (uniform if None)."""

    distribution: str = "uniform"
    n_actionable_probs: list[float] | None = None
    cost_slope: float = Field(default=3.0, ge=0)


class ReportingSpec(_Strict):
    """Elicitation noise: adjacent rank swaps and wrong can/cannot marks, per feature."""

    swap_rate: float = Field(default=0.1, ge=0, le=1)
    mark_error_rate: float = Field(default=0.05, ge=0, le=1)


class SimulationSpec(_Strict):
    seed: int = 0
    ratings: RatingOverrides = RatingOverrides()
    constraints: ConstraintsSpec = ConstraintsSpec()
    reporting: ReportingSpec = ReportingSpec()
    hare: HareSpec = HareSpec()
    attention_pass_rate: float = Field(default=0.97, ge=0, le=1)


class Protocol(_Strict):
    id: Identifier
    title: str = Field(min_length=1)
    scenario: str = "loan"
    seed: int = 0
    decision_model: Literal["trained", "bayes"] = "trained"
    consent: str = "Do you agree to take part in this study?"
    screening: list[ScreeningQuestion] = Field(default_factory=list)
    scenario_text: str | None = None
    profile: ProfileSpec = ProfileSpec()
    elicitation: ElicitationSpec = ElicitationSpec()
    arms: list[ArmSpec] = Field(min_length=1)
    assignment: Literal["between", "within"] = "between"
    plans: PlanSpec = PlanSpec()
    questions: QuestionsSpec = QuestionsSpec()
    attention_checks: list[AttentionCheck] = Field(default_factory=list)
    debrief: DebriefSpec = DebriefSpec()
    simulation: SimulationSpec = SimulationSpec()

    def arm(self, arm_id: str) -> ArmSpec:
        for a in self.arms:
            if a.id == arm_id:
                return a
        raise KeyError(f"protocol {self.id!r} has no arm {arm_id!r}")

    @property
    def has_hare(self) -> bool:
        return any(a.method == "hare" for a in self.arms)

    def canonical_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True)

    def fingerprint(self) -> str:
        """SHA-256 of the canonical protocol (what a stored study was run with)."""
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()


class ProtocolError(ValueError):
    """A protocol file is broken; ``problems`` lists (path, message) pairs."""

    def __init__(self, source: str, problems: list[tuple[str, str]]) -> None:
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  - {path}: {msg}" for path, msg in problems)
        n = len(problems)
        super().__init__(f"{source}: {n} problem{'s' * (n != 1)} in the protocol:\n{lines}")


# ---- loading -------------------------------------------------------------------------------
def shipped_protocols() -> tuple[str, ...]:
    """Ids of the protocols shipped with the package."""
    return tuple(sorted(p.stem for p in PROTOCOL_DIR.glob("*.yaml")))


def resolve(id_or_path: str | Path) -> Path:
    """A shipped protocol's file, or the given path."""
    p = Path(id_or_path)
    if p.suffix in (".yaml", ".yml") or p.exists():
        if not p.exists():
            raise ProtocolError(str(p), [("(file)", "no such file")])
        return p
    shipped = PROTOCOL_DIR / f"{id_or_path}.yaml"
    if shipped.exists():
        return shipped
    raise ProtocolError(
        str(id_or_path),
        [("(file)", f"not a file and not a shipped protocol ({', '.join(shipped_protocols())})")],
    )


def load_protocol(id_or_path: str | Path) -> Protocol:
    """Load and fully validate a protocol (module docstring); raise ProtocolError."""
    path = resolve(id_or_path)
    return parse_protocol(path.read_text(encoding="utf-8"), source=str(path))


def parse_protocol(text: str, source: str = "<protocol>") -> Protocol:
    """Validate YAML text; every problem is listed with its path and line."""
    try:
        data = yaml.safe_load(text)
        root = yaml.compose(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(file)"
        raise ProtocolError(
            source, [(where, f"not valid YAML: {getattr(e, 'problem', e)}")]
        ) from None
    if not isinstance(data, dict):
        raise ProtocolError(source, [("(file)", "a protocol is a YAML mapping of fields")])
    try:
        protocol = Protocol.model_validate(data)
    except ValidationError as e:
        problems = [(_where(root, err["loc"]), _message(err)) for err in e.errors()]
        raise ProtocolError(source, problems) from None
    from protocols.checks import semantic_problems

    problems = [(_where(root, loc), msg) for loc, msg in semantic_problems(protocol)]
    if problems:
        raise ProtocolError(source, problems)
    return protocol


def _message(err: dict[str, Any]) -> str:
    if err["type"] == "extra_forbidden":
        return "unknown field"
    if err["type"] == "missing":
        return "required field is missing"
    return err["msg"]


def _dotted(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _where(root: yaml.Node | None, loc: tuple[Any, ...]) -> str:
    """``arms[1].method (line 12)``: the path, with the line of the deepest node found."""
    node, line = root, None
    for part in loc:
        if node is None:
            break
        line = node.start_mark.line + 1
        nxt = None
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if k.value == str(part):
                    nxt, line = v, k.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if 0 <= part < len(node.value):
                nxt = node.value[part]
        node = nxt
    if node is not None:
        line = node.start_mark.line + 1
    return _dotted(loc) + (f" (line {line})" if line is not None else "")
