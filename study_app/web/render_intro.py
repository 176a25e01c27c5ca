"""Renderers of the pages before the plans: consent, screening, scenario, profile entry,
persona and the decision notice.

Every renderer takes the session's ``Page`` and returns the answer dict of its kind (the
contract of ``protocols.pages``) once the participant submitted a complete form, otherwise
None. Nothing here validates beyond "is every question answered": the session validates
every answer strictly and the controller shows its message.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from protocols import pages as pg
from study_app.web import widgets
from study_app.web.plan_table import profile_table_html
from study_app.web.registry import renders
from study_app.web.style import notice

AGREE, DISAGREE = "I agree to take part", "I do not agree"


@renders("consent")
def render_consent(page: pg.Page) -> dict[str, Any] | None:
    payload: pg.ConsentPayload = page.payload  # type: ignore[assignment]
    choice = widgets.one_question_form(
        page.id, "whether you agree to take part",
        lambda: widgets.choice("Do you agree to take part?", [AGREE, DISAGREE],
                               f"{page.id}:agree"), intro=payload.text)
    if choice is None:
        return None
    return {"agree": choice == AGREE}


@renders("screening")
def render_screening(page: pg.Page) -> dict[str, Any] | None:
    payload: pg.ScreeningPayload = page.payload  # type: ignore[assignment]
    answers = widgets.item_form(
        page.id, payload.questions, lambda q, k: widgets.choice(q.question, list(q.options), k),
        key=lambda q: q.id, label=lambda q: q.question)
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
    return _acknowledge(page, lambda: st.markdown(payload.text))


@renders("persona")
def render_persona(page: pg.Page) -> dict[str, Any] | None:
    payload: pg.PersonaPayload = page.payload  # type: ignore[assignment]

    def body() -> None:
        st.markdown(payload.text)
        st.html(profile_table_html(payload.rows, title="The applicant"))

    return _acknowledge(page, body)


@renders("decision")
def render_decision(page: pg.Page) -> dict[str, Any] | None:
    payload: pg.DecisionPayload = page.payload  # type: ignore[assignment]

    def body() -> None:
        if payload.note:
            notice(payload.note)
        notice(payload.text, bad=True)
        st.html(profile_table_html(payload.rows, title="The application"))

    return _acknowledge(page, body)


@renders("profile_entry")
def render_profile_entry(page: pg.Page) -> dict[str, Any] | None:
    payload: pg.ProfileEntryPayload = page.payload  # type: ignore[assignment]

    def ask(f: pg.ProfileField, key: str) -> Any:
        if f.kind == "category":
            return widgets.category_field(f.label, list(f.options), key, help=f.help or None)
        return widgets.number_field(f.label, key, unit=f.unit, minimum=f.min, maximum=f.max,
                                    decimals=f.decimals, help=f.help or None)

    values = widgets.item_form(page.id, payload.fields, ask, key=lambda f: f.feature,
                               label=lambda f: f.label, intro=payload.text)
    return None if values is None else {"values": values}
