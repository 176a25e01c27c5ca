"""Renderers of the pages before the plans: consent, screening, scenario, profile entry,
persona and the decision notice.

Every renderer takes the session's ``Page`` and returns the answer dict of its kind (the
contract of ``protocols.running.pages``) once the participant submitted a complete form, otherwise
None. Nothing here validates beyond "is every question answered": the session validates
every answer strictly and the controller shows its message. Beside each renderer, the load
participant's answer read off the same widgets (``study_app.web.registry.load_answers``):
consent given, eligible screening answers, a profile from the lower part of every range.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import streamlit as st

from engine.scenarios import get_scenario
from protocols.definition.interface_text import english
from protocols.definition.schema import Protocol
from protocols.running import pages as pg
from protocols.running.display import profile_fields
from study_app.web import widgets
from study_app.web.i18n import current, t, ui
from study_app.web.plan_table import profile_table_html
from study_app.web.registry import LoadPage, load_answers, renders
from study_app.web.style import notice

AGREE, DISAGREE = english("agree"), english("disagree")
_CONSENT_KEYS = {AGREE: "agree", DISAGREE: "disagree"}


@renders("consent")
def render_consent(page: pg.Page) -> dict[str, Any] | None:
    payload: pg.ConsentPayload = page.payload  # type: ignore[assignment]
    choice = widgets.one_question_form(
        page.id, ui("missing.agree"),
        lambda: widgets.choice(ui("agree_question"), [AGREE, DISAGREE], f"{page.id}:agree",
                               shown=lambda c: ui(_CONSENT_KEYS[c])),
        intro=t(payload.text))
    if choice is None:
        return None
    return {"agree": choice == AGREE}


@renders("screening")
def render_screening(page: pg.Page) -> dict[str, Any] | None:
    payload: pg.ScreeningPayload = page.payload  # type: ignore[assignment]

    def ask(q: pg.Question, key: str) -> Any:
        if q.kind == "multiple":
            return widgets.select_all(t(q.question), list(q.options), key)
        if q.kind == "number":  # the unit is the protocol's text ("years old")
            return widgets.number_field(t(q.question), key, unit=t(q.unit),
                                        minimum=q.min, maximum=q.max, decimals=q.decimals,
                                        whole=True)
        return widgets.choice(t(q.question), list(q.options), key)

    def problem(q: pg.Question, value: Any) -> str | None:
        if q.kind != "number":
            return None
        return widgets.range_problem(value, q.min, q.max, q.decimals)

    answers = widgets.item_form(page.id, payload.questions, ask, key=lambda q: q.id,
                                label=lambda q: t(q.question), problem=problem)
    return None if answers is None else {"answers": answers}


def _acknowledge(page: pg.Page, body: Any) -> dict[str, Any] | None:
    with st.form(f"{page.id}:form", border=False):
        body()
        if not widgets.submit_button(page.id):
            return None
    return {}


@renders("scenario")
def render_scenario(page: pg.Page) -> dict[str, Any] | None:
    payload: pg.TextPayload = page.payload  # type: ignore[assignment]
    return _acknowledge(page, lambda: st.markdown(t(payload.text)))


@renders("persona")
def render_persona(page: pg.Page) -> dict[str, Any] | None:
    payload: pg.PersonaPayload = page.payload  # type: ignore[assignment]

    def body() -> None:
        st.markdown(t(payload.text))
        st.html(profile_table_html(payload.rows, title=ui("table.applicant"), tr=current()))

    return _acknowledge(page, body)


@renders("decision")
def render_decision(page: pg.Page) -> dict[str, Any] | None:
    payload: pg.DecisionPayload = page.payload  # type: ignore[assignment]

    def body() -> None:
        if payload.note:
            notice(t(payload.note))
        notice(t(payload.text), bad=True)
        st.html(profile_table_html(payload.rows, title=ui("table.application"), tr=current()))

    return _acknowledge(page, body)


@renders("profile_entry")
def render_profile_entry(page: pg.Page) -> dict[str, Any] | None:
    payload: pg.ProfileEntryPayload = page.payload  # type: ignore[assignment]

    def ask(f: pg.ProfileField, key: str) -> Any:
        if f.kind == "category":
            return widgets.category_field(t(f.label), list(f.options), key,
                                          help=t(f.help) or None)
        return widgets.number_field(t(f.label), key, unit=current().unit(f.unit),
                                    minimum=f.min, maximum=f.max, decimals=f.decimals,
                                    help=t(f.help) or None)

    def problem(f: pg.ProfileField, value: Any) -> str | None:
        if f.kind == "category":
            return None
        return widgets.range_problem(value, f.min, f.max, f.decimals)

    values = widgets.item_form(page.id, payload.fields, ask, key=lambda f: f.feature,
                               label=lambda f: t(f.label), intro=t(payload.text),
                               problem=problem)
    return None if values is None else {"values": values}


@load_answers("consent")
def load_consent(page: LoadPage) -> tuple[dict[str, Any], dict[str, Any]]:
    return {"agree": AGREE}, {"agree": True}


@load_answers("screening")
def load_screening(page: LoadPage) -> tuple[dict[str, Any], dict[str, Any]]:
    return screening_widgets(page.protocol, page.rng)


def screening_widgets(protocol: Protocol,
                      rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    """(widget name -> value, stored answer) of eligible screening answers: a choice's first
    eligible option, "select all" with that option's box ticked (``<question>:<index>``), a
    number drawn from its range."""
    shown: dict[str, Any] = {}
    answers: dict[str, Any] = {}
    for q in protocol.screening:
        value = q.example_answer(np.random.default_rng(rng.randrange(2**32)))
        if q.kind == "multiple":
            for option in value:  # type: ignore[union-attr]
                shown[f"{q.id}:{q.options.index(option)}"] = True
        else:
            shown[q.id] = value
        answers[q.id] = value
    return shown, {"answers": answers}


@load_answers("profile_entry")
def load_profile_entry(page: LoadPage) -> tuple[dict[str, Any], dict[str, Any]]:
    shown: dict[str, Any] = {}
    rng = page.rng
    ranges = {f.feature: (f.min, f.max) for f in profile_fields(get_scenario(
        page.protocol.scenario))}  # the page checks them; the widget does not carry them
    for f, x in page.widgets.items():
        # The lower part of every list and range: a profile someone could improve on
        # (in a pool world, a random 16-item profile has no richer pool member that is
        # at least as high on every never-lowered item, so no plans would be shown).
        if x.type == "selectbox":
            shown[f] = rng.choice(x.options[:max(1, (len(x.options) + 1) // 2)])
        elif x.type == "number_input":
            (lo, hi), step = ranges[f], x.proto.step or 1.0
            shown[f] = round(lo + round(rng.uniform(0.1, 0.6) * (hi - lo) / step) * step, 6)
    return dict(shown), {"values": shown}
