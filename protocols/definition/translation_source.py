"""The English source of a protocol's translations: every text its participants read, by key.

A translation file (protocols.definition.translation) has three sections, each a mapping of these keys:

- ``texts``: the protocol's own texts, keyed by where they are in the protocol, questions
  and attention checks by their id: ``consent``, ``screening.<id>.question``,
  ``screening.<id>.options`` (a list, in the protocol's order), ``scenario_text``,
  ``profile.text``, ``plan_view.text``, ``questions.acceptance.labels``, ``debrief.text``...
  Only the texts a participant of this protocol can read are keys (a protocol without an
  elicitation has no ``elicitation.text``).
- ``scenario``: the scenario's title and story, and per item its ``<item>.label``,
  ``<item>.help`` and ``<item>.levels`` (a list), and ``<item>.unit`` for a number shown
  with a unit: a pattern with ``{value}`` ("{value} 年"), or a currency,
  ``{currency: JPY, factor: 1000000}`` (the number in display units times ``factor`` is
  the amount, formatted for the language by Babel; ``entry``: the unit a number is typed
  in, e.g. 百万円), and ``<item>.codes`` (a list) for a number that is a code: what each
  code means, shown beside it.
- ``interface``: the words of the study interface itself (protocols.definition.interface_text).

Templates keep their fields: a translated text has the same ``{fields}`` as its English
source (``{ordinal}`` in the plan text, ``{plans}`` in the consent, ``{number}``...).
"""

from __future__ import annotations

from typing import Any

from engine.scenarios import get_scenario
from protocols.definition.interface_text import INTERFACE
from protocols.definition.schema import Protocol

Source = dict[str, str | list[str]]

# Fills of the templates a protocol's texts may hold (English words are the protocol's own:
# Protocol.promised_plans and PlanViewSpec.plan_text).
FILLS: dict[str, str] = {
    "fill.plans": "{n} plans",
    "fill.plans_up_to": "up to {n} plans",
    "fill.ordinal": "{n}th",
}


def protocol_texts(p: Protocol) -> Source:
    """The ``texts`` section's English: every protocol text a participant can read."""
    out: Source = {"consent": p.consent}
    for q in p.screening:
        out[f"screening.{q.id}.question"] = q.question
        if q.options:
            out[f"screening.{q.id}.options"] = list(q.options)
        if q.unit:
            out[f"screening.{q.id}.unit"] = q.unit
    if p.sessions.two:
        out["sessions.text"] = p.sessions.text
    if p.scenario_text:
        out["scenario_text"] = p.scenario_text
    out["profile.text"] = p.profile.shown_text()
    if p.elicitation.scheme != "none":
        out["elicitation.text"] = p.elicitation.shown_text()
    view = p.plan_view
    if view.decision_text:
        out["plan_view.decision_text"] = view.decision_text
    out["plan_view.text"] = view.text
    out["plan_view.current_label"] = view.current_label
    out["plan_view.suggested_label"] = view.suggested_label
    q = p.questions
    for name in ("acceptance", "action"):
        out[f"questions.{name}.text"] = getattr(q, name).text
        out[f"questions.{name}.labels"] = list(getattr(q, name).labels)
    if q.why.enabled:
        out["questions.why.text"] = q.why.text
    if q.impossible:
        out["questions.impossible_text"] = q.impossible_text
    for c in p.attention_checks:
        out[f"attention_checks.{c.id}.question"] = c.question
        out[f"attention_checks.{c.id}.options"] = list(c.options)
    out["plans.shortfall.message"] = p.plans.shortfall.message
    out["debrief.text"] = p.debrief.text
    if p.debrief.fewer_plans:
        out["debrief.fewer_plans"] = p.debrief.fewer_plans
    if p.debrief.no_plans:
        out["debrief.no_plans"] = p.debrief.no_plans
    return {k: v.strip() if isinstance(v, str) else v for k, v in out.items()}


def scenario_texts(p: Protocol) -> dict[str, Any]:
    """The ``scenario`` section's English (a unit's value is its English unit word)."""
    sc = get_scenario(p.scenario)
    out: dict[str, Any] = {"title": sc.title}
    if not p.scenario_text:
        out["story"] = sc.story.strip()
    if not p.plan_view.decision_text:
        out["outcome.unfavourable"] = sc.unfavourable_label
    for f in sc.features:
        out[f"{f.name}.label"] = f.label
        if f.help:
            out[f"{f.name}.help"] = f.help
        if f.display.kind == "categorical":
            out[f"{f.name}.levels"] = list(f.display.categories)
        elif f.display.unit:
            out[f"{f.name}.unit"] = f.display.unit
        if f.display.codes:  # what a coded number means, in the order of the codes
            out[f"{f.name}.codes"] = [meaning for _, meaning in f.display.codes]
    return out


def interface_texts() -> Source:
    """The ``interface`` section's English."""
    return {**INTERFACE, **FILLS}


def source(p: Protocol) -> dict[str, dict[str, Any]]:
    """Every section's English source of protocol ``p``."""
    return {"texts": protocol_texts(p), "scenario": scenario_texts(p),
            "interface": interface_texts()}
