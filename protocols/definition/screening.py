"""Screening questions: their kinds, who is eligible, and the answers that feed the profile.

A question has a ``kind``:

- ``single``: one of ``options``; eligible when the chosen option is one of ``eligible``.
- ``multiple`` ("select all that apply"): one or more of ``options``; eligible when every
  chosen option is one of ``eligible`` (the reference study's loans question: choosing any
  loan screens out, "I do not have any loans" alone does not).
- ``number``: a number in ``min``..``max`` with ``decimals`` places and a ``unit`` (the
  reference study's "[ ] years old"); every answer in that range is eligible, one outside it
  is refused on the page (nothing stored).

A ``single`` question may carry ``brackets``: one ``[low, high]`` per option, in the display
units of the profile feature it answers (``profile.from_screening``), or null for an option
with no value (e.g. "10M or more", "Choose not to disclose"; such an option may not be eligible).
The profile then takes the bracket's midpoint,

    value(option k) = (low_k + high_k) / 2,

so the reference study's income bracket "4M - 5M" becomes an income of 4.5 million JPY (and
its loan, one third of the income, 1.5 million JPY). A synthetic participant answers the
bracket that holds their own value (low <= v < high; the last bracket with a value also
takes v = high).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from protocols.definition.problems import Problems, report

Answer = str | list[str] | float | int


class ScreeningQuestion(BaseModel):
    """One eligibility question (module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,62}$")
    question: str = Field(min_length=1)
    kind: Literal["single", "multiple", "number"] = "single"
    options: list[str] = Field(default_factory=list)
    eligible: list[str] = Field(default_factory=list)
    min: float | None = None
    max: float | None = None
    decimals: int = Field(default=0, ge=0, le=6)
    unit: str = ""
    brackets: list[tuple[float, float] | None] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ScreeningQuestion:
        out: Problems = []
        if self.kind == "number":
            for name in ("options", "eligible", "brackets"):
                if getattr(self, name):
                    out.append(((name,), "a number question has no " + name))
            if self.min is None or self.max is None or self.min >= self.max:
                out.append((("max",), "a number question needs min < max"))
        else:
            if len(self.options) < 2:
                out.append((("options",), "a choice question needs at least 2 options"))
            if not self.eligible:
                out.append((("eligible",), "name at least one eligible option"))
            bad = [e for e in self.eligible if e not in self.options]
            if bad:
                out.append((("eligible",), f"not among the options: {', '.join(bad)}"))
            if self.min is not None or self.max is not None or self.unit:
                out.append((("kind",), "min, max and unit belong to a number question"))
        if self.brackets is not None:
            out += self._bracket_problems()
        report(out)
        return self

    def _bracket_problems(self) -> Problems:
        if self.kind != "single":
            return [(("brackets",), "only a single-choice question has brackets")]
        assert self.brackets is not None
        if len(self.brackets) != len(self.options):
            return [(("brackets",), f"one bracket per option: {len(self.options)} options, "
                     f"{len(self.brackets)} brackets")]
        out = []
        for k, (option, b) in enumerate(zip(self.options, self.brackets, strict=True)):
            if b is None and option in self.eligible:
                out.append((("brackets", k), f"eligible option {option!r} needs a bracket"))
            elif b is not None and not b[0] < b[1]:
                out.append((("brackets", k), f"{option!r}: low must be below high"))
        return out

    # ---- answers --------------------------------------------------------------------------
    def problems(self, value: Any) -> list[str]:
        """What is wrong with an answer ``value`` to this question (empty: it fits)."""
        if self.kind == "number":
            if isinstance(value, bool) or not isinstance(value, int | float) or \
                    not np.isfinite(value):
                return [f"{self.id}: expected a number"]
            assert self.min is not None and self.max is not None
            if not self.min <= value <= self.max:
                return [f"{self.id}: {value:g} is outside {self.min:g}..{self.max:g} "
                        f"{self.unit}".rstrip()]
            return []
        chosen = value if self.kind == "multiple" else [value]
        if self.kind == "multiple" and (not isinstance(value, list) or not value):
            return [f"{self.id}: choose at least one option"]
        if not all(isinstance(v, str) for v in chosen):
            return [f"{self.id}: expected " + ("a list of options" if self.kind == "multiple"
                                                else "one option")]
        if len(set(chosen)) != len(chosen):
            return [f"{self.id}: an option is chosen twice"]
        bad = [v for v in chosen if v not in self.options]
        return [f"{self.id}: {v!r} is not an option ({', '.join(self.options)})" for v in bad]

    def eligible_answer(self, value: Answer) -> bool:
        """A valid answer lets the participant continue (module docstring)."""
        if self.kind == "number":
            return True
        chosen = value if isinstance(value, list) else [value]
        return all(v in self.eligible for v in chosen)

    def bracket_value(self, option: str) -> float:
        """The midpoint of the chosen option's bracket (module docstring)."""
        if self.brackets is None or option not in self.options:
            raise ValueError(f"{self.id}: {option!r} is not a bracket of this question")
        b = self.brackets[self.options.index(option)]
        if b is None:
            raise ValueError(f"{self.id}: {option!r} has no bracket")
        return (b[0] + b[1]) / 2.0

    def option_holding(self, v: float) -> str | None:
        """The eligible option whose bracket holds v (None: no eligible bracket does)."""
        assert self.brackets is not None
        spans = [(o, b) for o, b in zip(self.options, self.brackets, strict=True)
                 if b is not None and o in self.eligible]
        for k, (option, (lo, hi)) in enumerate(spans):
            if lo <= v < hi or (k == len(spans) - 1 and v == hi):
                return option
        return None

    def example_answer(self, rng: np.random.Generator | None = None) -> Answer:
        """An eligible answer: the first eligible option (``multiple``: that one alone);
        a number drawn uniformly from the range (its middle without ``rng``)."""
        if self.kind == "number":
            assert self.min is not None and self.max is not None
            v = rng.uniform(self.min, self.max) if rng is not None else (self.min + self.max) / 2
            v = round(float(v), self.decimals)
            return int(v) if self.decimals == 0 else v
        return [self.eligible[0]] if self.kind == "multiple" else self.eligible[0]


class SessionsSpec(BaseModel):
    """A study in two sessions (the reference study's two-week review): the participant
    stops after the page ``break_after`` and may go on ``delay_seconds`` later, returning by
    their link; until then every visit shows when to come back. ``delay_seconds: 0`` (the
    default) runs the study in one session. ``text`` is what the pause page says; ``{when}``
    becomes the time the main part opens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    delay_seconds: float = Field(default=0.0, ge=0.0)
    break_after: Literal["screening", "profile"] = "profile"
    text: str = ("Thank you. Your answers are saved. The next part opens on {when}: please "
                 "come back then with the link you used today.")

    @property
    def two(self) -> bool:
        return self.delay_seconds > 0

    def opens_at(self, answered: list[str], last_answer: datetime | None) -> datetime | None:
        """When the second session opens for a participant who answered the pages
        ``answered``, the last at ``last_answer`` (None: one session, or the first one is
        not over): that answer's time + ``delay_seconds`` while ``break_after`` is the last
        page answered."""
        if not self.two or not answered or answered[-1] != self.break_after or \
                last_answer is None:
            return None
        return last_answer + timedelta(seconds=self.delay_seconds)


def pause_problems(spec: SessionsSpec, slots: list[str]) -> Problems:
    """A break must follow a page every participant passes through."""
    if spec.two and spec.break_after not in slots:
        return [(("sessions", "break_after"), f"no page {spec.break_after!r} in this "
                 f"protocol ({', '.join(slots)})")]
    return []
