"""The "current profile -> suggested profile" table of a plan, as escaped HTML.

Every item is listed. Items the plan asks the person to change (actions) are highlighted and
tagged "change"; items that move only as a consequence of those changes are tagged
"follows"; unchanged items are plain. The colour is never the only cue: tags and the arrow
column carry the same information for screen readers and colour-blind readers.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Literal

RowKind = Literal["action", "consequence", "same"]


@dataclass(frozen=True)
class PlanRow:
    """One item of a plan in display units."""

    label: str
    current: str
    suggested: str
    kind: RowKind


_TAGS: dict[str, str] = {
    "action": '<span class="rs-tag rs-tag-action">change</span>',
    "consequence": '<span class="rs-tag rs-tag-consequence">follows</span>',
    "same": "",
}


def plan_table_html(rows: list[PlanRow], *, title: str = "") -> str:
    """HTML table of ``rows`` with a caption; every cell's text is escaped."""
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
        body.append(
            f'<tr class="rs-{row.kind}"><th scope="row">{html.escape(row.label)}'
            f"{_TAGS[row.kind]}</th>"
            f"<td>{html.escape(row.current)}</td>"
            f'<td class="rs-arrow" aria-hidden="true">{arrow}</td>'
            f'<td class="rs-new">{html.escape(row.suggested)}'
            f'<span class="rs-sr">{sr}</span></td></tr>'
        )
    caption = (
        f'<caption class="rs-plan-caption">{html.escape(title)}</caption>' if title else ""
    )
    legend = (
        '<div class="rs-legend">'
        f"{_TAGS['action']} an item the plan asks you to change &nbsp; "
        f"{_TAGS['consequence']} an item that changes as a result</div>"
    )
    return (
        f'{legend}<table class="rs-plan" data-testid="rs-plan-table">{caption}'
        "<thead><tr><th scope='col'>Item</th><th scope='col'>Your profile now</th>"
        "<th aria-hidden='true'></th><th scope='col'>Suggested profile</th></tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )
