"""HARE and Multi-HARE (paper 002): human-in-the-loop refinement of any base method's plan.

``Hare(context, base=<RecourseMethod or catalogue name>, budget=B, iterations=T, ...)``
wraps a base generator: the base plan r_0 = M(x) becomes a shift action
(engine.recourse.shift_actions.shift_of), the state machine of engine.recourse.hare_state
refines it with the person's answers (T = 1 is HARE, T > 1 Multi-HARE), and the final shift
is realized through the world model and evaluated like every other method's plan.

People answer through the small protocol ``compare(left_profile, right_profile) -> (n,) 0/1``
and ``accept(profile) -> (n,) bool`` (``SimulatedPeople`` in batch runs); one real person
drives a ``HareSession`` instead (engine.recourse.hare_session).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import torch
from torch import Tensor

from engine.preferences import ActionabilityProfiles
from engine.recourse.base import RecourseBatch, RecourseContext, RecourseMethod, Timer
from engine.recourse.hare_state import HareConfig, HareState
from engine.recourse.shift_actions import allowed_mask, realize, shift_of
from engine.scm import ArrayLike


class People(Protocol):
    def compare(self, left: Tensor, right: Tensor) -> Tensor: ...

    def accept(self, profile: Tensor) -> Tensor: ...


@dataclass
class HareRun:
    """A finished batch run: the base plans, HARE's plans and the machine's final state."""

    base: RecourseBatch
    final: RecourseBatch
    state: HareState
    seconds: float  # HARE's own time (base generation excluded)


class Hare(RecourseMethod):
    """HARE over ``base`` (module docstring); the other options are HareConfig fields."""

    name = "hare"

    def __init__(
        self,
        context: RecourseContext,
        base: RecourseMethod | str | None = None,
        *,
        base_options: dict[str, Any] | None = None,
        seed: int = 0,
        **config: Any,
    ) -> None:
        super().__init__(context)
        if base is None:
            raise ValueError("hare needs a base method (a RecourseMethod or a catalogue name)")
        if isinstance(base, str):
            from engine.recourse import get_method

            if base == "hare":
                raise ValueError("hare cannot be its own base")
            base = get_method(base, context, **(base_options or {}))
        self.base = base
        self.config = HareConfig(**config)
        self.seed = seed

    # ---- pieces shared by batch runs and sessions -------------------------------------
    def base_plans(self, x: Tensor, profiles: ActionabilityProfiles) -> RecourseBatch:
        """The base method's plan per person (a person without one keeps x)."""
        return self.base.recourse(x, profiles)

    def start(
        self, x: Tensor, profiles: ActionabilityProfiles, base: RecourseBatch, seed: int
    ) -> HareState:
        """A machine started at the base plans ``base`` (one row per person)."""
        allowed = allowed_mask(self.context, profiles.hard_mask)
        acted = base.action_mask & base.found[:, None] & allowed
        z0 = shift_of(self.context, x, acted, base.action_values)
        return HareState.start(self.context, self.config, x, allowed, z0,
                               base.valid & base.found, seed)

    def evaluate(
        self, x: Tensor, z: Tensor, profiles: ActionabilityProfiles, *, runtime: float = 0.0,
        found: Tensor | None = None, person: Tensor | None = None,
    ) -> RecourseBatch:
        """Realize shifts ``z`` and measure them (one row per row of x)."""
        allowed = allowed_mask(self.context, profiles.hard_mask)
        with torch.no_grad():
            r = realize(self.context, x, z, allowed)
        return self.context.evaluate(self.name, x, r.action_mask, r.action_values, profiles,
                                     runtime=runtime, found=found, person=person, x_cf=r.x_cf)

    def profiles_of(self, x: Tensor, z: Tensor, allowed: Tensor) -> Tensor:
        with torch.no_grad():
            return realize(self.context, x, z, allowed).x_cf

    # ---- batch runs ---------------------------------------------------------------------
    def run(
        self, factuals: ArrayLike, profiles: ActionabilityProfiles, people: People,
        *, seed: int | None = None, base: RecourseBatch | None = None,
    ) -> HareRun:
        """Run the machine to the end with ``people`` answering every query."""
        x = self.context.check_inputs(factuals, profiles).to(torch.float64)
        base = self.base_plans(x, profiles) if base is None else base
        with Timer() as t:
            state = self.start(x, profiles, base, self.seed if seed is None else seed)
            while state.phase != "done":
                q = state.query()
                shown = [self.profiles_of(x, z, state.allowed) for z in q.options]
                if q.kind == "compare":
                    state.answer(people.compare(shown[0], shown[1]))
                else:
                    state.accept(people.accept(shown[0]))
            z, valid = state.result
        final = self.evaluate(x, z, profiles, runtime=t.seconds, found=valid)
        return HareRun(base, final, state, t.seconds)

    def recourse(
        self, factuals: ArrayLike, profiles: ActionabilityProfiles, people: People | None = None
    ) -> RecourseBatch:
        """HARE's plans for people who answer through ``people`` (required: HARE asks)."""
        if people is None:
            raise ValueError(
                "HARE asks the person to compare plans: pass people= (e.g. "
                "engine.recourse.hare_people.SimulatedPeople), or drive one real person "
                "through engine.recourse.hare_session.HareSession"
            )
        return self.run(factuals, profiles, people).final
