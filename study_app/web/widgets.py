"""Survey controls shared by the page renderers.

Each control is keyed by the page it belongs to, so nothing typed on one page leaks into the
next one. None of them pre-selects an answer: a 7-point scale starts empty, as in any serious
survey tool, and the page asks for what is missing.
"""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import streamlit as st

from study_app.web.i18n import level, t, ui

Item = TypeVar("Item")

# The answer a page's widgets show before Continue, as (page id, answer), for the app to
# start in the background what it would start (``offer_draft``).
DRAFT = "rs_draft"

# Control characters other than tab and newline never belong in a free-text answer.
_ALLOWED_CONTROLS = {"\t", "\n"}


def clean_text(text: str) -> str:
    """NFC-normalized text without control characters (markup and SQL stay as plain text)."""
    norm = unicodedata.normalize("NFC", text)
    return "".join(
        ch for ch in norm if ch in _ALLOWED_CONTROLS or unicodedata.category(ch) != "Cc"
    ).strip()


def offer_draft(page_id: str, answer: dict[str, Any]) -> None:
    """A renderer whose widgets rerun the page on every change (outside a form) offers the
    answer they show now: the participant page hands it to ``Study.speculate``."""
    st.session_state[DRAFT] = (page_id, answer)


def take_draft(page_id: str) -> dict[str, Any] | None:
    """The draft answer the renderer of ``page_id`` offered in this run, if any."""
    offered = st.session_state.pop(DRAFT, None)
    return offered[1] if offered is not None and offered[0] == page_id else None


def seven_point(
    question: str, labels: tuple[str, str] | list[str], key: str, *, help: str | None = None
) -> int | None:
    """A 1..7 scale with labelled endpoints (``labels`` = low, high); None until answered.

    With seven labels (one per point) every option is labelled.
    """
    labels = [t(label) for label in labels]
    if len(labels) not in (2, 7):
        raise ValueError(f"a 7-point scale needs 2 endpoint labels or 7 labels, got {labels}")

    def fmt(v: int) -> str:
        if len(labels) == 7:
            return f"{v} · {labels[v - 1]}"
        if v == 1:
            return f"1 · {labels[0]}"
        if v == 7:
            return f"7 · {labels[1]}"
        return str(v)

    return st.radio(
        question, options=list(range(1, 8)), index=None, format_func=fmt, horizontal=True,
        key=key, help=help,
    )


def yes_no(question: str, key: str, *, help: str | None = None) -> bool | None:
    """A No/Yes choice with nothing pre-selected; None until answered."""
    choice = st.radio(
        question, options=["No", "Yes"], index=None, horizontal=True, key=key, help=help,
        format_func=lambda v: ui(v.lower()),
    )
    return None if choice is None else choice == "Yes"


def free_text(
    label: str, key: str, *, max_chars: int, min_chars: int = 0, placeholder: str = ""
) -> str:
    """A text area whose length limit is stated under it; returns the cleaned text.

    The limit is the page's check (``length_problem``), not the browser's: with Streamlit's
    ``max_chars`` a paste that would pass the limit is dropped whole, without a word. Here
    the paste stays in the box and Continue says how long it is and how long it may be."""
    if max_chars <= 0:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    hint = ui("at_least_chars", n=min_chars) + " " if min_chars else ""
    raw = st.text_area(label, key=key, placeholder=placeholder)
    st.caption(hint + ui("at_most_chars", n=max_chars))
    return clean_text(raw or "")


def length_problem(text: str | None, max_chars: int) -> str | None:
    """What the participant is told about a text over ``max_chars`` (None: within it)."""
    n = len(text or "")
    return ui("too_long", n=f"{n:,}", max=f"{max_chars:,}") if n > max_chars else None


def choice(
    question: str, options: list[str], key: str, *, help: str | None = None,
    shown: Callable[[str], str] = t,
) -> str | None:
    """A single choice among ``options`` with nothing pre-selected; each option is shown
    as ``shown(option)`` (in the participant's language) and answered as itself."""
    return st.radio(question, options=options, index=None, key=key, help=help,
                    format_func=shown)


