"""HARE and Multi-HARE (the HARE paper): human-in-the-loop refinement of any base method's plan.

``Hare(context, base=<RecourseMethod or catalogue name>, budget=B, iterations=T, ...)``
wraps a base generator: the base plan r_0 = M(x) becomes a shift action
(engine.recourse.shift_actions.shift_of), the state machine of engine.recourse.hare.state
refines it with the person's answers (T = 1 is HARE, T > 1 Multi-HARE), and the final shift
is realized through the world model and evaluated like every other method's plan.

HARE is ``interactive`` (engine.recourse.base.Capabilities): its plans need the person's
answers. People answer through the small protocol ``compare(left_profile, right_profile) ->
(n,) 0/1`` and ``accept(profile) -> (n,) bool``: a batch of answerers is bound with
``answered_by(people)`` (then ``recourse(factuals, profiles)`` runs the machine like any
method's; engine.synthetic.hare_people has simulated ones), and one real person is driven one
question at a time by ``start_session`` / ``resume_session`` (engine.recourse.hare.session).
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Any, Protocol

import torch
from torch import Tensor

from engine.preferences import ActionabilityProfiles
from engine.recourse.base import Capabilities, RecourseContext, RecourseMethod, Timer
from engine.recourse.batch import RecourseBatch
from engine.recourse.hare.config import HareConfig
from engine.recourse.hare.search import obey_rules
from engine.recourse.hare.session import HareSession
from engine.recourse.hare.state import HareState
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
    capabilities = Capabilities(interactive=True, wraps_base=True)

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
            from engine.recourse import get_method, method_class

            if method_class(base).capabilities.wraps_base:
                raise ValueError(f"{base} cannot be hare's base: it wraps a base method itself")
            base = get_method(base, context, **(base_options or {}))
        self.base = base
        self.config = HareConfig(**config)
        self.seed = seed
        self.people: People | None = None

    @property
    def query_budget(self) -> int:
        """The most questions one person is asked (B)."""
        return self.config.budget

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        return (*super().option_names(), *(f.name for f in dataclasses.fields(HareConfig)))

    @classmethod
    def option_problems(cls, options: dict[str, Any]) -> list[str]:
        """HareConfig's own checks of the configuration options among ``options``."""
        names = {f.name for f in dataclasses.fields(HareConfig)}
        try:
            HareConfig(**{k: v for k, v in options.items() if k in names})
        except ValueError as e:
            return str(e).split("; ")
        except TypeError as e:  # a value of the wrong kind, e.g. a text where a number goes
            return [f"an option has a value of the wrong type ({e})"]
        return []

    # ---- pieces shared by batch runs and sessions -------------------------------------
    def base_plans(self, x: Tensor, profiles: ActionabilityProfiles) -> RecourseBatch:
        """The base method's plan per person (a person without one keeps x)."""
        return self.base.recourse(x, profiles)

    def start(
        self, x: Tensor, profiles: ActionabilityProfiles, base: RecourseBatch, seed: int,
        *, defer: bool = False,
    ) -> HareState:
        """A machine started at the base plans ``base`` (one row per person); ``defer``: its
        first search waits for ``HareState.propose_all``."""
        allowed = allowed_mask(self.context, profiles.hard_mask)
        acted = base.action_mask & base.found[:, None] & allowed
        z0 = shift_of(self.context, x, acted, base.action_values)
        # the first incumbent is shown (accepted or compared) like any candidate: it obeys
        # the study's plan rules as the candidates do
        z0, valid0 = obey_rules(self.context, x, z0, allowed, base.valid & base.found)
        return HareState.start(self.context, self.config, x, allowed, z0, valid0, seed,
                               defer=defer)

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

    def answered_by(self, people: People) -> Hare:
        """This method with ``people`` answering (one answerer per row of the factuals)."""
        bound = copy.copy(self)
        bound.people = people
        return bound

    def recourse(self, factuals: ArrayLike, profiles: ActionabilityProfiles) -> RecourseBatch:
        """HARE's plans for the people bound with ``answered_by`` (HARE asks them)."""
        if self.people is None:
            raise ValueError(
                "hare is interactive: bind who answers with answered_by(people) (e.g. "
                "engine.synthetic.SimulatedPeople), or drive one real person with "
                "start_session()"
            )
        return self.run(factuals, profiles, self.people).final

    # ---- one real person ----------------------------------------------------------------
    def start_session(
        self, x: ArrayLike, profile: ActionabilityProfiles, *, seed: int, defer: bool = False
    ) -> HareSession:
        """One person's interaction (x (1, d)), one question at a time (``defer``: its
        searches wait for ``complete_sessions``)."""
        return HareSession.start(self, x, profile, seed=seed, defer=defer)

    def resume_session(self, text: str, *, defer: bool = False) -> HareSession:
        """An interaction saved with ``HareSession.to_json``."""
        return HareSession.from_json(text, self, defer=defer)

    def complete_sessions(self, sessions: list[HareSession]) -> None:
        """Search the next candidates of the ``pending`` sessions among ``sessions``, all in
        one batched search (each gets the candidates it would get alone)."""
        HareState.propose_all([s.state for s in sessions])
