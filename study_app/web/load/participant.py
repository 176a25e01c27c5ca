"""A load participant: reads each page off the screen (no browser), answers it the way the
synthetic participants do, submits, and times the transition.

The participant app marks every page with ``data-page`` / ``data-kind`` (its progress bar)
and keys every widget ``<page>:<name>``, so the screen alone says what to answer
(``study_app.web.load.streamlit_client``). Answers are drawn from a generator seeded by the
participant and the page, so a page answered again after a server was lost gets the same
answer. Each kind answers through its own load answer, registered beside its renderer
(``study_app.web.registry.load_answers``): they follow the synthetic participant's rules that
the protocol fixes (consent given, eligible screening answers, attention checks passed) and
draw the rest from what the page offers. A page only read is answered with Continue; a kind
without a load answer stops the participant with ``UnknownPageKindError``.

``expected`` collects, per page, the answer the database must hold afterwards
(``study_app.web.load.audit``).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import random
import time
from dataclasses import dataclass, field
from typing import Any

from protocols.definition.schema import Protocol
from protocols.running.pages import PAGE_KINDS
from study_app.web import renderers  # noqa: F401  (registers every kind's load answer)
from study_app.web.load.streamlit_client import (
    Screen,
    StreamlitProtocolError,
    StreamlitSession,
    widget_state,
)
from study_app.web.registry import LOAD_ANSWERS, LoadPage, only_read

TERMINAL = ("debrief", "end", "pause")  # a pause: the first of two sessions is over


class PageStuckError(RuntimeError):
    """The page did not move on after its answer was submitted."""


class UnknownPageKindError(RuntimeError):
    """The app drew a page kind the load participant cannot answer."""


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
    # mean seconds each action on a page takes once read (a widget change, a button, the
    # click on Continue; ``_act``): a hand, not a script (0: one action right after another)
    act: float = 0.0
    timeout: float = 120.0
    reconnects_allowed: int = 10
    # As a browser: every change of a widget outside a form is a script run of its own
    # before the click (a form's widgets travel with its submit: _change_widgets) (False:
    # a page's answers travel with the click in one run, half the server's work per page).
    widget_reruns: bool = True
    # Away mid-study: with probability ``linger_share`` the participant closes the
    # connection before their 2nd, 3rd or 4th page and comes back by their resume link
    # ``linger`` seconds later (past a protocol's time limit: the time-is-up page).
    linger_share: float = 0.0
    linger: float = 0.0
    steps: list[Step] = field(default_factory=list)
    expected: dict[str, dict[str, Any]] = field(default_factory=dict)
    token: str | None = None
    end_kind: str | None = None
    ending: str | None = None  # the ending the end page's code is of (e.g. timed_out)
    reconnects: int = 0
    opened: float | None = None  # seconds to draw the first page
    lingered: bool = False
    _seen: int = 0  # pages drawn, for where to linger

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
                if self.end_kind is None:  # went away mid-study: back by the resume link
                    await asyncio.sleep(self.linger)
                    continue
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
                    self.ending = screen.attribute("ending")
                    return
                self._seen += 1
                if self._goes_away():
                    self.lingered = True
                    return
                if self.think > 0:
                    await asyncio.sleep(self._rng(page_id + ":think").expovariate(1 / self.think))
                screen = await self._answer(session, screen, page_id, kind)
                self._remember_token(session)

    def _goes_away(self) -> bool:
        """Whether to leave now (before the 2nd to 4th page drawn; drawn once per
        participant from its seed)."""
        if self.lingered or self.linger_share <= 0:
            return False
        rng = self._rng("linger")
        return rng.random() < self.linger_share and self._seen == 2 + rng.randrange(3)

    def _remember_token(self, session: StreamlitSession) -> None:
        for part in session.query_string.split("&"):
            if part.startswith("p="):
                self.token = part[2:]

    async def _answer(self, session: StreamlitSession, screen: Screen, page_id: str,
                      kind: str) -> Screen:
        screen, values, expected = await self._choose(session, screen, page_id, kind)
        if self.widget_reruns:
            screen = await self._change_widgets(session, screen, page_id, values)
        states = [widget_state(screen.widgets[key], v) for key, v in values.items()]
        states.append(widget_state(screen.widgets[f"{page_id}:submit"], True))
        self.expected[page_id] = expected
        await self._act(page_id, "submit")
        started = time.perf_counter()
        after = await session.rerun(states)
        seconds = time.perf_counter() - started
        if after.attribute("page") == page_id:
            raise PageStuckError(f"{page_id} did not move on: {after.errors}")
        self.steps.append(Step(page_id, kind, seconds))
        return after

    async def _choose(self, session: StreamlitSession, screen: Screen, page_id: str,
                      kind: str) -> tuple[Screen, dict[str, Any], dict[str, Any]]:
        """(the screen once its buttons were pressed, widget key -> shown value, the answer
        the database must hold): the kind's own load answer
        (``study_app.web.registry.load_answers``), ``{}`` for a page only read; a kind with
        neither is an error."""
        if kind not in PAGE_KINDS:
            raise UnknownPageKindError(f"{page_id}: the app drew an unknown page kind {kind!r}")
        if only_read(kind):
            return screen, {}, {}
        if kind not in LOAD_ANSWERS:
            raise UnknownPageKindError(f"{page_id}: page kind {kind!r} has no load answer "
                                       "(study_app.web.registry.load_answers)")
        async def press(widget: Any) -> Screen:
            await self._act(page_id, widget.key or widget.id)
            return await session.rerun([widget_state(widget, True)])

        page = LoadPage(page_id, screen, self.protocol, self._rng(page_id), press)
        result = LOAD_ANSWERS[kind](page)
        shown, expected = await result if inspect.isawaitable(result) else result
        return page.screen, {f"{page_id}:{k}": v for k, v in shown.items()}, expected

    async def _act(self, page_id: str, what: str) -> None:
        """The time an action on the page takes: uniform between half and one and a half
        times ``act``, drawn per page and action. Unlike reading, an action never takes no
        time: the hand points at the control and presses it (the Keystroke-Level Model's
        pointing and button-press operators)."""
        if self.act > 0:
            rng = self._rng(f"{page_id}:act:{what}")
            await asyncio.sleep(rng.uniform(0.5 * self.act, 1.5 * self.act))

    async def _change_widgets(self, session: StreamlitSession, screen: Screen, page_id: str,
                              values: dict[str, Any]) -> Screen:
        """Set the widgets one by one as a browser does: a change of a widget outside a form
        is a script run of its own, sent with the state of every such widget set so far; a
        widget in a form keeps its value in the browser until the form's submit (the click)
        sends it, so changing it costs the person time but the server nothing."""
        chosen: dict[str, Any] = {}
        for key, value in values.items():
            await self._act(page_id, key)
            if screen.widgets[key].in_form:
                continue
            chosen[key] = value
            screen = await session.rerun([widget_state(screen.widgets[k], v)
                                          for k, v in chosen.items()])
            if screen.attribute("page") != page_id:
                raise PageStuckError(f"{page_id} left after changing {key}: {screen.errors}")
        return screen
