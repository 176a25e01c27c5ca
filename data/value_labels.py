"""What the values of coded columns mean: the 7-point scales' labels and the profile items' codes.

The rating scales come from each study's stored protocol (``studies.protocol_json``,
``questions.acceptance.labels`` / ``questions.action.labels``): seven labels name the
points 1..7; two labels name the ends (1 and 7) and the points between are unlabelled.
A profile item's codes (a binary, ordinal or categorical item stored as its code 0..k-1)
come from the study's scenario, which the caller describes as ``ProfileItem`` values (the
data layer knows no scenarios).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from data.columns import RATINGS, RATINGS_LONG

# The rating columns that hold a 7-point scale answer, by table (their question's name).
SCALE_QUESTIONS: tuple[str, ...] = RATINGS.pick("acceptance", "action")
SCALE_COLUMNS: dict[str, tuple[str, ...]] = {
    RATINGS.name: SCALE_QUESTIONS, RATINGS_LONG.name: RATINGS_LONG.pick("acceptance", "action")}
SCALE_POINTS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7)


@dataclass(frozen=True)
class ProfileItem:
    """One profile item as the export describes it: its name (the column's suffix), the
    label participants read, its codes' level names (code i names ``levels[i]``; empty: a
    number) and its unit (model units, as stored in ``profiles.x_json``)."""

    name: str
    label: str
    levels: tuple[str, ...] = ()
    unit: str = ""


def scale_levels(protocol_json: str | None) -> dict[str, list[tuple[int, str]]]:
    """{question: [(point, label), ...]} of the acceptance and action scales of a stored
    protocol: all seven points with seven labels, the two ends with two; {} without a
    protocol (an imported study) or with one that is not a JSON object.

    >>> levels = scale_levels('{"questions": {"acceptance": {"labels": ["No", "Yes"]}}}')
    >>> levels["acceptance"], levels["action"][3]
    ([(1, 'No'), (7, 'Yes')], (4, 'Neutral'))
    """
    try:
        protocol = json.loads(protocol_json) if protocol_json else None
    except json.JSONDecodeError:
        return {}
    if not isinstance(protocol, dict):
        return {}
    questions: dict[str, Any] = protocol.get("questions") or {}
    out = {}
    for q in SCALE_QUESTIONS:
        labels = (questions.get(q) or {}).get("labels") or list(_DEFAULT_LABELS)
        points = SCALE_POINTS if len(labels) == len(SCALE_POINTS) else (1, 7)
        out[q] = list(zip(points, labels, strict=True))
    return out


# The protocol schema's default scale (protocols.definition.specs), for a stored protocol
# written before its labels were stored with it.
_DEFAULT_LABELS = ("Strongly no", "No", "Slightly no", "Neutral", "Slightly yes", "Yes",
                   "Strongly yes")


def levels_text(levels: list[tuple[int | str, str]]) -> str:
    """One cell of a codebook: ``1 = Strongly no; 2 = No; ...``."""
    return "; ".join(f"{code} = {label}" for code, label in levels)


def study_scale_levels(store: Any) -> dict[str, list[tuple[int, str]]]:
    """The scales of the studies in ``store`` (``scale_levels``). Studies whose scales are
    labelled differently get each label set under its study id: {question: levels} when
    all agree, else {question: [(point, "study: label"), ...]}."""
    rows = store.query("SELECT study_id, protocol_json FROM studies ORDER BY study_id")
    per_study = {r["study_id"]: scale_levels(r["protocol_json"]) for r in rows}
    found = [s for s in per_study.values() if s]
    if not found:
        return {}
    if all(s == found[0] for s in found):
        return found[0]
    out: dict[str, list[tuple[int, str]]] = {}
    for q in SCALE_QUESTIONS:
        out[q] = [(point, f"{sid}: {label}") for sid, s in per_study.items()
                  for point, label in s.get(q, [])]
    return out


def codebook_levels(store: Any) -> dict[tuple[str, str], str]:
    """{(table, column): levels text} of the coded columns of a plain export (the rating
    scales of the ratings table and the ratings_long view)."""
    scales = study_scale_levels(store)
    if not scales:
        return {}
    return {(table, col): levels_text(scales[q])  # type: ignore[arg-type]
            for table, cols in SCALE_COLUMNS.items()
            for q, col in zip(SCALE_QUESTIONS, cols, strict=True)}
