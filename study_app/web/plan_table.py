"""Tables of profiles and plans, as escaped HTML.

A plan is shown as "current profile -> suggested profile" with every item listed. Items the
plan asks the person to change (actions) are highlighted and tagged "change"; items that
move only as a consequence of those changes are tagged "follows"; unchanged items are plain.
The colour is never the only cue: tags and the arrow column carry the same information for
screen readers and colour-blind readers. Rows are the session's ``protocols.running.pages.PlanRow``
(display units, formatted values) - nothing here converts units.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Protocol

from protocols.definition.translation import Translator


class PlanRowLike(Protocol):
    """What a plan table needs of a row (``protocols.running.pages.PlanRow`` has it)."""

    label: str
    current: str
    suggested: str
    kind: str


class ProfileRowLike(Protocol):
    label: str
    value: str


_ENGLISH = Translator("en")


def _tag(kind: str, tr: Translator) -> str:
    if kind == "action":
        return f'<span class="rs-tag rs-tag-action">{html.escape(tr.ui("table.tag_change"))}</span>'
    if kind == "consequence":
        return ('<span class="rs-tag rs-tag-consequence">'
                f'{html.escape(tr.ui("table.tag_follows"))}</span>')
    return ""


def note_text(row: object, tr: Translator) -> str:
    """A consequence's note in the translator's language: the English note as the session
    wrote it, else rebuilt from its causes ("ローン金額の減少に伴って変わります")."""
    note = str(getattr(row, "note", ""))
    causes = getattr(row, "causes", [])
    if tr.english or not note or not causes:
        return note
    parts = [tr.ui(f"cause.{way}", label=tr.text(label)) for label, way in causes]
    joined = (tr.ui("cause.and").join(parts) if len(parts) < 3
              else tr.ui("cause.comma").join(parts[:-1]) + tr.ui("cause.and") + parts[-1])
    return tr.ui("cause.follows", causes=joined)


def shown_cell(row: object, which: str, tr: Translator) -> str:
    """A row's current or suggested value in the translator's language: a number formatted
    for it (currency, digits), an item's option translated."""
    text = str(getattr(row, which))
    if getattr(row, "numeric", False):
        return tr.number(float(getattr(row, f"{which}_value")), getattr(row, "unit", ""),
                         int(getattr(row, "decimals", 0)), text)
    if getattr(row, "number", None) is not None:
        return tr.number(float(row.number), getattr(row, "unit", ""),
                         int(getattr(row, "decimals", 0)), text)
    return tr.level(text)


def plan_table_html(rows: Sequence[PlanRowLike], *, title: str = "", legend: bool = True,
                    current_label: str = "Your profile now",
                    suggested_label: str = "Suggested profile",
                    tr: Translator | None = None) -> str:
    """HTML table of ``rows`` with a caption and column headings, in the language of ``tr``
    (default English); every text is escaped."""
    if not rows:
        raise ValueError("a plan table needs at least one row")
    tr = tr or _ENGLISH
    sr_text = {"action": " " + tr.ui("table.sr_change"),
               "consequence": " " + tr.ui("table.sr_follows")}
    body = []
    for row in rows:
        if row.kind not in ("action", "consequence", "same"):
            raise ValueError(f"row kind must be action, consequence or same, got {row.kind!r}")
        arrow = "&rarr;" if row.kind != "same" else ""
        sr = sr_text.get(row.kind, "")
        note = note_text(row, tr) if row.kind == "consequence" else ""
        note_html = (f'<span class="rs-note">{html.escape(note[:1].upper() + note[1:])}'
                     "</span>" if note else "")
        body.append(
            f'<tr class="rs-{row.kind}"><th scope="row">{html.escape(tr.text(row.label))}'
            f"{_tag(row.kind, tr)}</th>"
            f"<td>{html.escape(shown_cell(row, 'current', tr))}</td>"
            f'<td class="rs-arrow" aria-hidden="true">{arrow}</td>'
            f'<td class="rs-new">{html.escape(shown_cell(row, "suggested", tr))}'
            f'<span class="rs-sr">{html.escape(sr)}</span>{note_html}</td></tr>'
        )
    caption = (
        f'<caption class="rs-plan-caption">{html.escape(title)}</caption>' if title else ""
    )
    key = legend_html(rows, tr) if legend else ""
    return (
        f'{key}<table class="rs-plan" data-testid="rs-plan-table">{caption}'
        f"<thead><tr><th scope='col'>{html.escape(tr.ui('table.item'))}</th>"
        f"<th scope='col'>{html.escape(current_label)}"
        "</th><th aria-hidden='true'></th>"
        f"<th scope='col'>{html.escape(suggested_label)}</th></tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def legend_html(rows: Sequence[PlanRowLike], tr: Translator | None = None) -> str:
    """The key of the tags used in ``rows``."""
    tr = tr or _ENGLISH
    follows = (f" &nbsp; {_tag('consequence', tr)} "
               f"{html.escape(tr.ui('table.legend_follows'))}"
               if any(r.kind == "consequence" for r in rows) else "")
    return ('<div class="rs-legend">'
            f"{_tag('action', tr)} {html.escape(tr.ui('table.legend_change'))}{follows}</div>")


def profile_table_html(rows: Sequence[ProfileRowLike], *, title: str = "",
                       tr: Translator | None = None) -> str:
    """A two-column (item, value) table of a profile, in the language of ``tr`` (default
    English); every cell's text is escaped."""
    if not rows:
        raise ValueError("a profile table needs at least one row")
    tr = tr or _ENGLISH
    body = "".join(
        f'<tr><th scope="row">{html.escape(tr.text(r.label))}</th>'
        f'<td>{html.escape(shown_cell(r, "value", tr))}</td></tr>'
        for r in rows
    )
    caption = (
        f'<caption class="rs-plan-caption">{html.escape(title)}</caption>' if title else ""
    )
    return (
        f'<table class="rs-plan rs-profile" data-testid="rs-profile-table">{caption}'
        f"<tbody>{body}</tbody></table>"
    )
