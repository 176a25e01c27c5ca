"""Researcher words in participant texts: what ``validate`` flags before a study runs.

A participant reads the protocol's texts (``protocols.definition.review.texts``) and the
scenario's texts: its title (the scenario page's heading and the progress bar), story,
outcome words, and per item its label, help, unit and options. Words meant for researchers
make a study look careless or give its design away, so each of these is flagged with the
text's path:

- a citation: "et al.", "(Author, 2023)", "[12]", "paper 003", "Table 1", "Appendix B";
- an internal key: a snake_case name (``loan_amount``), a template field left in braces
  (``{ordinal}`` outside the plan text), a page id (``plan-3``);
- a data set's name ("German Credit", "Adult census data", "COMPAS", "GiveMeSomeCredit",
  "UCI", "Statlog") or a stand-in ("standing in for", "in place of"): the study's
  applicant is a person, not a row of a named benchmark. The debrief may say where the
  records came from (disclosing it is what a debrief is for), so it is not checked for
  data-set names. A scenario keeps such names in ``about``, which only researchers read.

``findings_of`` checks (path, text) pairs; ``protocols.definition.review.text_findings`` runs
it on every text of a protocol, its scenario's included; ``scenario_findings`` checks a
scenario on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from engine.scenarios import get_scenario
from engine.scenarios.base import Scenario
from protocols.definition.schema import Protocol

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bet\s+al\b\.?", re.IGNORECASE), "a citation"),
    (re.compile(r"\([A-Z][A-Za-z'-]+(?: and [A-Z][A-Za-z'-]+)?,? (?:19|20)\d\d[a-z]?\)"),
     "a citation"),
    (re.compile(r"\[\d+(?:[,-]\s*\d+)*\]"), "a citation"),
    (re.compile(r"\b(?:paper\s+0\d\d|(?:Table|Appendix|Section|Eq\.)\s+[A-Z]?\d)", re.IGNORECASE),
     "a reference to a paper's part"),
    (re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b"), "an internal key"),
    (re.compile(r"\{[a-z_]+\}"), "a template field"),
    (re.compile(r"\b(?:plan|hare|attention)-\d+\b"), "a page id"),
)
# Names of the data sets the shipped scenarios read, and how a stand-in is announced.
_DATA_SETS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:German\s+Credit|Give\s*Me\s*Some\s*Credit|COMPAS|ProPublica|Statlog|"
                r"UCI|CARLA|CARMA|Adult(?=\s+(?:census|data|income)\b)|\(Adult\))"),
     "a data set's name"),
    (re.compile(r"\b(?:stand(?:s|ing)?\s+in\s+for|in\s+place\s+of)\b", re.IGNORECASE),
     "a stand-in for another data set"),
)
# Texts that may name where the records came from.
_MAY_NAME_DATA = ("debrief.text",)


@dataclass(frozen=True)
class TextFinding:
    """A researcher word in a participant text: where, what kind, the words."""

    path: str
    what: str
    words: str

    @property
    def message(self) -> str:
        return (f"participants read {self.what}, {self.words!r}, meant for researchers: say "
                "it in the participant's words")


def researcher_words(text: str, *, data_sets: bool = True) -> list[tuple[str, str]]:
    """(what, matched words) of every researcher word in ``text`` (module docstring);
    ``data_sets=False`` leaves data-set names alone (a debrief)."""
    out = []
    for pattern, what in _PATTERNS + (_DATA_SETS if data_sets else ()):
        out += [(what, m.group(0)) for m in pattern.finditer(text)]
    return out


def scenario_texts(sc: Scenario) -> list[tuple[str, str]]:
    """(path, text) of every scenario text a participant can read."""
    where = f"scenario {sc.name}"
    out = [(f"{where}: title", sc.title), (f"{where}: story", sc.story),
           (f"{where}: outcome.favourable", sc.favourable_label),
           (f"{where}: outcome.unfavourable", sc.unfavourable_label)]
    for f in sc.features:
        out.append((f"{where}: {f.name}.label", f.label))
        if f.help:
            out.append((f"{where}: {f.name}.help", f.help))
        if f.levels:
            out += [(f"{where}: {f.name}.levels", level) for level in f.levels]
        elif f.display.unit:
            out.append((f"{where}: {f.name}.unit", f.display.unit))
    return [(path, text) for path, text in out if text]


def participant_texts(p: Protocol, protocol_texts: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(path, text) of everything a participant reads: the protocol's texts (the consent as
    shown, its ``{plans}`` filled in) and the scenario's (``scenario_texts``)."""
    shown = {"consent": p.consent_text(),  # as filled in on the page
             "sessions.text": p.sessions.text.replace("{when}", "2030-01-15 09:00 UTC")}
    out = [(t["path"], shown.get(t["path"], t["text"])) for t in protocol_texts]
    return out + scenario_texts(get_scenario(p.scenario))


def findings_of(texts: list[tuple[str, str]]) -> list[TextFinding]:
    """Every researcher word of the (path, text) pairs, data-set names except where a text
    may name its records (``_MAY_NAME_DATA``)."""
    return [TextFinding(path, what, words) for path, text in texts
            for what, words in researcher_words(text, data_sets=path not in _MAY_NAME_DATA)]


def scenario_findings(sc: Scenario | str) -> list[TextFinding]:
    """Every researcher word in a scenario's participant texts (a name or a Scenario)."""
    return findings_of(scenario_texts(get_scenario(sc) if isinstance(sc, str) else sc))
