"""A load participant: reads each page off the screen (no browser), answers it the way the
synthetic participants do, submits, and times the transition.

The participant app marks every page with ``data-page`` / ``data-kind`` (its progress bar)
and keys every widget ``<page>:<name>``, so the screen alone says what to answer
(``study_app.web.load.streamlit_client``). Answers are drawn from a generator seeded by the
participant and the page, so a page answered again after a server was lost gets the same
answer; they follow the synthetic participant's rules that the protocol fixes (consent
given, eligible screening answers, attention checks passed) and draw the rest from what the
page offers (ratings on the 7-point scales, "impossible?" items, elicitation, HARE choices;
the ordinal rating model itself needs plan metrics the server never sends to a browser).

``expected`` collects, per page, the answer the database must hold afterwards
(``study_app.web.load.audit``).
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from protocols.schema import Protocol
from study_app.web.load.streamlit_client import (
    Screen,
    StreamlitProtocolError,
    StreamlitSession,
    widget_state,
)
from study_app.web.render_elicitation import CANNOT
from study_app.web.render_intro import AGREE
from study_app.web.render_plan import ACCEPT, GO_ON, OPTION_LABELS

TERMINAL = ("debrief", "end", "pause")  # a pause: the first of two sessions is over
ACCEPT_PROBABILITY = 0.35  # HARE: accept the shown plan (else keep looking)


class PageStuckError(RuntimeError):
    """The page did not move on after its answer was submitted."""


@dataclass
class Step:
    page_id: str
    kind: str  # the kind of the page answered
    seconds: float  # from sending the answer to the next page being drawn


@dataclass
class LoadParticipant:
    """One participant of a load test (``run`` walks the whole study)."""

    number: int
    protocol: Protocol
    url: str
    seed: int = 0
    think: float = 0.0  # mean seconds spent on a page before answering (exponential)
    timeout: float = 120.0
    reconnects_allowed: int = 10
    # As a browser: every widget change is a script run of its own before the click (False:
    # a page's answers travel with the click in one run, half the server's work per page).
    widget_reruns: bool = True
    steps: list[Step] = field(default_factory=list)
    expected: dict[str, dict[str, Any]] = field(default_factory=dict)
    token: str | None = None
    end_kind: str | None = None
    reconnects: int = 0
    opened: float | None = None  # seconds to draw the first page

    @property
    def external_id(self) -> str:
        return f"load{self.seed:x}x{self.number:05d}"

    def _query(self) -> str:
        if self.token is not None:
            return f"p={self.token}"
        return f"PROLIFIC_PID={self.external_id}&STUDY_ID=load&SESSION_ID=s{self.number}"

    def _rng(self, page_id: str) -> random.Random:
        digest = hashlib.sha256(f"{self.seed}:{self.number}:{page_id}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    async def run(self) -> None:
        """Walk the study to its terminal page, reconnecting when the server goes away, as a
        browser does: with the resume link once the app gave one, else the recruitment link
        again."""
        while True:
            try:
                await self._walk()
                return
            except (TimeoutError, StreamlitProtocolError, OSError):
                if self.reconnects >= self.reconnects_allowed:
                    raise
                self.reconnects += 1
                await asyncio.sleep(min(0.5 * self.reconnects, 3.0))  # a browser's backoff

    async def _walk(self) -> None:
        async with StreamlitSession(self.url, self._query(), timeout=self.timeout) as session:
            started = time.perf_counter()
            screen = await session.rerun()
            if self.opened is None:
                self.opened = time.perf_counter() - started
            self._remember_token(session)
            while True:
                page_id, kind = screen.attribute("page"), screen.attribute("kind")
                if page_id is None or kind is None:
                    raise PageStuckError(f"no page drawn: {screen.errors or screen.text()[:300]}")
                if kind in TERMINAL:
                    self.end_kind = kind
                    return
                if self.think > 0:
                    await asyncio.sleep(self._rng(page_id + ":think").expovariate(1 / self.think))
                screen = await self._answer(session, screen, page_id, kind)
                self._remember_token(session)

    def _remember_token(self, session: StreamlitSession) -> None:
        for part in session.query_string.split("&"):
            if part.startswith("p="):
                self.token = part[2:]

    async def _answer(self, session: StreamlitSession, screen: Screen, page_id: str,
                      kind: str) -> Screen:
        rng = self._rng(page_id)
        if kind == "elicitation_ranking":
            screen = await self._rearrange(session, screen, page_id, rng)
        values, expected = self._choose(screen, page_id, kind, rng)
        if self.widget_reruns:
            screen = await self._change_widgets(session, screen, page_id, values)
        states = [widget_state(screen.widgets[key], v) for key, v in values.items()]
        states.append(widget_state(screen.widgets[f"{page_id}:submit"], True))
        self.expected[page_id] = expected
        started = time.perf_counter()
        after = await session.rerun(states)
        seconds = time.perf_counter() - started
        if after.attribute("page") == page_id:
            raise PageStuckError(f"{page_id} did not move on: {after.errors}")
        self.steps.append(Step(page_id, kind, seconds))
        return after

    async def _change_widgets(self, session: StreamlitSession, screen: Screen, page_id: str,
                              values: dict[str, Any]) -> Screen:
        """Set the widgets one by one, each change a script run (as the browser sends one
        rerun per changed widget, with the state of every widget set so far)."""
        chosen: dict[str, Any] = {}
        for key, value in values.items():
            chosen[key] = value
            screen = await session.rerun([widget_state(screen.widgets[k], v)
                                          for k, v in chosen.items()])
            if screen.attribute("page") != page_id:
                raise PageStuckError(f"{page_id} left after changing {key}: {screen.errors}")
        return screen

    async def _rearrange(self, session: StreamlitSession, screen: Screen, page_id: str,
                         rng: random.Random) -> Screen:
        """Press a few of the ranking widget's buttons (move up/down, cannot change)."""
        for _ in range(rng.randint(0, 3)):
            buttons = [w for k, w in screen.widgets.items()
                       if k.startswith(f"{page_id}:ranking:") and not w.proto.disabled]
            if not buttons:
                break
            screen = await session.rerun([widget_state(rng.choice(buttons), True)])
        return screen

    def _choose(self, screen: Screen, page_id: str, kind: str,
                rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
        """(widget key -> shown value, the answer the database must hold)."""
        w = {k[len(page_id) + 1:]: v for k, v in screen.widgets.items()
             if k.startswith(page_id + ":")}
        if kind == "consent":
            return {f"{page_id}:agree": AGREE}, {"agree": True}
        if kind == "screening":
            return screening_widgets(self.protocol, page_id, rng)
        if kind == "attention":
            check = next(c for c in self.protocol.attention_checks
                         if f"attention-{c.id}" == page_id)
            return {f"{page_id}:choice": check.correct}, {"choice": check.correct}
        if kind == "elicitation_binary":
            answers = {f: rng.random() < 0.7 for f in w if f != "submit"}
            return ({f"{page_id}:{f}": "Yes" if v else "No" for f, v in answers.items()},
                    {"answers": answers})
        if kind == "elicitation_likert":
            shown = {f: rng.choice(x.options) for f, x in w.items() if x.type == "radio"}
            return ({f"{page_id}:{f}": v for f, v in shown.items()},
                    {"answers": {f: None if v == CANNOT else int(v.split(" ")[0])
                                 for f, v in shown.items()}})
        if kind == "elicitation_ranking":
            # the order shown is confirmed as the answer (an untouched ranking is refused)
            return ({f"{page_id}:as-shown": True},
                    {"answers": ranking_shown(screen, page_id)})
        if kind == "profile_entry":
            return self._profile(page_id, w, rng)
        if kind == "plan":
            return self._plan(page_id, w, rng)
        if kind == "hare_choice":
            choice = rng.randrange(2)
            return {f"{page_id}:choice": OPTION_LABELS[choice]}, {"choice": choice}
        if kind == "hare_accept":
            accept = rng.random() < ACCEPT_PROBABILITY
            return {f"{page_id}:accept": ACCEPT if accept else GO_ON}, {"accept": accept}
        return {}, {}  # pages acknowledged with Continue (scenario, persona, decision)

    @staticmethod
    def _profile(page_id: str, w: dict[str, Any],
                 rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
        shown: dict[str, Any] = {}
        for f, x in w.items():
            # The lower part of every list and range: a profile someone could improve on
            # (in a pool world, a random 16-item profile has no richer pool member that is
            # at least as high on every never-lowered item, so no plans would be shown).
            if x.type == "selectbox":
                shown[f] = rng.choice(x.options[:max(1, (len(x.options) + 1) // 2)])
            elif x.type == "number_input":
                lo, hi, step = x.proto.min, x.proto.max, x.proto.step or 1.0
                shown[f] = round(lo + round(rng.uniform(0.1, 0.6) * (hi - lo) / step) * step, 6)
        return {f"{page_id}:{f}": v for f, v in shown.items()}, {"values": shown}

    @staticmethod
    def _plan(page_id: str, w: dict[str, Any],
              rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
        shown: dict[str, Any] = {}
        answer: dict[str, Any] = {"impossible": {}}
        for name in ("acceptance", "action"):
            value = rng.randint(1, 7)
            shown[name] = next(o for o in w[name].options if o.split(" ")[0] == str(value))
            answer[name] = value
        for name in ("acceptance_why", "action_why"):
            if name in w:
                shown[name] = answer[name] = f"load test reason {rng.randrange(1000)}"
        for key in w:
            if key.startswith("impossible:"):
                flag = rng.random() < 0.2
                shown[key] = "Yes" if flag else "No"
                answer["impossible"][key.split(":", 1)[1]] = flag
        return {f"{page_id}:{k}": v for k, v in shown.items()}, answer


def ranking_shown(screen: Screen, page_id: str) -> dict[str, int | None]:
    """The ranks the ranking widget shows: items in the order of their "Move up" buttons
    (1 = easiest), None for those marked "cannot change" (an "I can change this" button)."""
    prefix = f"{page_id}:ranking:"
    ranks: dict[str, int | None] = {}
    for key in screen.widgets:
        if key.startswith(prefix + "up:"):
            ranks[key[len(prefix) + 3:]] = len([v for v in ranks.values() if v is not None]) + 1
        elif key.startswith(prefix + "on:"):
            ranks[key[len(prefix) + 3:]] = None
    return ranks


def screening_widgets(protocol: Protocol, page_id: str,
                      rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    """(widget key -> value, stored answer) of eligible screening answers: a choice's first
    eligible option, "select all" with that option's box ticked (``<key>:<index>``), a
    number drawn from its range."""
    shown: dict[str, Any] = {}
    answers: dict[str, Any] = {}
    for q in protocol.screening:
        key = f"{page_id}:{q.id}"
        value = q.example_answer(np.random.default_rng(rng.randrange(2**32)))
        if q.kind == "multiple":
            for option in value:  # type: ignore[union-attr]
                shown[f"{key}:{q.options.index(option)}"] = True
        else:
            shown[key] = value
        answers[q.id] = value
    return shown, {"answers": answers}
