"""One real person's HARE interaction, one question at a time, resumable from JSON.

A ``HareSession`` is the batched HARE state machine (engine.recourse.hare.state) for a batch
of one, plus the person's factual profile and actionability profile. ``next_query`` shows
plans as ``RecourseBatch.record`` dicts (actions, x_cf and distances per feature name, so the
renderer can show consequences); ``answer``/``accept`` feed the person's choices back.

``to_json`` holds the whole state (floats round-trip exactly through JSON), and every random
draw is seeded by (seed, iteration), so ``from_json(to_json())`` asks the same next pair as
the uninterrupted session and reaches the same final plan.

Started or resumed with ``defer=True``, a session that needs new candidates (its start, or
"keep looking") is ``pending`` until ``Hare.complete_sessions`` searches them, batched with
other people's pending sessions (engine.recourse.hare.state: the same candidates as alone).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import torch
from torch import Tensor

from engine.preferences import ActionabilityProfiles
from engine.recourse.base import RecourseContext
from engine.recourse.batch import RecourseBatch
from engine.recourse.hare.state import HareState
from engine.scm import ArrayLike, as_batch

FORMAT = "hare-session/1"


class HareSearch(Protocol):
    """What a session needs of its method (engine.recourse.hare.method.Hare has it): the context,
    the base plans, a machine started at them, and shifts realized and measured."""

    context: RecourseContext

    def base_plans(self, x: Tensor, profiles: ActionabilityProfiles) -> RecourseBatch: ...

    def start(self, x: Tensor, profiles: ActionabilityProfiles, base: RecourseBatch,
              seed: int, *, defer: bool = False) -> HareState: ...

    def evaluate(self, x: Tensor, z: Tensor, profiles: ActionabilityProfiles) -> RecourseBatch:
        ...


@dataclass
class HareQuery:
    """``kind`` compare: ``options`` = [left, right]; accept: [current]; done: ``final``."""

    kind: Literal["compare", "accept", "done"]
    options: list[dict[str, Any]] = field(default_factory=list)
    final: dict[str, Any] | None = None


class HareSession:
    """The interaction of one person (module docstring)."""

    def __init__(self, hare: HareSearch, state: HareState, profile: ActionabilityProfiles,
                 base: dict[str, Any]) -> None:
        if state.n != 1:
            raise ValueError("a HareSession holds exactly one person")
        self.hare = hare
        self.state = state
        self.profile = profile
        self.base = base
        self._query: HareQuery | None = None  # the next question, once built
        # the base method's found plan as computed at the start (not stored: a session
        # resumed from JSON has None; its final plans compute the base plan again)
        self.base_found: RecourseBatch | None = None

    @classmethod
    def start(
        cls, hare: HareSearch, x: ArrayLike, profile: ActionabilityProfiles, *, seed: int,
        defer: bool = False,
    ) -> HareSession:
        """Compute the base plan and the first candidates for the person ``x`` (1, d)
        (``defer``: the candidates later, module docstring)."""
        t, _ = as_batch(x, hare.context.scenario.d, "x")
        if t.shape[0] != 1 or len(profile) != 1:
            raise ValueError(
                f"a HareSession is for one person: got {t.shape[0]} profiles and "
                f"{len(profile)} actionability profiles"
            )
        xt = hare.context.check_inputs(t, profile).to(torch.float64)
        base = hare.base_plans(xt, profile)
        state = hare.start(xt, profile, base, seed, defer=defer)
        names = hare.context.scenario.feature_names
        session = cls(hare, state, profile, base.record(0, names))
        session.base_found = base.select(base.found.nonzero().flatten())
        return session

    # ---- the questions --------------------------------------------------------------------
    def _record(self, z: torch.Tensor) -> dict[str, Any]:
        batch = self.hare.evaluate(self.state.x, z, self.profile)
        return batch.record(0, self.hare.context.scenario.feature_names)

    def next_query(self) -> HareQuery:
        """The current question (built once per state: its options are evaluated plans)."""
        if self._query is None:
            q = self.state.query()
            self._query = (HareQuery("done", final=self.final()) if q.kind == "done"
                           else HareQuery(q.kind, [self._record(z) for z in q.options]))
        return self._query

    def answer(self, choice: int) -> None:
        """0 keeps the first option, 1 takes the second."""
        if self.state.phase != "compare":
            raise ValueError(f"the session is not asking for a comparison ({self.state.phase})")
        if isinstance(choice, bool) or choice not in (0, 1):
            raise ValueError(f"choice must be 0 or 1 (got {choice!r})")
        self._query = None
        self.state.answer(torch.tensor([choice]))

    def accept(self, yes: bool) -> None:
        if self.state.phase != "accept":
            raise ValueError(f"the session is not asking for acceptance ({self.state.phase})")
        if not isinstance(yes, bool):
            raise ValueError(f"accept takes True or False (got {yes!r})")
        self._query = None
        self.state.accept(torch.tensor([yes]))

    @property
    def pending(self) -> bool:
        """The next candidates wait for ``Hare.complete_sessions`` (module docstring)."""
        return self.state.pending

    @property
    def done(self) -> bool:
        return self.state.phase == "done"

    @property
    def queries_asked(self) -> int:
        return int(self.state.asked[0])

    @property
    def unasked_same(self) -> int:
        """Comparisons not asked because both options read the same as shown
        (engine.recourse.hare.state)."""
        return int(self.state.unasked_same[0])

    def final(self) -> dict[str, Any]:
        """The final plan's record (when the base and HARE found nothing: no actions)."""
        if not self.done:
            raise ValueError("the session has not finished yet")
        z, _ = self.state.result
        return self._record(z)

    # ---- persistence ------------------------------------------------------------------------
    def to_json(self, *, pending: bool = False) -> str:
        """The session as JSON (``pending=True``: also while its next search is pending, to
        run that search elsewhere: ``from_json(..., defer=True)``, ``Hare.complete_sessions``,
        then ``take_state`` of the result)."""
        return json.dumps({
            "format": FORMAT,
            "state": self.state.to_dict(pending=pending),
            "profile": self.profile.to_lists(),
            "base": self.base,
        })

    @classmethod
    def from_json(cls, text: str, hare: HareSearch, *, defer: bool = False) -> HareSession:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"HARE session state is not valid JSON: {e}") from e
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"not a HARE session state (expected format {FORMAT!r})")
        profile = ActionabilityProfiles.from_lists(**data["profile"])
        state = HareState.from_dict(hare.context, data["state"], defer=defer)
        return cls(hare, state, profile, data["base"])

    def take_state(self, text: str, query: HareQuery | None = None) -> None:
        """Continue from the machine of ``text`` (``to_json`` of this session after its
        pending search ran elsewhere), with its next question when built there too
        (``query``): the same state and question as had they been computed here."""
        data = json.loads(text)
        self.state = HareState.from_dict(self.hare.context, data["state"],
                                         defer=self.state.defer)
        self._query = query
