"""Fixtures of the session tests: small protocols on the exact Bayes decision rule (no
trained artifact needed) and a scripted answerer that fills any page validly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from data.store import Store
from protocols.definition.schema import Protocol, parse_protocol
from protocols.running.pages import Page

SMALL = """\
id: small
title: Small test study
scenario: loan
seed: 5
decision_model: bayes
screening:
  - {id: adult, question: "Are you 18 or older?", options: ["Yes", "No"], eligible: ["Yes"]}
profile: {source: persona}
elicitation: {scheme: ranking}
arms:
  - {id: pool, method: pool, options: {donors: 10}}
  - {id: oracle, method: oracle, options: {bins: 6, plausibility: false}}
plans: {per_participant: 3, design: stratified, distance: l1_profile}
attention_checks:
  - {id: c1, after: plan-1, question: "Pick b", options: [a, b], correct: b}
"""


@pytest.fixture
def small_protocol() -> Protocol:
    return parse_protocol(SMALL)


@pytest.fixture
def protocol_text() -> Callable[..., Protocol]:
    """parse_protocol of SMALL with replacements (old, new) applied."""

    def make(*edits: tuple[str, str]) -> Protocol:
        text = SMALL
        for old, new in edits:
            assert old in text, old
            text = text.replace(old, new)
        return parse_protocol(text)

    return make


def scripted_answer(page: Page, scenario: Any = None) -> dict[str, Any]:
    """A valid answer to any page (first eligible option, middle ratings, ...)."""
    p = page.payload
    kind = page.kind
    if kind == "consent":
        return {"agree": True}
    if kind == "screening":
        return {"answers": {q.id: ([q.options[0]] if q.kind == "multiple" else q.options[0])
                            if q.options else q.min for q in p.questions}}
    if kind in ("scenario", "persona", "decision"):
        return {}
    if kind == "profile_entry":
        return {"values": {f.feature: (f.options[0] if f.kind == "category"
                                       else (f.min + f.max) / 2) for f in p.fields}}
    if kind.startswith("elicitation_"):
        names = [i.feature for i in p.items]
        if p.scheme == "binary":
            return {"answers": {n: True for n in names}}
        if p.scheme == "ranking":
            return {"answers": {n: k + 1 for k, n in enumerate(names)}}
        return {"answers": {n: 1 for n in names}}
    if kind == "plan":
        return {"acceptance": 4, "action": 3, "acceptance_why": "fine", "action_why": "hard",
                "impossible": {i.feature: False for i in p.impossible}}
    if kind == "attention":
        return {"choice": p.options[-1]}
    if kind == "hare_choice":
        return {"choice": 0}
    if kind == "hare_accept":
        return {"accept": False}
    raise AssertionError(f"no scripted answer for {kind}")


@pytest.fixture
def answer() -> Callable[[Page], dict[str, Any]]:
    return scripted_answer


@pytest.fixture
def store(tmp_path):
    """A new DuckDB study database in the test's folder, closed afterwards."""
    s = Store(tmp_path / "study.duckdb")
    yield s
    s.close()
