"""The protocol file format (YAML), validated with pydantic.

A protocol says what a study is: the scenario, consent and debrief texts, screening
questions, where the participant's profile comes from, the pre-hoc elicitation scheme, the
arms (recourse method + options), how many plans each participant rates and how they are
chosen (distance design), the rating questions, attention checks, the completion code, the
seed, what a recruitment link's participant id looks like (``recruitment.id_pattern``), the
per-arm quotas and session time limit (protocols.definition.quotas), and the
``simulation`` block of the synthetic participants' behaviour.

``load_protocol(id_or_path)`` accepts a shipped protocol's id (``protocols/<id>.yaml``) or a
path. Every problem of a broken file is reported at once, each with its path in the file
(``arms[1].method``) and its line. Every check is a pydantic validator of these models, so a
``Protocol(...)`` built in Python is checked exactly like a file (``ValidationError`` listing
the same problems): field types and ranges, then each spec's own checks (an attention
check's answer is an option, cut points increase, ...) and, once every field is sound, the
checks across specs (design vs arms, attention checks vs the page sequence). What a
protocol names in the engine's registries (scenario, methods and their options, base
methods, preference distribution) is checked by protocols.definition.registries. Minimal example::

    id: my-study
    title: My study
    scenario: loan
    elicitation: {scheme: ranking}
    arms:
      - {id: oracle, method: oracle, options: {bins: 10}}
    plans: {per_participant: 3, design: stratified, distance: l1_profile}
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar, Literal

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from protocols.definition import registries, validation
from protocols.definition.quotas import QuotaSpec, TimeLimitSpec, quota_problems
from protocols.definition.recruitment import QualitySpec, RecruitmentSpec
from protocols.definition.screening import ScreeningQuestion, SessionsSpec, pause_problems
from protocols.definition.simulation import SimulationSpec
from protocols.definition.specs import (
    ArmSpec,
    AttentionCheck,
    DebriefSpec,
    ElicitationSpec,
    ExclusionSpec,
    Identifier,
    PlanSpec,
    PlanViewSpec,
    ProfileSpec,
    QuestionsSpec,
    Strict,
    report,
)

PROTOCOL_DIR = Path(__file__).resolve().parents[1]  # the shipped protocols/<id>.yaml
_LATER_BLOCKS = ("recruitment", "plan_view", "quality", "screening_first", "sessions",
                 "quotas", "time_limit")  # see Protocol.canonical_json
_LATER_ENDINGS = ("completion", "screened_out", "no_consent", "withdrawn", "timed_out",
                  "study_full")


class Protocol(Strict):
    """A validated study protocol (module docstring; every field: the protocol reference).

    >>> from protocols import load_protocol
    >>> p = load_protocol("tominaga-replication")
    >>> p.id, p.scenario, p.decision_model, [arm.method for arm in p.arms]
    ('tominaga-replication', 'tominaga', 'rule', ['pool-profiles'])
    """

    id: Identifier
    title: str = Field(min_length=1)
    scenario: str = "loan"
    seed: int = 0
    decision_model: Literal["trained", "bayes", "rule"] = "trained"
    consent: str = "Do you agree to take part in this study?"
    screening: list[ScreeningQuestion] = Field(default_factory=list)
    screening_first: bool = False
    sessions: SessionsSpec = SessionsSpec()
    scenario_text: str | None = None
    profile: ProfileSpec = ProfileSpec()
    elicitation: ElicitationSpec = ElicitationSpec()
    arms: list[ArmSpec] = Field(min_length=1)
    assignment: Literal["between", "within"] = "between"
    plans: PlanSpec = PlanSpec()
    plan_view: PlanViewSpec = PlanViewSpec()
    questions: QuestionsSpec = QuestionsSpec()
    attention_checks: list[AttentionCheck] = Field(default_factory=list)
    exclusions: ExclusionSpec = ExclusionSpec()
    debrief: DebriefSpec = DebriefSpec()
    recruitment: RecruitmentSpec = RecruitmentSpec()
    quality: QualitySpec = QualitySpec()
    quotas: QuotaSpec | None = None
    time_limit: TimeLimitSpec | None = None
    simulation: SimulationSpec = SimulationSpec()

    @field_validator("scenario")
    @classmethod
    def _known_scenario(cls, name: str) -> str:
        problem = registries.scenario_problem(name)
        if problem:
            raise ValueError(problem)
        return name

    # the checks across blocks, each also run on its own by protocols.definition.validation
    CROSS_CHECKS: ClassVar[tuple[Any, ...]] = ()

    @model_validator(mode="after")
    def _across_specs(self) -> Protocol:
        report([problem for check in self.CROSS_CHECKS for problem in check(self)])
        return self

    def arm(self, arm_id: str) -> ArmSpec:
        for a in self.arms:
            if a.id == arm_id:
                return a
        raise KeyError(f"protocol {self.id!r} has no arm {arm_id!r}")

    @property
    def interactive(self) -> bool:
        """Some arm's method asks the participant (HARE)."""
        return any(a.interactive for a in self.arms)

    def page_slots(self) -> list[str]:
        """The fixed part of every participant's page sequence (protocols.running.flow adds the
        interactive pages, plans, attention checks, debrief and the early end)."""
        ids = ["consent"] + (["screening"] if self.screening else [])
        if self.screening_first and self.screening:
            ids = ["screening", "consent"]  # the reference study's order (its section 3.3)
        ids += ["scenario", "profile", "decision"]
        return ids + (["elicitation"] if self.elicitation.scheme != "none" else [])

    def plans_per_participant(self, arm_id: str) -> int:
        """Plans a participant of ``arm_id`` rates (interactive: its final plan and its
        base's)."""
        if self.assignment == "within":
            return self.plans.per_participant * len(self.arms)
        return 2 if self.arm(arm_id).interactive else self.plans.per_participant

    def promised_plans(self) -> str:
        """What the consent text's ``{plans}`` promises: the plans a participant rates, "up
        to" that many when a shortfall shows fewer (``plans.shortfall.then: fewer``)."""
        n = max(self.plans_per_participant(a.id) for a in self.arms)
        words = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                 "ten")
        count = words[n] if n < len(words) else str(n)
        up_to = "up to " if self.plans.shortfall.then == "fewer" and n > 1 else ""
        return f"{up_to}{count} plan{'s' if n != 1 else ''}"

    def consent_text(self) -> str:
        """The consent text as shown (``{plans}`` replaced by ``promised_plans``)."""
        return self.consent.replace("{plans}", self.promised_plans())

    def anchor_page_ids(self) -> list[str]:
        """Page ids an attention check may follow (those every participant passes through)."""
        n = min(self.plans_per_participant(arm.id) for arm in self.arms)
        return self.page_slots() + [f"plan-{k}" for k in range(1, n + 1)]

    def canonical_json(self) -> str:
        """The protocol as sorted JSON. Blocks added after studies were first stored are left
        out while at their default, so an unchanged protocol keeps its fingerprint."""
        data = self.model_dump(mode="json")
        for name in _LATER_BLOCKS:
            if getattr(self, name) == type(self).model_fields[name].default:
                data.pop(name)
        for name in _LATER_ENDINGS:  # recruitment's endings came after its id_pattern
            if name in data.get("recruitment", {}) and data["recruitment"][name] is None:
                data["recruitment"].pop(name)
        for key, default in (("directions", {}), ("consequences", "explain"),
                             ("ties", "random"), ("bounds", {})):  # added later too
            if data["plans"].get(key) == default:
                data["plans"].pop(key)
        if data["elicitation"].get("min_changeable") == 0:  # added later too
            data["elicitation"].pop("min_changeable")
        for key in ("fewer_plans", "no_plans"):  # added later too
            if data["debrief"].get(key) is None:
                data["debrief"].pop(key, None)
        if not data["profile"]["from_screening"]:
            data["profile"].pop("from_screening")
        for q in data["screening"]:  # question kinds came later
            for key, default in (("kind", "single"), ("min", None), ("max", None),
                                 ("decimals", 0), ("unit", ""), ("brackets", None)):
                if q.get(key) == default:
                    q.pop(key)
        return json.dumps(data, sort_keys=True)

    def fingerprint(self) -> str:
        """SHA-256 of the canonical protocol (what a stored study was run with)."""
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()


