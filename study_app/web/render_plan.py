"""Renderers of plans: the rated plan view and the HARE pairwise choice and accept/go-on
pages (renderer contract in ``study_app.web.render_intro``).

The plan page follows the reference study's order: the plan (current -> suggested, every
item, actions highlighted apart from their consequences), acceptance on a 7-point scale,
why, "is it impossible for you?" for each item the plan asks to change, action on a 7-point
scale, why.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from protocols.definition.interface_text import english
from protocols.running import pages as pg
from study_app.web import widgets
from study_app.web.i18n import current, t, ui
from study_app.web.plan_table import legend_html, plan_table_html, shown_cell
from study_app.web.registry import LoadPage, load_answers, renders

OPTION_LABELS = (english("hare.plan_a"), english("hare.plan_b"))  # values; shown translated
_OPTION_KEYS = {OPTION_LABELS[0]: "hare.plan_a", OPTION_LABELS[1]: "hare.plan_b"}
ACCEPT_PROBABILITY = 0.35  # the load participant accepts HARE's shown plan (else goes on)


def _why(page: pg.Page, why: pg.WhyQuestion | None, name: str) -> str | None:
    if why is None:
        return None
    return widgets.free_text(t(why.text), f"{page.id}:{name}", max_chars=why.max_chars,
                             min_chars=why.min_chars)


@renders("plan")
def render_plan(page: pg.Page) -> dict[str, Any] | None:
    p: pg.PlanPayload = page.payload  # type: ignore[assignment]
    tr = current()
    st.markdown(t(p.text))
    st.html(plan_table_html(p.rows, current_label=t(p.current_label),
                            suggested_label=t(p.suggested_label), tr=tr))
    impossible: dict[str, bool | None] = {}
    marks = widgets.MissingMarks()
    with st.form(f"{page.id}:form"):
        acceptance = widgets.seven_point(t(p.acceptance.text), p.acceptance.labels,
                                         f"{page.id}:acceptance")
        marks.slot("acceptance")
        acceptance_why = _why(page, p.why, "acceptance_why")
        marks.slot("acceptance_why")
        if p.impossible:
            st.markdown(f"**{t(p.impossible_text)}**")
            rows = {row.feature: row for row in p.rows}  # numbers shown as in the table
            for item in p.impossible:
                row = rows[item.feature]
                impossible[item.feature] = widgets.yes_no(
                    f"{t(item.label)}: {shown_cell(row, 'current', tr)} → "
                    f"{shown_cell(row, 'suggested', tr)}",
                    f"{page.id}:impossible:{item.feature}")
                marks.slot(f"impossible:{item.feature}")
        action = widgets.seven_point(t(p.action.text), p.action.labels, f"{page.id}:action")
        marks.slot("action")
        action_why = _why(page, p.why, "action_why")
        marks.slot("action_why")
        if not widgets.submit_button(page.id):
            return None
    missing: dict[str, str] = {}
    problems: dict[str, str] = {}
    if acceptance is None:
        missing["acceptance"] = ui("missing.acceptance")
    missing |= {f"impossible:{i.feature}": ui("missing.impossible", label=t(i.label))
                for i in p.impossible if impossible[i.feature] is None}
    if action is None:
        missing["action"] = ui("missing.action")
    if p.why is not None:
        for slot, order, text in (("acceptance_why", "first", acceptance_why),
                                  ("action_why", "second", action_why)):
            if (found := widgets.length_problem(text, p.why.max_chars)) is not None:
                missing[slot], problems[slot] = ui(f"missing.reason_{order}_text"), found
            elif len(text or "") < p.why.min_chars:
                missing[slot] = ui(f"missing.reason_{order}", n=p.why.min_chars)
    if missing:
        marks.show(missing, problems)
        return None
    return {"acceptance": acceptance, "action": action,
            "acceptance_why": acceptance_why or "", "action_why": action_why or "",
            "impossible": impossible}


def _query_caption(query: int, budget: int | None) -> None:
    st.caption(ui("hare.question_of", query=query, budget=budget) if budget
               else ui("hare.question", query=query))


@renders("hare_choice")
def render_hare_choice(page: pg.Page) -> dict[str, Any] | None:
    p: pg.HareChoicePayload = page.payload  # type: ignore[assignment]
    tr = current()
    _query_caption(p.query, p.budget)
    st.markdown(t(p.text))
    # the two plans side by side from 900 px (comparing without scrolling), stacked below
    tables = [f'<div class="rs-pair-item" data-testid="rs-pair-item">'
              f'{_plan_html(option.rows, ui(_OPTION_KEYS[label]))}</div>'
              for label, option in zip(OPTION_LABELS, p.options, strict=True)]
    st.html(f'{legend_html(p.options[0].rows + p.options[1].rows, tr)}'
            f'<div class="rs-pair" data-testid="rs-pair">{"".join(tables)}</div>')
    choice = widgets.one_question_form(
        page.id, ui("hare.missing_choice"), lambda: widgets.choice(
            ui("hare.choice"), list(OPTION_LABELS), f"{page.id}:choice",
            shown=lambda o: ui(_OPTION_KEYS[o])))
    if choice is None:
        return None
    return {"choice": OPTION_LABELS.index(choice)}


def _plan_html(rows: list, title: str) -> str:
    """A HARE candidate's table, its headings in the participant's language."""
    return plan_table_html(rows, title=title, legend=False, tr=current(),
                           current_label=ui("hare.now"), suggested_label=ui("hare.suggested"))


ACCEPT, GO_ON = english("hare.accept"), english("hare.go_on")  # values; shown translated


@renders("hare_accept")
def render_hare_accept(page: pg.Page) -> dict[str, Any] | None:
    p: pg.HareAcceptPayload = page.payload  # type: ignore[assignment]
    _query_caption(p.query, p.budget)
    st.markdown(t(p.text))
    st.html(legend_html(p.rows, current()) + _plan_html(p.rows, ui("hare.the_plan")))
    choice = widgets.one_question_form(
        page.id, ui("hare.missing_accept"),
        lambda: widgets.choice(ui("hare.decision"), [ACCEPT, GO_ON], f"{page.id}:accept",
                               shown=lambda o: ui("hare.accept" if o == ACCEPT
                                                  else "hare.go_on")))
    if choice is None:
        return None
    return {"accept": choice == ACCEPT}


@load_answers("plan")
def load_plan(page: LoadPage) -> tuple[dict[str, Any], dict[str, Any]]:
    """Ratings drawn on the 7-point scales, a reason, "impossible?" for a fifth of the items
    (the rating model itself needs plan metrics the server never sends to a browser)."""
    w, rng = page.widgets, page.rng
    shown: dict[str, Any] = {}
    answer: dict[str, Any] = {"impossible": {}}
    for name in ("acceptance", "action"):
        value = rng.randint(1, 7)
        shown[name] = next(o for o in w[name].options if o.split(" ")[0] == str(value))
        answer[name] = value
    for name in ("acceptance_why", "action_why"):
        if name in w:
            shown[name] = answer[name] = f"load test reason {rng.randrange(1000)}"
    for key in w:
        if key.startswith("impossible:"):
            flag = rng.random() < 0.2
            shown[key] = "Yes" if flag else "No"
            answer["impossible"][key.split(":", 1)[1]] = flag
    return shown, answer


@load_answers("hare_choice")
def load_hare_choice(page: LoadPage) -> tuple[dict[str, Any], dict[str, Any]]:
    choice = page.rng.randrange(2)
    return {"choice": OPTION_LABELS[choice]}, {"choice": choice}


@load_answers("hare_accept")
def load_hare_accept(page: LoadPage) -> tuple[dict[str, Any], dict[str, Any]]:
    accept = page.rng.random() < ACCEPT_PROBABILITY
    return {"accept": ACCEPT if accept else GO_ON}, {"accept": accept}
