"""A protocol as its author should see it before running it (``recourse-study validate``).

``review(id_or_path)`` gives every problem of the file at once (protocols.definition.validation), or,
for a valid file, the *resolved* protocol: the page sequence of each arm, the arms and their
share of participants, every text a participant reads with the defaults the protocol filled
in marked as defaults, the plan rules per item a plan may change (direction and
plausible-change bounds, protocols.definition.study_rules), and warnings (not errors) for choices that are legal but suspicious:

- many plans per participant (more than ``MANY_PLANS``: the reference study used 5);
- participant-visible text left to a default (consent, questions, debrief, ...);
- free-text reasons or the "impossible for you?" question switched on by default, unasked;
- a Likert elicitation whose direction (``likert_low``) or number of levels is not stated,
  or whose text seems to say the opposite direction ("1 = impossible" with 1 = easiest);
- no attention check (exclusions cannot use one);
- a shortfall policy left to its default (fewer plans are shown without notice);
- a debrief that counts the plans rated without a ``debrief.fewer_plans`` for those shown
  fewer;
- researcher words in a participant text, the scenario's included: a citation ("et al."),
  an internal key, a data set's name (protocols.definition.wording; ``text_findings``).

Nothing is created: no database, no artifact.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from engine.scenarios import get_scenario
from protocols.definition.schema import Protocol, ProtocolError, line_of, parse_protocol, resolve
from protocols.definition.sequence import page_sequence
from protocols.definition.study_rules import rules_in_words
from protocols.definition.translation import SOURCE_LANGUAGE, check, translation_files
from protocols.definition.validation import Finding
from protocols.definition.wording import TextFinding, findings_of, participant_texts

MANY_PLANS = 6
_HARD_FIRST = re.compile(r"\b1\s*(=|:|-|is)\s*(very\s+|extremely\s+)?(hard|difficult|impossible)",
                         re.IGNORECASE)
_EASY_FIRST = re.compile(r"\b1\s*(=|:|-|is)\s*(very\s+|extremely\s+)?(easy|easiest)",
                         re.IGNORECASE)


@dataclass
class Review:
    """What ``review`` found (module docstring)."""

    source: str
    protocol: Protocol | None
    errors: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    resolved: dict[str, Any] | None = None

    @property
    def valid(self) -> bool:
        """The protocol and its translation files are sound."""
        return self.protocol is not None and not self.errors

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "valid": self.valid,
                "errors": [f.as_dict() for f in self.errors],
                "warnings": [f.as_dict() for f in self.warnings],
                "resolved": self.resolved}


def review(id_or_path: str | Path) -> Review:
    """Review a shipped protocol or a file (module docstring)."""
    try:
        path = resolve(id_or_path)
        text = path.read_text(encoding="utf-8")
    except ProtocolError as e:
        return Review(e.source, None, e.findings)
    except (OSError, UnicodeDecodeError) as e:
        return Review(str(id_or_path), None, [Finding((), f"cannot read the file: {e}")])
    result = review_text(text, str(path))
    if result.protocol is not None and result.resolved is not None:
        result.errors += translation_findings(result.protocol, path.parent / "translations")
        result.resolved["languages"] = [SOURCE_LANGUAGE, *translation_files(
            result.protocol.id, path.parent / "translations")]
    return result


def translation_findings(p: Protocol, directory: Path) -> list[Finding]:
    """Every problem of the protocol's translation files (protocols.definition.translation.check): a
    text missing in a language, an unknown key, ... located in the translation file."""
    out: list[Finding] = []
    for lang, file in translation_files(p.id, directory).items():
        where = f"translations/{file.name}"
        try:
            text = file.read_text(encoding="utf-8")
            data, root = yaml.safe_load(text), yaml.compose(text)
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
            out.append(Finding((where,), f"cannot read the translation: {e}"))
            continue
        for key, message in check(p, data, lang):
            loc = tuple(key.split(".", 1))
            out.append(Finding((where, key), message, line=line_of(root, loc)))
    return out


def review_text(text: str, source: str = "<protocol>") -> Review:
    try:
        protocol = parse_protocol(text, source)
    except ProtocolError as e:
        return Review(source, None, e.findings)
    root = yaml.compose(text)
    try:  # the plan rules name features of the scenario (plans.directions, plans.bounds)
        rules = rules_in_words(protocol, get_scenario(protocol.scenario))
    except ValueError as e:
        return Review(source, None, [Finding(("plans",), str(e), line=line_of(root, ("plans",)))])
    located = [dataclasses.replace(w, line=line_of(root, w.loc)) for w in warnings(protocol)]
    return Review(source, protocol, [], located, resolved(protocol) | {"plan_rules": rules})


# ---- the resolved protocol ---------------------------------------------------------------
def _stated(model: BaseModel, name: str) -> bool:
    return name in model.model_fields_set


def texts(p: Protocol) -> list[dict[str, Any]]:
    """Every participant-visible text: path, text, and whether it is a default."""
    out: list[dict[str, Any]] = []

    def add(path: str, text: str | None, default: bool) -> None:
        if text:
            out.append({"path": path, "text": text.strip(), "default": default})

    add("consent", p.consent, not _stated(p, "consent"))
    for i, q in enumerate(p.screening):
        add(f"screening[{i}].question", q.question, False)
        add(f"screening[{i}].unit", q.unit, False)
    add("scenario_text", p.scenario_text or _scenario_story(p), p.scenario_text is None)
    add("profile.text", p.profile.shown_text(), not p.profile.text)
    if p.elicitation.scheme != "none":
        add("elicitation.text", p.elicitation.shown_text(), not p.elicitation.text)
    q = p.questions
    for name in ("acceptance", "action"):
        rq = getattr(q, name)
        add(f"questions.{name}.text", rq.text, not _stated(q, name))
        add(f"questions.{name}.labels", " / ".join(rq.labels),
            not _stated(q, name) or not _stated(rq, "labels"))
    if q.why.enabled:
        add("questions.why.text", q.why.text, not _stated(q, "why") or not _stated(q.why, "text"))
    if q.impossible:
        add("questions.impossible_text", q.impossible_text, not _stated(q, "impossible_text"))
    for i, c in enumerate(p.attention_checks):
        add(f"attention_checks[{i}].question", c.question, False)
    if p.plans.shortfall.then == "end":
        add("plans.shortfall.message", p.plans.shortfall.message,
            not _stated(p.plans.shortfall, "message"))
    if p.sessions.two:
        add("sessions.text", p.sessions.text, not _stated(p, "sessions")
            or not _stated(p.sessions, "text"))
    add("debrief.text", p.debrief.text, not _stated(p, "debrief") or not _stated(p.debrief, "text"))
    if p.debrief.fewer_plans:
        add("debrief.fewer_plans", p.debrief.fewer_plans, False)
    if p.debrief.no_plans:
        add("debrief.no_plans", p.debrief.no_plans, False)
    return out


def _scenario_story(p: Protocol) -> str:
    return get_scenario(p.scenario).story


def resolved(p: Protocol) -> dict[str, Any]:
    """The resolved protocol (module docstring) as a JSON-ready dict."""
    total = sum(a.weight for a in p.arms)
    arms = [{"id": a.id, "method": a.method, "options": a.options,
             "personalized": a.personalized, "cost_profile": a.cost_profile,
             "source": a.source, "base": a.base, "interactive": a.interactive,
             "share": 1.0 if p.assignment == "within" else round(a.weight / total, 4),
             "plans": p.plans_per_participant(a.id)} for a in p.arms]
    sequences = {a.id: page_sequence(p, p.plans_per_participant(a.id), a.interactive)
                 for a in (p.arms[:1] if p.assignment == "within" else p.arms)}
    if p.sessions.two:  # the pause page between the two sessions
        for seq in sequences.values():
            seq.insert(seq.index(p.sessions.break_after) + 1, "pause")
    return {
        "id": p.id, "title": p.title, "scenario": p.scenario, "seed": p.seed,
        "assignment": p.assignment, "arms": arms, "page_sequence": sequences,
        "plans": p.plans.model_dump(mode="json"), "exclusions": p.exclusions.model_dump(),
        "texts": texts(p), "defaults": defaults(p), "fingerprint": p.fingerprint(),
    }


def defaults(p: Protocol, model: BaseModel | None = None, prefix: str = "") -> list[str]:
    """Paths of every setting the protocol left to its default."""
    model = model if model is not None else p
    out: list[str] = []
    for name in type(model).model_fields:
        path = f"{prefix}.{name}" if prefix else name
        value = getattr(model, name)
        if name not in model.model_fields_set:
            out.append(path)
        elif isinstance(value, BaseModel):
            out += defaults(p, value, path)
    return out


# ---- warnings ----------------------------------------------------------------------------
def warnings(p: Protocol) -> list[Finding]:
    """Suspicious but legal choices (module docstring)."""
    out: list[Finding] = []
    most = max(p.plans_per_participant(a.id) for a in p.arms)
    if most > MANY_PLANS:
        out.append(Finding(("plans", "per_participant"), f"{most} plans per participant (the "
                           "reference study used 5); long studies lose attention"))
    for t in texts(p):
        if t["default"] and not t["path"].endswith(".labels"):  # the 7-point labels are standard
            out.append(Finding(_loc(t["path"]), f"participants read a default text: "
                               f"{_short(t['text'])!r}; set {t['path']} to say it yourself"))
    q = p.questions
    if q.why.enabled and not (_stated(q, "why") and _stated(q.why, "enabled")):
        out.append(Finding(("questions", "why", "enabled"), "free-text reasons are asked by "
                           "default; state questions.why.enabled: true or false"))
    if q.impossible and not _stated(q, "impossible"):
        out.append(Finding(("questions", "impossible"), "'impossible for you?' is asked by "
                           "default; state questions.impossible: true or false"))
    out += _likert_warnings(p)
    if not p.attention_checks:
        out.append(Finding(("attention_checks",), "no attention check: exclusions cannot "
                           "use one"))
    out += wording_findings(p)
    if _PLANS_RATED.search(p.debrief.text) and not p.debrief.fewer_plans:
        out.append(Finding(("debrief", "text"), "the debrief speaks of the plans a participant "
                           "rated; one shown fewer (no plan found, a plan breaking a rule) "
                           "reads it too: set debrief.fewer_plans"))
    if not _stated(p.plans, "shortfall"):
        out.append(Finding(("plans", "shortfall"), "when fewer plans can be shown than asked, "
                           "participants see fewer (default then: fewer); state "
                           "plans.shortfall.then: fewer, fallback or end"))
    return out


def wording_findings(p: Protocol) -> list[Finding]:
    """Researcher words in what participants read (``text_findings``) as findings: the
    warnings that are about the participant's text itself, not a design choice."""
    return [Finding(_loc(f.path), f.message) for f in text_findings(p)]