def _arm_problems(p: Protocol) -> registries.Problems:
    out: registries.Problems = []
    seen: set[str] = set()
    for i, arm in enumerate(p.arms):
        if arm.id in seen:
            out.append((("arms", i, "id"), f"duplicate arm id {arm.id!r}"))
        seen.add(arm.id)
        if arm.source == "recourse" and p.plans.design != "best" and not arm.interactive:
            out.append((("arms", i, "source"), "a design that picks several plans needs "
                        "source: candidates (or plans.design: best)"))
    if p.interactive:
        if len(p.arms) > 1 and p.assignment == "within":
            out.append((("assignment",), "an interactive arm (hare) cannot be combined "
                        "within-participant"))
        if p.elicitation.scheme == "none":
            out.append((("elicitation", "scheme"), "an interactive arm (hare) needs an "
                        "elicitation (its candidates respect the stated actionable features)"))
    return out


def _id_problems(p: Protocol) -> registries.Problems:
    out: registries.Problems = []
    ids = [q.id for q in p.screening]
    for i, q in enumerate(p.screening):
        if ids.count(q.id) > 1 and ids.index(q.id) != i:
            out.append((("screening", i, "id"), f"duplicate question id {q.id!r}"))
    anchors = p.anchor_page_ids()
    check_ids: set[str] = set()
    for i, c in enumerate(p.attention_checks):
        if c.after not in anchors:
            out.append((("attention_checks", i, "after"), f"no page {c.after!r}; expected one "
                        f"of {', '.join(anchors)}"))
        if c.id in check_ids:
            out.append((("attention_checks", i, "id"), f"duplicate attention check {c.id!r}"))
        check_ids.add(c.id)
    return out


