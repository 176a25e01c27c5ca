"""Renderers of the pre-hoc elicitation: binary, ranking and likert (renderer contract in
``study_app.web.render_intro``).

Answers follow ``protocols.running.pages.ElicitationAnswer``: binary ``{feature: bool}``; ranking
``{feature: rank 1..m or None}`` (1 = easiest among the m items the person can change,
None = cannot change); likert ``{feature: difficulty 1..levels or None}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from protocols.definition.interface_text import english
from protocols.running import pages as pg
from protocols.running.pages.elicitation import changeable
from study_app.web import widgets
from study_app.web.i18n import t, ui
from study_app.web.registry import LoadPage, load_answers, renders

CANNOT = english("elicitation.cannot")  # the option's value; shown in the participant's words


@renders("elicitation_binary")
def render_elicitation_binary(page: pg.Page) -> dict[str, Any] | None:
    payload: pg.ElicitationPayload = page.payload  # type: ignore[assignment]
    answers = widgets.item_form(
        page.id, payload.items,
        lambda item, key: widgets.yes_no(ui("elicitation.could_change", label=t(item.label)),
                                         key, help=t(item.help) or None),
        key=lambda item: item.feature, label=lambda item: t(item.label),
        intro=with_minimum(t(payload.text), payload),
        required=payload.default is None)
    return None if answers is None else enough(with_default(answers, payload.default), payload)


def with_minimum(intro: str, payload: pg.ElicitationPayload) -> str:
    """The page's instructions, and the minimum of changeable items when it has one."""
    if not payload.min_changeable:
        return intro
    return f"{intro}\n\n{ui('elicitation.min_changeable', n=payload.min_changeable)}"


def enough(answer: dict[str, Any], payload: pg.ElicitationPayload) -> dict[str, Any] | None:
    """``answer`` when it leaves at least the page's minimum of items changeable; else None,
    and the minimum shown as the reason (the state machine refuses such an answer too)."""
    if changeable(answer["answers"]) >= payload.min_changeable:
        return answer
    st.error(ui("elicitation.min_changeable", n=payload.min_changeable))
    return None


def with_default(answers: dict[str, Any], default: Any,
                 convert: Callable[[Any], Any] = lambda v: v) -> dict[str, Any]:
    """The answer: each given value through ``convert``, each unanswered item (None) at the
    protocol's declared ``default`` (``cannot``: None) and named in ``left_at_default`` (the
    page asked for every item when the protocol declares none)."""
    left = [k for k, v in answers.items() if v is None]
    value = None if default == "cannot" else default
    return {"answers": {k: value if v is None else convert(v) for k, v in answers.items()},
            "left_at_default": left}


@renders("elicitation_ranking")
def render_elicitation_ranking(page: pg.Page) -> dict[str, Any] | None:
    """The ordering widget re-runs the page on every move, so it lives outside a form; the
    Continue button submits the order shown."""
    payload: pg.ElicitationPayload = page.payload  # type: ignore[assignment]
    st.markdown(with_minimum(t(payload.text), payload))
    st.caption(ui("elicitation.ranking_hint"))
    ranks = widgets.ranking([(i.feature, t(i.label)) for i in payload.items],
                            f"{page.id}:ranking", cannot_label=ui("elicitation.cannot"))
    widgets.offer_draft(page.id, {"answers": ranks})  # what Continue would submit now
    declared = payload.default == "shown_order"  # the protocol takes an untouched order
    as_shown = not declared and st.checkbox(ui("elicitation.as_shown"),
                                            key=f"{page.id}:as-shown")
    if not st.button(ui("continue"), type="primary", key=f"{page.id}:submit"):
        return None
    touched = widgets.ranking_touched(f"{page.id}:ranking")
    if declared and not touched:
        return enough({"answers": ranks, "left_at_default": list(ranks)}, payload)
    if not (touched or as_shown):
        st.error(ui("elicitation.untouched"))
        return None
    return enough({"answers": ranks}, payload)


