"""The renderer registry: what the web app needs of each page kind (``protocols.running.pages``).

A page kind lives in two places: its class (``protocols.running.pages.PageKind``: payload, answer,
effect, stored rows, the synthetic participant's answer) and its render module here, which
registers

- ``@renders("kind")``: the function that draws a page of that kind and returns the answer
  dict once the participant submitted a complete form (None otherwise; terminal pages never
  return one);
- ``@load_answers("kind")``: how the load participant (``study_app.web.load``), which sees
  only the screen, answers such a page: ``(widget values by name, the answer the database
  must then hold)``. A kind whose answer is ``AckAnswer`` (a page only read) needs none: it
  is answered with its Continue button.

``study_app.web.renderers`` imports every render module; ``missing_views`` names the
registered kinds a renderer or a load answer is missing for (an error at start-up and in the
tests: an unknown kind is never answered ``{}``).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from protocols.definition.schema import Protocol
from protocols.running import pages as pg

Renderer = Callable[[pg.Page], dict[str, Any] | None]
RENDERERS: dict[str, Renderer] = {}


@dataclass
class LoadPage:
    """A page as the load participant reads it off the screen: its widgets by name (their
    key without the ``<page>:`` prefix), the study's protocol and the page's own random
    generator; ``press`` presses a button (a script run) and returns the screen after."""

    page_id: str
    screen: Any  # study_app.web.load.streamlit_client.Screen
    protocol: Protocol
    rng: random.Random
    press: Callable[[Any], Awaitable[Any]]

    @property
    def widgets(self) -> dict[str, Any]:
        prefix = self.page_id + ":"
        return {k[len(prefix):]: w for k, w in self.screen.widgets.items()
                if k.startswith(prefix)}


# (widget name -> value shown, the stored answer); may be a coroutine (pressing buttons)
LoadAnswer = Callable[[LoadPage], "tuple[dict[str, Any], dict[str, Any]] | Awaitable[Any]"]
LOAD_ANSWERS: dict[str, LoadAnswer] = {}


def renders(kind: str) -> Callable[[Renderer], Renderer]:
    """Decorator: register the renderer of the page kind ``kind``."""

    def register(fn: Renderer) -> Renderer:
        if kind in RENDERERS:
            raise ValueError(f"page kind {kind!r} has two renderers")
        RENDERERS[kind] = fn
        return fn

    return register


def load_answers(kind: str) -> Callable[[LoadAnswer], LoadAnswer]:
    """Decorator: register the load participant's answer to pages of the kind ``kind``."""

    def register(fn: LoadAnswer) -> LoadAnswer:
        if kind in LOAD_ANSWERS:
            raise ValueError(f"page kind {kind!r} has two load answers")
        LOAD_ANSWERS[kind] = fn
        return fn

    return register


def only_read(kind: str) -> bool:
    """A page kind whose answer is ``{}`` (read, then Continue)."""
    return pg.PAGE_KINDS[kind].answer_model is pg.AckAnswer


def missing_views() -> list[str]:
    """What the registered page kinds lack here: a renderer, or a load answer for a kind
    that takes more than Continue."""
    out = [f"page kind {k!r} has no renderer (@renders)" for k in pg.PAGE_KINDS
           if k not in RENDERERS]
    out += [f"page kind {k!r} has no load answer (@load_answers)" for k, kind in
            pg.PAGE_KINDS.items() if kind.answer_model is not None and not only_read(k)
            and k not in LOAD_ANSWERS]
    return out + [f"renderer for an unknown page kind {k!r}" for k in RENDERERS
                  if k not in pg.PAGE_KINDS]