def _simulation_problems(p: Protocol) -> registries.Problems:
    """``n_actionable_probs`` has one probability per count and some mass at or above the
    elicitation's ``min_changeable``, which the scenario's items can reach."""
    probs, least = p.simulation.constraints.n_actionable_probs, p.elicitation.min_changeable
    m = registries.actionable_count(p.scenario)
    where = ("simulation", "constraints", "n_actionable_probs")
    if m is not None and least > m:
        return [(("elicitation", "min_changeable"),
                 f"the scenario has only {m} items a participant could change, got {least}")]
    if probs is None or m is None:
        return []
    if len(probs) != m:
        return [(where, f"needs one probability per possible count 1..{m}, got {len(probs)}")]
    if least and not sum(probs[least - 1:]) > 0:
        return [(where, f"no probability for {least} or more changeable items "
                 "(elicitation.min_changeable)")]
    return []


def _screening_problems(p: Protocol) -> registries.Problems:
    """``profile.from_screening`` names an entered feature and a bracketed question; a
    break between sessions follows a page of the sequence."""
    out: registries.Problems = pause_problems(p.sessions, p.page_slots())
    questions = {q.id: q for q in p.screening}
    entered = registries.entered_features(p.scenario)
    for feature, qid in p.profile.from_screening.items():
        where = ("profile", "from_screening", feature)
        if p.profile.source != "own":
            out.append((where, "only an entered profile (source: own) takes screening answers"))
        if entered is not None and feature not in entered:
            out.append((where, f"no entered feature {feature!r} in scenario {p.scenario!r}"))
        q = questions.get(qid)
        if q is None or q.brackets is None:
            out.append((where, f"needs a screening question with brackets, got {qid!r}"))
    return out


def _code_problems(p: Protocol) -> registries.Problems:
    ending, code = p.recruitment.completion, p.debrief.completion_code
    if ending is not None and ending.code and code and ending.code != code:
        return [(("recruitment", "completion", "code"), f"differs from debrief.completion_code "
                 f"{code!r}; give the completion code once")]
    return []


def _quota_problems(p: Protocol) -> registries.Problems:
    return quota_problems(p.quotas, p.time_limit, [a.id for a in p.arms], p.assignment,
                          p.sessions)


Protocol.CROSS_CHECKS = (_arm_problems, _id_problems, _simulation_problems, _code_problems,
                         _screening_problems, _quota_problems)


class ProtocolError(ValueError):
    """A protocol file is broken; ``problems`` lists (path, message) pairs.

    >>> from protocols import ProtocolError, parse_protocol
    >>> try:
    ...     parse_protocol("{id: Bad Id, title: '', arms: []}")
    ... except ProtocolError as e:
    ...     print([path for path, _ in e.problems])
    ['id (line 1)', 'title (line 1)', 'arms (line 1)']
    """

    def __init__(self, source: str, problems: list[tuple[str, str]],
                 findings: list[validation.Finding] | None = None) -> None:
        self.source = source
        self.problems = problems
        self.findings = findings or [validation.Finding((), msg) for _, msg in problems]
        lines = "\n".join(f"  - {path}: {msg}" for path, msg in problems)
        n = len(problems)
        super().__init__(f"{source}: {n} problem{'s' * (n != 1)} in the protocol:\n{lines}")


# ---- loading -------------------------------------------------------------------------------
def shipped_protocols() -> tuple[str, ...]:
    """Ids of the protocols shipped with the package.

    >>> from protocols import shipped_protocols
    >>> sorted(shipped_protocols())
    ['hare-credit', 'hare-interactive', 'icarma-personalization', 'tominaga-replication']
    """
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
    """Load and fully validate a protocol (module docstring); raise ProtocolError.

    >>> from protocols import load_protocol
    >>> load_protocol("hare-interactive").arms[0].method
    'hare'
    """
    path = resolve(id_or_path)
    return parse_protocol(path.read_text(encoding="utf-8"), source=str(path))


def parse_protocol(text: str, source: str = "<protocol>") -> Protocol:
    """Validate YAML text; every problem is listed with its path and line.

    >>> from protocols import parse_protocol
    >>> p = parse_protocol("{id: pilot, title: A pilot, arms: [{id: oracle, method: oracle}]}")
    >>> p.scenario, p.arms[0].cost_profile
    ('loan', 'linear')
    """
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
    protocol, found = validation.collect(Protocol, data)
    if protocol is None:
        located = sorted((dataclasses.replace(f, line=line_of(root, f.loc)) for f in found),
                         key=lambda f: f.line if f.line is not None else 0)
        raise ProtocolError(source, [(f.where(), f.message) for f in located], located)
    return protocol  # type: ignore[return-value]


def problems(error: ValidationError) -> registries.Problems:
    """Every (location, message) of a protocol's ValidationError, one per problem."""
    return [(f.loc, f.message) for f in validation.findings(error, Protocol)]


def line_of(root: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """The line of the deepest node of ``loc`` found in the YAML tree."""
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
    return line