def ranking(items: list[tuple[str, str]], key: str, *, cannot_label: str) -> dict[str, int | None]:
    """An accessible ordering widget: move items up and down, or mark them unchangeable.

    ``items`` are (name, label) pairs, labels in the participant's language. Returns name -> rank (1 = easiest) among the items the
    person can change, None for the ones marked "cannot". Buttons carry their full meaning in
    text ("Move Savings up"), so the widget works by keyboard and with a screen reader. Must
    be rendered outside a form (its buttons rerun the page).
    """
    names = [n for n, _ in items]
    labels = dict(items)
    state_key = f"{key}:order"
    cannot_key = f"{key}:cannot"
    if st.session_state.get(state_key, None) is None or set(st.session_state[state_key]) != set(
        names
    ):
        st.session_state[state_key] = list(names)
        st.session_state[cannot_key] = []
        st.session_state[f"{key}:touched"] = False
    order: list[str] = st.session_state[state_key]
    cannot: list[str] = st.session_state[cannot_key]

    def move(name: str, delta: int) -> None:
        active = [n for n in order if n not in cannot]
        i = active.index(name)
        j = i + delta
        if 0 <= j < len(active):
            active[i], active[j] = active[j], active[i]
            st.session_state[state_key] = active + [n for n in order if n in cannot]
            st.session_state[f"{key}:touched"] = True

    def toggle(name: str) -> None:
        if name in cannot:
            cannot.remove(name)
        else:
            cannot.append(name)
        st.session_state[cannot_key] = list(cannot)
        st.session_state[state_key] = [n for n in order if n not in cannot] + [
            n for n in order if n in cannot
        ]
        st.session_state[f"{key}:touched"] = True

    active = [n for n in order if n not in cannot]
    for pos, name in enumerate(active):
        with st.container(border=True):
            left, up, down, off = st.columns([5, 2, 2, 3], vertical_alignment="center")
            left.markdown(f"**{pos + 1}.** {labels[name]}")
            up.button(
                ui("elicitation.move_up"), key=f"{key}:up:{name}", on_click=move,
                args=(name, -1), disabled=pos == 0,
                help=ui("elicitation.move_up_item", label=labels[name]), width="stretch",
            )
            down.button(
                ui("elicitation.move_down"), key=f"{key}:down:{name}", on_click=move,
                args=(name, +1), disabled=pos == len(active) - 1,
                help=ui("elicitation.move_down_item", label=labels[name]), width="stretch",
            )
            off.button(
                cannot_label, key=f"{key}:off:{name}", on_click=toggle, args=(name,),
                help=f"{labels[name]}: {cannot_label}", width="stretch",
            )
    for name in [n for n in order if n in cannot]:
        with st.container(border=True):
            left, back = st.columns([7, 5], vertical_alignment="center")
            left.markdown(f"~~{labels[name]}~~ — *{cannot_label}*")
            back.button(
                ui("elicitation.can"), key=f"{key}:on:{name}", on_click=toggle, args=(name,),
                help=f"{labels[name]}: {ui('elicitation.can')}", width="stretch",
            )
    return {n: (active.index(n) + 1 if n in active else None) for n in names}


def ranking_touched(key: str) -> bool:
    """The person moved an item or marked one in the ``ranking`` keyed ``key`` (an order
    left as first shown is not an answer until confirmed)."""
    return bool(st.session_state.get(f"{key}:touched", False))


def submit_button(page_id: str, label: str | None = None) -> bool:
    """The page form's submit button (keyed by the page, so a stale click never counts for
    the next page); "Continue" in the participant's language by default."""
    return st.form_submit_button(label or ui("continue"), type="primary",
                                 key=f"{page_id}:submit")


def ask_for_missing(missing: list[str]) -> None:
    """Tell the participant what is still unanswered, one item per line (nothing is stored
    until it is): the summary beside the Continue button."""
    lines = "\n".join(f"- {m.strip().rstrip('.?:;')}" for m in missing)
    st.error(f"{ui('missing')}\n\n{lines}")


class MissingMarks:
    """A place beside each question of a form for "please answer this", filled only once the
    form was sent with the question unanswered (``mark``), and the one summary under the form.

    ``slot(name)`` right after a question's widget reserves its place (an empty
    ``st.empty``); ``show({name: label})`` fills the places of the unanswered ones and lists
    their labels in the summary.
    """

    def __init__(self) -> None:
        self.slots: dict[str, Any] = {}

    def slot(self, name: str) -> None:
        self.slots[name] = st.empty()

    def show(self, missing: dict[str, str], problems: dict[str, str] | None = None) -> None:
        """Mark the unanswered questions (``missing``: name -> label) and the answered
        ones that cannot be taken (``problems``: name -> what is wrong, beside the question
        and, after its label, in the summary)."""
        problems = problems or {}
        for name in missing:
            if name in self.slots:
                self.slots[name].markdown(
                    f'<p class="rs-missing" role="alert" data-testid="rs-missing">'
                    f"{html.escape(problems.get(name, ui('missing.mark')))}</p>",
                    unsafe_allow_html=True)
        ask_for_missing([f"{label}: {problems[name]}" if name in problems else label
                         for name, label in missing.items()])
        focus_first_missing()


# Keyboard focus to the first unanswered question's control: its mark sits right after the
# question's widget (and what the widget shows under it, such as a length hint), so the
# control is in the nearest element before the mark's that has one. A keyboard user who
# sent the page with a question left out lands on it instead of tabbing the page again.
_FOCUS_MISSING = """<script>/* %d */ (function () {
 var tries = 0;
 var CONTROL = 'input:not([type="hidden"]), textarea, select, button';
 (function focus() {
  var mark = document.querySelector('[data-testid="stMain"] .rs-missing');
  var box = mark && mark.closest('[data-testid="stElementContainer"]');
  var control = null;
  for (var el = box && box.previousElementSibling, n = 0; el && !control && n < 4;
       el = el.previousElementSibling, n++) {
   control = el.querySelector('input[type="radio"]:checked') || el.querySelector(CONTROL);
  }
  if (!control) { if (tries++ < 50) { setTimeout(focus, 20); } return; }
  control.focus();
 })(); })();</script>"""


