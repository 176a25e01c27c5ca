"""Researcher words in participant texts: what ``validate`` flags before a study runs.

A participant reads the protocol's texts (``protocols.definition.review.texts``) and the scenario's
title, item labels and options. Words meant for researchers make a study look careless or
give its design away, so each of these is flagged with the text's path:

- a citation: "et al.", "(Author, 2023)", "[12]", "paper 003", "Table 1", "Appendix B";
- an internal key: a snake_case name (``loan_amount``), a template field left in braces
  (``{ordinal}`` outside the plan text), a page id (``plan-3``).
"""

from __future__ import annotations

import re
from typing import Any

from engine.scenarios import get_scenario
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


def researcher_words(text: str) -> list[tuple[str, str]]:
    """(what, matched words) of every researcher word in ``text`` (module docstring)."""
    out = []
    for pattern, what in _PATTERNS:
        out += [(what, m.group(0)) for m in pattern.finditer(text)]
    return out


def participant_texts(p: Protocol, protocol_texts: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(path, text) of everything a participant reads: the protocol's texts (the consent as
    shown, its ``{plans}`` filled in) and the scenario's title, item labels and options."""
    shown = {"consent": p.consent_text(),  # as filled in on the page
             "sessions.text": p.sessions.text.replace("{when}", "2030-01-15 09:00 UTC")}
    out = [(t["path"], shown.get(t["path"], t["text"])) for t in protocol_texts]
    sc = get_scenario(p.scenario)
    out.append((f"scenario {sc.name}: title", sc.title))
    for f in sc.features:
        out.append((f"scenario {sc.name}: {f.name}.label", f.label))
        out += [(f"scenario {sc.name}: {f.name}.levels", level) for level in f.levels]
    return out
