"""A study's exclusions as its stored protocol states them: the one place ``analyze``,
``reproduce tominaga`` and ``audit`` read which ratings the models leave out
(analysis.exclusions applies the rules; this module reads them from the protocol)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def study_rules(ratings: pd.DataFrame, settings: dict[str, Any], *,
                flagged: dict[str, tuple[str, ...]] | None = None,
                asked: tuple[str, ...] = (), note: Callable[[str], None] | None = None,
                ) -> tuple[pd.DataFrame, dict[str, Any], Any]:
    """(the ratings kept by the stored protocol's exclusions and the ``asked`` flag rules,
    the exclusion record with its counts per arm (``by_arm``, ``uneven``: analysis.
    exclusions), the synthetic participants' rating behaviour or None). A stored protocol
    this version cannot read applies no exclusion of its own (said through ``note``)."""
    import json

    from analysis.exclusions import apply_exclusions, by_arm, uneven
    from engine.synthetic.rating_model import RatingBehaviour
    from protocols.definition.schema import Protocol

    say = note or (lambda _m: None)
    failed_attention, expected, impossible_items = False, None, False
    try:
        if not settings.get("protocol_json"):
            raise LookupError("an imported study has no protocol")
        protocol = Protocol.model_validate_json(settings["protocol_json"])
        failed_attention = protocol.exclusions.failed_attention
        impossible_items = protocol.exclusions.impossible_items
        if protocol.exclusions.fewer_plans:
            first_arm = ratings.groupby(ratings["participant_id"].astype(str))["arm"].first()
            expected = {pid: protocol.plans_per_participant(arm)
                        for pid, arm in first_arm.items() if arm in {a.id for a in protocol.arms}}
    except LookupError as e:
        say(f"note: {e}; no protocol exclusions applied")
    except Exception as e:  # noqa: BLE001 - older protocol versions
        say(f"note: the stored protocol cannot be read here ({type(e).__name__}); no "
            "exclusions applied")
    kept, record = apply_exclusions(ratings, expected=expected,
                                    failed_attention=failed_attention
                                    or "failed_attention" in asked,
                                    impossible_items=impossible_items, flagged=flagged,
                                    flag_rules=asked)
    record["by_arm"] = by_arm(ratings, kept)
    record["uneven"] = uneven(record["by_arm"])
    truth = None
    sim = json.loads(settings.get("simulation_json") or "null")
    if isinstance(sim, dict) and isinstance(sim.get("behaviour"), dict):
        truth = RatingBehaviour.from_dict(sim["behaviour"]["ratings"])
    return kept, record, truth
