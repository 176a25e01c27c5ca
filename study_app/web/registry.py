"""The renderer registry: one renderer per page kind (``protocols.pages.PAGE_KINDS``).

A renderer draws its page and returns the answer dict once the participant submitted a
complete form (None otherwise; terminal pages never return one). Render modules register
theirs with ``@renders("kind")``; ``study_app.web.renderers`` imports them all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from protocols import pages as pg

Renderer = Callable[[pg.Page], dict[str, Any] | None]
RENDERERS: dict[str, Renderer] = {}


def renders(kind: str) -> Callable[[Renderer], Renderer]:
    """Decorator: register the renderer of the page kind ``kind``."""

    def register(fn: Renderer) -> Renderer:
        if kind in RENDERERS:
            raise ValueError(f"page kind {kind!r} has two renderers")
        RENDERERS[kind] = fn
        return fn

    return register