@renders("elicitation_likert")
def render_elicitation_likert(page: pg.Page) -> dict[str, Any] | None:
    payload: pg.ElicitationPayload = page.payload  # type: ignore[assignment]
    levels = int(payload.levels or 5)
    options: list[int | str] = [*range(1, levels + 1), CANNOT]

    def fmt(v: int | str) -> str:
        if v == CANNOT:
            return ui("elicitation.cannot")
        if v == 1:
            return f"1 · {ui('elicitation.very_easy')}"
        if v == levels:
            return f"{levels} · {ui('elicitation.very_hard')}"
        return str(v)

    answers = widgets.item_form(
        page.id, payload.items,
        lambda item, key: st.radio(
            ui("elicitation.how_hard", label=t(item.label)), options, index=None,
            format_func=fmt, horizontal=True, key=key, help=t(item.help) or None),
        key=lambda item: item.feature, label=lambda item: t(item.label),
        intro=with_minimum(t(payload.text), payload),
        required=payload.default is None)
    if answers is None:
        return None
    return enough(with_default(answers, payload.default, lambda v: None if v == CANNOT else v),
                  payload)


@load_answers("elicitation_binary")
def load_elicitation_binary(page: LoadPage) -> tuple[dict[str, Any], dict[str, Any]]:
    answers = {f: page.rng.random() < 0.7 for f in page.widgets if f != "submit"}
    for f in _short_of_minimum(page, answers):
        answers[f] = True
    return {f: "Yes" if v else "No" for f, v in answers.items()}, {"answers": answers}


@load_answers("elicitation_likert")
def load_elicitation_likert(page: LoadPage) -> tuple[dict[str, Any], dict[str, Any]]:
    shown = {f: page.rng.choice(x.options) for f, x in page.widgets.items()
             if x.type == "radio"}
    answers = {f: None if v == CANNOT else int(v.split(" ")[0]) for f, v in shown.items()}
    for f in _short_of_minimum(page, answers):
        shown[f], answers[f] = page.widgets[f].options[0], 1
    return shown, {"answers": answers}


def _short_of_minimum(page: LoadPage, answers: dict[str, Any]) -> list[str]:
    """The items (in random order) a load participant also marks changeable so that the
    answer leaves the protocol's ``elicitation.min_changeable``, as the page asks."""
    cannot = [f for f, v in answers.items() if v is None or v is False]
    page.rng.shuffle(cannot)
    return cannot[:max(0, page.protocol.elicitation.min_changeable - changeable(answers))]


@load_answers("elicitation_ranking")
async def load_elicitation_ranking(page: LoadPage) -> tuple[dict[str, Any], dict[str, Any]]:
    """A few of the ranking widget's buttons pressed (move up/down, cannot change), then the
    order shown confirmed (an untouched ranking is refused) or, where the protocol declares
    the shown order its default, left as it is."""
    screen, pressed = page.screen, 0
    for _ in range(page.rng.randint(0, 3)):
        buttons = [w for k, w in screen.widgets.items()
                   if k.startswith(f"{page.page_id}:ranking:") and not w.proto.disabled]
        if not buttons:
            break
        screen = page.screen = await page.press(page.rng.choice(buttons))
        pressed += 1
    ranks = ranking_shown(screen, page.page_id)
    for name in _short_of_minimum(page, ranks):  # "I can change this" again
        screen = page.screen = await page.press(
            screen.widgets[f"{page.page_id}:ranking:on:{name}"])
        pressed += 1
    ranks = ranking_shown(screen, page.page_id)
    if "as-shown" in page.widgets:
        return {"as-shown": True}, {"answers": ranks}
    return {}, {"answers": ranks, "left_at_default": [] if pressed else list(ranks)}


def ranking_shown(screen: Any, page_id: str) -> dict[str, int | None]:
    """The ranks the ranking widget shows: items in the order of their "Move up" buttons
    (1 = easiest), None for those marked "cannot change" (an "I can change this" button)."""
    prefix = f"{page_id}:ranking:"
    ranks: dict[str, int | None] = {}
    for key in screen.widgets:
        if key.startswith(prefix + "up:"):
            ranks[key[len(prefix) + 3:]] = len([v for v in ranks.values() if v is not None]) + 1
        elif key.startswith(prefix + "on:"):
            ranks[key[len(prefix) + 3:]] = None
    return ranks
