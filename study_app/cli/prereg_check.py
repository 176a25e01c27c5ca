"""``analyze --prereg``: the preregistration checked against the study before anything is
fitted (``prereg_for_study``), and the analysis's deviations from it afterwards
(``study_deviations``: analysis.deviations)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from study_app.cli.output import fail


def prereg_for_study(path: Path, settings: dict[str, Any]) -> dict[str, Any]:
    """The preregistration at ``path``, checked against the study's stored row (exit 2 when
    it cannot be read, or is of another protocol id: a different study's plan, not a
    deviation; the same id with another hash is a deviation, analysis.deviations)."""
    from study_app.prereg import PreregError, read_prereg

    try:
        doc = read_prereg(path)
    except PreregError as e:
        fail(f"--prereg: {e}", 2)
    planned, stored = doc["protocol"]["id"], settings.get("protocol_id")
    if stored is None or (not settings.get("protocol_json")):
        fail(f"--prereg: the study has no stored protocol (imported ratings); a "
             f"preregistration of protocol {planned!r} cannot be checked against it", 2)
    if planned != stored:
        fail(f"--prereg: {path} preregisters protocol {planned!r}, but the study ran "
             f"protocol {stored!r}; nothing was written", 2)
    return doc


def study_deviations(planned: dict[str, Any], result: Any,
                     settings: dict[str, Any]) -> dict[str, Any]:
    """analysis.deviations of the finished analysis ``result`` (analysis.pipeline.Analysis)
    from the preregistration ``planned``; N reached counts the excluded participants too."""
    from analysis.deviations import prereg_deviations

    excluded = {e["participant_id"] for e in (result.exclusions or {}).get("excluded", [])}
    reached = result.ratings["participant_id"].astype(str).nunique() + len(excluded)
    return prereg_deviations(planned, participants=int(reached),
                             exclusions=result.exclusions,
                             models=[s.name for s in result.specs], sampler=result.sampler,
                             protocol_hash=settings.get("protocol_hash"))
