"""What every stored column means (types come from the database itself).

``MEANINGS[table][column]`` is a one-line description (the catalogue's, ``data.columns``,
plus the quality flags the export computes); ``codebook(store)`` joins them with the live
column types; the export writes it next to the tables. ``EVENT_KINDS`` (``data.columns``)
is every kind of ``events`` row with its meaning (writing another kind is an error:
``check_event_kind``). ``NOT_EXPORTED`` lists columns that never leave the database
(secrets), ``PRIVATE_TABLES`` tables that never do (resume tokens, the dashboard's sign-in
log). ``FREE_TEXT`` and ``LINKAGE`` are what an export leaves out unless asked
(data.export): text participants typed, and what links a row to a person outside the
study (recruitment-id hashes, completion codes).
"""

from __future__ import annotations

from typing import Any

from data.columns import (
    CATALOGUE,
    DASHBOARD_LOGINS,
    EVENT_KINDS,
    PARTICIPANTS,
    RATINGS,
    RESEARCHER_ACCOUNTS,
    RESEARCHER_ACTIONS,
    STUDIES,
    TOKENS,
    WITHDRAWALS,
)
from data.value_labels import codebook_levels

# Every table's and view's columns (data.columns), and the quality flags below.
MEANINGS: dict[str, dict[str, str]] = {name: t.meanings() for name, t in CATALOGUE.items()}

# Computed at export time from the stored rows (data.quality), not a table of the database.
MEANINGS["quality_flags"] = {
    "study_id": STUDIES.column("study_id").meaning,
    "participant_id": PARTICIPANTS.column("participant_id").meaning,
    "source": "web, synthetic or imported",
    "arm": "assigned arm (null before consent)",
    "status": "the participant's end state (participants.status)",
    "pages_timed": "answered pages with a recorded time (responses.seconds)",
    "total_seconds": "T: the sum of the participant's page times",
    "total_ratio": "T divided by the sum of the median times (over the participants of the "
    "same source) of the pages the participant answered: the total against the median "
    "total of those pages; null under 3 timed pages",
    "page_ratio": "the median over the participant's pages of (page time / that page's "
    "median time over the participants of the same source); null under 3 timed pages",
    "fast_pages": "pages answered in under speeder_fraction times that page's median time",
    "speeder": "total_ratio or page_ratio under the protocol's quality.speeder_fraction "
    "(null: neither known)",
    "ratings": "plans rated",
    "straightliner": "the same acceptance rating on every plan and the same action rating "
    "on every plan, over at least quality.straightliner_min_ratings plans (null: fewer "
    "ratings)",
    "attention_checks": "attention checks answered",
    "attention_failed": "at least one attention check answered wrongly (null: none answered)",
    "flagged": "speeder, straightliner or attention_failed",
}

NOT_EXPORTED: dict[str, tuple[str, ...]] = {
    STUDIES.name: STUDIES.pick("salt", "salt_check"),
    PARTICIPANTS.name: PARTICIPANTS.pick("token_hash"),
}
PRIVATE_TABLES: tuple[str, ...] = (TOKENS.name, DASHBOARD_LOGINS.name, WITHDRAWALS.name,
                                   RESEARCHER_ACCOUNTS.name, RESEARCHER_ACTIONS.name)
FREE_TEXT: dict[str, tuple[str, ...]] = {RATINGS.name: RATINGS.pick("acceptance_why",
                                                                    "action_why")}
# Keys of answer_json (responses) that hold free text; removed unless free text is asked for
# (a plan page's answer names its reasons as the ratings columns that store them).
FREE_TEXT_ANSWER_KEYS: tuple[str, ...] = FREE_TEXT[RATINGS.name]
LINKAGE: dict[str, tuple[str, ...]] = {
    PARTICIPANTS.name: PARTICIPANTS.pick("external_id_hash", "completion_code", "session_hash"),
}
# Events whose detail_json holds recruitment-link hashes (left out unless linkage is asked).
LINKAGE_EVENTS: tuple[str, ...] = ("recruitment", "id_refused")


def check_event_kind(kind: str) -> str:
    """``kind`` when the codebook knows it; ValueError otherwise (every event kind written
    is documented)."""
    if kind not in EVENT_KINDS:
        raise ValueError(f"unknown event kind {kind!r}; add it to data.codebook.EVENT_KINDS")
    return kind


def withheld(free_text: bool, linkage: bool) -> dict[str, tuple[str, ...]]:
    """Columns left out of an export: the secrets, plus free text and linkage columns
    unless asked for."""
    out = {t: tuple(cols) for t, cols in NOT_EXPORTED.items()}
    for flag, spec in ((free_text, FREE_TEXT), (linkage, LINKAGE)):
        if not flag:
            for table, cols in spec.items():
                out[table] = out.get(table, ()) + cols
    return out


def codebook(store: Any, tables: tuple[str, ...],
             left_out: dict[str, tuple[str, ...]] | None = None) -> list[dict[str, str]]:
    """Rows (table, column, type, meaning, levels) of the exported columns of ``tables``
    (every column but those ``left_out``, by default the secrets); ``levels`` names the
    values of a coded column (the 7-point scales' labels from the stored protocol:
    data.value_labels), empty for the others."""
    skip = NOT_EXPORTED if left_out is None else left_out
    labels = codebook_levels(store)
    out = []
    for table in tables:
        for name, dtype in store.columns(table):
            if name in skip.get(table, ()):
                continue
            meaning = MEANINGS.get(table, {}).get(name)
            if meaning is None:
                raise KeyError(f"codebook has no meaning for {table}.{name}")
            out.append({"table": table, "column": name, "type": dtype, "meaning": meaning,
                        "levels": labels.get((table, name), "")})
    return out
