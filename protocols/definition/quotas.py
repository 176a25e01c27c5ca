"""How many participants a study wants per arm, and how long a session may take.

``quotas`` (optional) states each arm's target and what counts towards it:

- ``complete``: the participant reached the debrief (status complete);
- ``complete_unflagged``: complete, and no data-quality flag (speeder, straight-liner,
  failed attention check: data.quality, the protocol's ``quality`` thresholds);
- ``not_excluded``: complete, and not left out of the analysis as a whole by the
  protocol's ``exclusions`` (a failed attention check under ``failed_attention``, fewer
  plans than asked under ``fewer_plans``).

With quotas, the next consenting participant gets the arm of the largest shortfall,

    shortfall(arm) = target(arm) - counted(arm) - in_progress(arm),

where "in progress" are the arm's participants still answering (status active, not past
the time limit); ties go to the arm that comes first in the participant's permuted block
(protocols.running.design), so a study with no dropouts is assigned exactly as without
quotas. When no arm has a positive shortfall the study is full: a new link, and a visit
that consents then, ends on the "study full" page (``recruitment.study_full``).

``time_limit`` (optional) ends a session ``seconds`` after the participant started (the
first visit's time, measured by the server): the participant sees a "time is up" page
(``recruitment.timed_out``), their status becomes ``timed_out`` and their place is free
again for quotas. From ``warning_seconds`` on, every page says how much time is left.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from protocols.definition.problems import Problems
from protocols.definition.screening import SessionsSpec
from protocols.definition.specs import Identifier, Strict

CountsRule = Literal["complete", "complete_unflagged", "not_excluded"]


class QuotaSpec(Strict):
    """Each arm's target (participants who count, ``counts``) (module docstring)."""

    targets: dict[Identifier, Annotated[int, Field(ge=1)]] = Field(min_length=1)
    counts: CountsRule = "complete"


class TimeLimitSpec(Strict):
    """A session's time limit from the participant's start, and when a warning shows
    (seconds; module docstring)."""

    seconds: float = Field(gt=0)
    warning_seconds: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _warning_first(self) -> TimeLimitSpec:
        if self.warning_seconds is not None and self.warning_seconds >= self.seconds:
            raise ValueError(f"warning_seconds ({self.warning_seconds:g}) must be less than "
                             f"the limit seconds ({self.seconds:g}): the warning comes first")
        return self


def quota_problems(quotas: QuotaSpec | None, limit: TimeLimitSpec | None, arms: list[str],
                   assignment: str, sessions: SessionsSpec) -> Problems:
    """Quotas name every arm and nothing else, between participants; a time limit outlasts
    the pause between two sessions."""
    out: Problems = []
    if quotas is not None:
        if assignment == "within":
            out.append((("quotas",), "quotas need arms assigned between participants "
                        "(assignment: between); within, everyone sees every arm"))
        for arm in quotas.targets:
            if arm not in arms:
                out.append((("quotas", "targets", arm), f"no arm {arm!r}; the arms are "
                            f"{', '.join(arms)}"))
        for arm in arms:
            if arm not in quotas.targets:
                out.append((("quotas", "targets"), f"no target for arm {arm!r}; give every "
                            "arm a target"))
    if limit is not None and sessions.two and limit.seconds <= sessions.delay_seconds:
        out.append((("time_limit", "seconds"), f"{limit.seconds:g} s ends every session "
                    f"before the second part opens (sessions.delay_seconds "
                    f"{sessions.delay_seconds:g})"))
    return out
