"""Tables of profiles and plans, as escaped HTML.

A plan is shown as "current profile -> suggested profile" with every item listed. Items the
plan asks the person to change (actions) are highlighted and tagged "change"; items that
move only as a consequence of those changes are tagged "follows"; unchanged items are plain.
The colour is never the only cue: tags and the arrow column carry the same information for
screen readers and colour-blind readers. Rows are the session's ``protocols.pages.PlanRow``
(display units, formatted values) - nothing here converts units.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Protocol


class PlanRowLike(Protocol):
    """What a plan table needs of a row (``protocols.pages.PlanRow`` has it)."""

    label: str
    current: str
    suggested: str
    kind: str


class ProfileRowLike(Protocol):
    label: str
    value: str


_TAGS: dict[str, str] = {
    "action": '<span class="rs-tag rs-tag-action">change</span>',
    "consequence": '<span class="rs-tag rs-tag-consequence">follows</span>',
    "same": "",
}


def plan_table_html(rows: Sequence[PlanRowLike], *, title: str = "", legend: bool = True,
                    current_label: str = "Your profile now",
                    suggested_label: str = "Suggested profile") -> str:
    """HTML table of ``rows`` with a caption and column headings; every text is escaped."""
    if not rows:
        raise ValueError("a plan table needs at least one row")
    body = []
    for row in rows:
        if row.kind not in _TAGS:
            raise ValueError(f"row kind must be action, consequence or same, got {row.kind!r}")
        arrow = "&rarr;" if row.kind != "same" else ""
        sr = {"action": " (you change this)", "consequence": " (changes as a result)"}.get(
            row.kind, ""
        )
        note = getattr(row, "note", "") if row.kind == "consequence" else ""
        note_html = (f'<span class="rs-note">{html.escape(note[:1].upper() + note[1:])}'
                     "</span>" if note else "")
        body.append(
            f'<tr class="rs-{row.kind}"><th scope="row">{html.escape(row.label)}'
            f"{_TAGS[row.kind]}</th>"
            f"<td>{html.escape(row.current)}</td>"
            f'<td class="rs-arrow" aria-hidden="true">{arrow}</td>'
            f'<td class="rs-new">{html.escape(row.suggested)}'
            f'<span class="rs-sr">{sr}</span>{note_html}</td></tr>'
        )
    caption = (
        f'<caption class="rs-plan-caption">{html.escape(title)}</caption>' if title else ""
    )
    key = legend_html(rows) if legend else ""
    return (
        f'{key}<table class="rs-plan" data-testid="rs-plan-table">{caption}'
        f"<thead><tr><th scope='col'>Item</th><th scope='col'>{html.escape(current_label)}"
        "</th><th aria-hidden='true'></th>"
        f"<th scope='col'>{html.escape(suggested_label)}</th></tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def legend_html(rows: Sequence[PlanRowLike]) -> str:
    """The key of the tags used in ``rows``."""
    follows = (f" &nbsp; {_TAGS['consequence']} an item that changes as a result"
               if any(r.kind == "consequence" for r in rows) else "")
    return ('<div class="rs-legend">'
            f"{_TAGS['action']} an item the plan asks you to change{follows}</div>")


def profile_table_html(rows: Sequence[ProfileRowLike], *, title: str = "") -> str:
    """A two-column (item, value) table of a profile; every cell's text is escaped."""
    if not rows:
        raise ValueError("a profile table needs at least one row")
    body = "".join(
        f'<tr><th scope="row">{html.escape(r.label)}</th><td>{html.escape(r.value)}</td></tr>'
        for r in rows
    )
    caption = (
        f'<caption class="rs-plan-caption">{html.escape(title)}</caption>' if title else ""
    )
    return (
        f'<table class="rs-plan rs-profile" data-testid="rs-profile-table">{caption}'
        f"<tbody>{body}</tbody></table>"
    )
