"""HARE: human-in-the-loop recourse that refines a base method's plan by asking questions.

``method`` (the catalogue method), ``config`` (its options and named schedules), ``state``
(the search's state between questions), ``search`` (candidate sampling and the boundary
search) and ``session`` (one person's questions and answers, resumable).
"""

from __future__ import annotations

from engine.exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "engine.recourse.hare.method": ("Hare",),
    "engine.recourse.hare.config": ("HareConfig",),
    "engine.recourse.hare.state": ("HareState",),
    "engine.recourse.hare.search": ("boundary_point_search",),
    "engine.recourse.hare.session": ("HareSession",),
})