def text_findings(p: Protocol) -> list[TextFinding]:
    """Every researcher word a participant of ``p`` would read, its scenario's title, story,
    outcome words, labels, help, units, options and codes included
    (protocols.definition.wording): what ``validate`` warns about and a pre-launch report
    lists."""
    return findings_of(participant_texts(p, texts(p)))


def _likert_warnings(p: Protocol) -> list[Finding]:
    e = p.elicitation
    if e.scheme != "likert":
        return []
    out = []
    if not _stated(e, "likert_low"):
        out.append(Finding(("elicitation", "likert_low"), "the Likert direction is not "
                           "stated; 1 = easiest is assumed (set likert_low: easiest or hardest)"))
    if not _stated(e, "likert_levels"):
        out.append(Finding(("elicitation", "likert_levels"), "the number of Likert levels is "
                           "not stated; one level per changeable item is used"))
    wrong = _HARD_FIRST if e.likert_low == "easiest" else _EASY_FIRST
    if e.text and wrong.search(e.text):
        out.append(Finding(("elicitation", "text"), f"the text reads {wrong.search(e.text)[0]!r} "
                           f"but likert_low is {e.likert_low!r}: the answers would be read "
                           "the wrong way round"))
    return out


# a debrief that counts the plans a participant rated ("one of the two plans you rated")
_PLANS_RATED = re.compile(r"\b(two|three|four|five|both|\d+)\s+plans\b|\bplans you rated\b",
                          re.IGNORECASE)


def _loc(path: str) -> tuple[Any, ...]:
    parts: list[Any] = []
    for piece in re.findall(r"[^.\[\]]+", path):
        parts.append(int(piece) if piece.isdigit() else piece)
    return tuple(parts)


def _short(text: str, n: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= n else one[: n - 1] + "…"
