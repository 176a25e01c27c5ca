"""A participant's session state: what is in memory, what is stored, and how it round-trips.

The state that decides the next page is small and lives in ``participants.state_json``
(answered page ids, where the profile came from, the interactive method's session and its
pending query - stored under the keys ``hare*``, HARE being the interactive method the
format was written for - whether plans exist). The bulky parts live in their own tables and are reloaded on resume:
the profile (``profiles``), the stated constraints (``elicitations``) and the plans
(``plans``). ``step`` counts recorded answers and guards every update (optimistic
concurrency: an update only applies to the step it was computed from).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from engine.preferences import ActionabilityProfiles
from protocols.running.shown_plan import ShownPlan

STATUSES = ("active", "complete", "declined", "screened_out", "approved", "no_plans",
            "withdrawn", "timed_out", "full")


@dataclass
class Participant:
    study_id: str
    participant_id: str
    seq: int  # arrival order: identifies a synthetic participant of a simulation
    source: str
    arm: str | None  # None until the participant consents
    consent_seq: int | None = None  # order of consent: drives assignment and the design
    status: str = "active"
    step: int = 0
    answered: list[str] = field(default_factory=list)
    profile_source: str | None = None  # own | persona | persona_fallback
    note: str = ""
    x: np.ndarray | None = None
    stated: ActionabilityProfiles | None = None
    plans_ready: bool = False
    plans: list[ShownPlan] = field(default_factory=list)
    interaction: str | None = None  # the interactive method's session (its JSON)
    query: dict[str, Any] | None = None  # its pending question: {kind, options}
    interaction_done: bool = False
    queries_asked: int = 0
    completion_code: str = ""
    language: str = "en"  # the language the pages are shown in (protocols.definition.translation)
    screened: dict[str, Any] = field(default_factory=dict)  # screening answers the profile takes
    updated_at: datetime | None = None  # the last answer (or the start): page times count from it
    started_at: datetime | None = None  # the first visit (participants.created_at): time limits

    @property
    def active(self) -> bool:
        return self.status == "active"

    @property
    def design_seq(self) -> int:
        """The number the study design draws from (arm, persona, plan choice and order, the
        interactive method's seed): the order of consent, so visits that never consent
        change nobody's assignment."""
        if self.consent_seq is None:
            raise ValueError(f"participant {self.participant_id} has not consented yet")
        return self.consent_seq

    def copy(self) -> Participant:
        """A copy whose mutable parts can change without touching this one."""
        out = copy.copy(self)
        out.answered = list(self.answered)
        out.plans = list(self.plans)
        out.query = copy.deepcopy(self.query)
        out.screened = dict(self.screened)
        return out

    def state_json(self) -> str:
        return json.dumps({
            "answered": self.answered,
            "profile_source": self.profile_source,
            "note": self.note,
            "plans_ready": self.plans_ready,
            "hare": self.interaction,
            "hare_query": self.query,
            "hare_done": self.interaction_done,
            "hare_asked": self.queries_asked,
            "language": self.language,
            **({"screened": self.screened} if self.screened else {}),
        })

    def load_state(self, text: str) -> None:
        s = json.loads(text)
        self.answered = list(s.get("answered", []))
        self.profile_source = s.get("profile_source")
        self.note = s.get("note", "")
        self.plans_ready = bool(s.get("plans_ready", False))
        self.interaction = s.get("hare")
        self.query = s.get("hare_query")
        self.interaction_done = bool(s.get("hare_done", False))
        self.queries_asked = int(s.get("hare_asked", 0))
        self.language = str(s.get("language", "en"))
        self.screened = dict(s.get("screened", {}))


def profiles_row(p: ActionabilityProfiles, feature_names: tuple[str, ...]) -> dict[str, Any]:
    """The stored form of a batch-of-one actionability profile."""
    return {
        "scheme": p.elicitation,
        "hard_mask_json": json.dumps(dict(zip(feature_names, p.hard_mask[0].tolist(),
                                              strict=True))),
        "scores_json": json.dumps(dict(zip(feature_names, p.scores[0].tolist(), strict=True))),
        "levels": float(p.levels[0]),
    }


def profiles_from_row(row: dict[str, Any], feature_names: tuple[str, ...]) -> ActionabilityProfiles:
    hard = json.loads(row["hard_mask_json"])
    scores = json.loads(row["scores_json"])
    return ActionabilityProfiles.from_lists(
        [[bool(hard[n]) for n in feature_names]], [[float(scores[n]) for n in feature_names]],
        [float(row["levels"])], row["scheme"],
    )
