"""HARE's configuration: budget B, iterations T, the search's hyper-parameters and the named
variants, validated on construction. The paper's configuration is the default; what each
option does is in engine.recourse.hare.state's docstring.

How T shapes the tournaments (``iterations_reading``; the machine asks ``rounds``,
``new_candidates`` and ``asks_accept``):

- ``"text"`` (the default; the paper's text, Algorithm 4): T rounds of k = B // T questions,
  a round's contenders k new candidates, or r_{t-1} and k - 1 new ones under
  ``keep_incumbent``; the accept question after each round (the last one: ``final_accept``).
- ``"code"`` (the paper's released code, which produced its tables): c = T new candidates a
  round (c = B at T = 1: HARE's single round) beside r_{t-1} under ``keep_incumbent``,
  B // c rounds, no accept question at all, so the comparisons alone spend B (c + 1
  contenders and c comparisons a round under ``keep_incumbent``: B when c divides B). The
  code's T = 10 at B = 30 is three rounds of ten new candidates, the text's ten rounds of
  three contenders."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

GAMMA_SCHEDULES = ("paper", "halve")
FINAL_ACCEPT = ("ask", "skip")
ITERATIONS_READINGS = ("text", "code")
# What a stored state without these fields ran with (engine.recourse.hare.state, from_dict).
LEGACY = {"gamma_schedule": "halve", "final_accept": "skip", "keep_incumbent": False,
          "iterations_reading": "text"}


@dataclass(frozen=True)
class HareConfig:
    """Budget, iterations and the search's hyper-parameters: the paper's by default;
    ``gamma_floor`` and ``shrink`` apply under ``gamma_schedule="halve"``
    (engine.recourse.hare.state's docstring)."""

    budget: int = 30
    iterations: int = 1
    steps: int = 100
    lr: float = 0.1
    gamma: float = 1.0
    gamma_floor: float = 0.25
    shrink: float = 0.5
    lam: float = 10.0
    bisections: int = 20
    calibrate: Literal["all", "winner"] = "all"
    keep_incumbent: bool = True
    gamma_schedule: Literal["paper", "halve"] = "paper"
    final_accept: Literal["ask", "skip"] = "ask"
    # logit margin of "favourable" in BoundaryPointSearch (engine.recourse.hare.search): 0 is
    # the paper's g >= 0.5; a study's plans keep a margin so they stay approved when shown
    boundary_margin: float = 0.0
    # what T means (module docstring): the paper's text (the default) or its released code
    iterations_reading: Literal["text", "code"] = "text"

    def __post_init__(self) -> None:
        problems = []
        if self.iterations < 1:
            problems.append(f"iterations must be >= 1 (got {self.iterations})")
        if self.iterations_reading == "code" and self.budget < self.iterations:
            problems.append(
                f"budget must be at least iterations under iterations_reading 'code' (T = "
                f"{self.iterations} new candidates a round; got budget {self.budget})")
        elif self.iterations >= 1 and self.iterations_reading != "code" and (
                self.budget < self.iterations
                or (self.keep_incumbent and self.per_iteration < 2)):
            least = (2 if self.keep_incumbent else 1) * self.iterations
            problems.append(
                f"budget must be at least {least} for {self.iterations} iteration(s)"
                f"{' keeping the incumbent' if self.keep_incumbent else ''} (got budget "
                f"{self.budget})"
            )
        if not self.boundary_margin >= 0:
            problems.append(f"boundary_margin must be >= 0 (got {self.boundary_margin})")
        if self.steps < 0 or self.bisections < 0:
            problems.append("steps and bisections must be >= 0")
        if self.lr <= 0 or self.gamma <= 0 or self.gamma_floor <= 0 or self.lam < 0:
            problems.append("lr, gamma and gamma_floor must be > 0 and lam >= 0")
        if not 0 < self.shrink <= 1:
            problems.append(f"shrink must lie in (0, 1] (got {self.shrink})")
        if self.calibrate not in ("all", "winner"):
            problems.append(f"calibrate must be 'all' or 'winner' (got {self.calibrate!r})")
        if self.gamma_schedule not in GAMMA_SCHEDULES:
            problems.append(f"gamma_schedule must be 'paper' or 'halve' (got "
                            f"{self.gamma_schedule!r})")
        if self.final_accept not in FINAL_ACCEPT:
            problems.append(f"final_accept must be 'ask' or 'skip' (got {self.final_accept!r})")
        if self.iterations_reading not in ITERATIONS_READINGS:
            problems.append(f"iterations_reading must be 'text' or 'code' (got "
                            f"{self.iterations_reading!r})")
        if problems:
            raise ValueError("; ".join(problems))

    @property
    def per_iteration(self) -> int:
        return self.budget // self.iterations

    @property
    def new_candidates(self) -> int:
        """New candidates a round (module docstring)."""
        if self.iterations_reading == "code":
            return self.iterations if self.iterations > 1 else self.budget
        return self.per_iteration - (1 if self.keep_incumbent else 0)

    @property
    def rounds(self) -> int:
        """Tournaments a person meets at most: T, or B // T under the code's reading."""
        if self.iterations_reading == "code":
            return self.budget // self.new_candidates
        return self.iterations

    def asks_accept(self, last: bool) -> bool:
        """Whether the accept question follows a round (``last``: the final one)."""
        if self.iterations_reading == "code":
            return False
        return not last or self.final_accept == "ask"