def focus_first_missing() -> None:
    """Move keyboard focus to the first question marked unanswered (``MissingMarks``). A
    counter makes the script new on every send, so it runs again on each."""
    sends = st.session_state.get("rs_missing_sends", 0) + 1
    st.session_state["rs_missing_sends"] = sends
    st.html(_FOCUS_MISSING % sends, unsafe_allow_javascript=True)


def item_form(
    page_id: str,
    items: Sequence[Item],
    ask: Callable[[Item, str], Any],
    *,
    key: Callable[[Item], str],
    label: Callable[[Item], str],
    intro: str | None = None,
    required: bool = True,
    problem: Callable[[Item, Any], str | None] = lambda item, answer: None,
) -> dict[str, Any] | None:
    """A page form with one question per item: ``intro`` (markdown), then
    ``ask(item, widget_key)`` for each item, its widget keyed ``<page>:<key(item)>``.

    None until submitted with every item answered (else each missing one is marked beside
    its question and named by its ``label`` under the form) and no answer with a
    ``problem`` (a number out of range: its message beside the question and in the list);
    then {key(item): answer}. ``required=False``: submitted as it is, None for the items
    left unanswered."""
    answers: dict[str, Any] = {}
    marks = MissingMarks()
    with st.form(f"{page_id}:form"):
        if intro is not None:
            st.markdown(intro)
        for item in items:
            answers[key(item)] = ask(item, f"{page_id}:{key(item)}")
            marks.slot(key(item))
        if not submit_button(page_id):
            return None
    problems = {key(item): found for item in items
                if (found := problem(item, answers[key(item)])) is not None}
    missing = {key(item): label(item) for item in items
               if (answers[key(item)] is None and required) or key(item) in problems}
    if missing:
        marks.show(missing, problems)
        return None
    return answers


def one_question_form(page_id: str, label: str, ask: Callable[[], Any], *,
                      intro: str | None = None) -> Any:
    """A page form of one question (``ask()`` draws it): its answer once sent answered,
    else None (and, when sent unanswered, "please answer" beside it, ``label`` under it)."""
    marks = MissingMarks()
    with st.form(f"{page_id}:form"):
        if intro is not None:
            st.markdown(intro)
        answer = ask()
        marks.slot("question")
        if not submit_button(page_id):
            return None
    if answer is None:
        marks.show({"question": label})
    return answer


def number_field(
    label: str, key: str, *, unit: str, minimum: float | None, maximum: float | None,
    decimals: int, help: str | None = None, whole: bool = False,
) -> float | int | None:
    """A number in display units, empty until typed (``whole`` with no decimals: an int,
    e.g. an age in years). The range [minimum, maximum] is the placeholder's hint and is
    checked by the page (``range_problem``), not by the browser: Streamlit's own bound
    check answers an out-of-range number with an English tooltip and a Continue that does
    nothing, where the page says what is wrong in the participant's language."""
    step = 10.0 ** -decimals
    shown = f"{label} ({unit})" if unit else label
    hint = ui("type_number")
    if minimum is not None and maximum is not None:
        hint = ui("range", min=_shown_number(minimum, decimals),
                  max=_shown_number(maximum, decimals))
    value = st.number_input(
        shown, value=None, step=step, format=f"%.{decimals}f", key=key, help=help,
        placeholder=hint,
    )
    if value is None:
        return None
    return int(round(value)) if whole and decimals == 0 else float(value)


def _shown_number(value: float, decimals: int) -> str:
    return f"{value:,.{decimals}f}"


def range_problem(value: float | None, minimum: float | None, maximum: float | None,
                  decimals: int) -> str | None:
    """What the participant is told about a number outside [minimum, maximum], in their
    language (None: no number yet, or one inside)."""
    if value is None or ((minimum is None or value >= minimum)
                         and (maximum is None or value <= maximum)):
        return None
    if minimum is not None and maximum is not None:
        return ui("out_of_range", min=_shown_number(minimum, decimals),
                  max=_shown_number(maximum, decimals))
    if minimum is not None:
        return ui("below_minimum", min=_shown_number(minimum, decimals))
    return ui("above_maximum", max=_shown_number(maximum or 0.0, decimals))


def select_all(question: str, options: list[str], key: str) -> list[str] | None:
    """"Select all that apply": one checkbox per option (keyed ``<key>:<index>``), none
    ticked at first; None until at least one is ticked."""
    st.markdown(f"**{question}**")
    ticked = [o for i, o in enumerate(options) if st.checkbox(t(o), key=f"{key}:{i}")]
    return ticked or None


def category_field(
    label: str, options: list[str], key: str, *, help: str | None = None
) -> str | None:
    """One option of a category (an item's level, shown in the participant's language),
    nothing pre-selected."""
    return st.selectbox(label, options=options, index=None, key=key, help=help,
                        placeholder=ui("choose"), format_func=level)
