"""How a simulated person answers HARE, and the people of the HARE benchmark (the HARE paper).

**The answering model** (one for every simulated person). A person has a personal cost c of
each plan shown and a threshold tau. Between two plans they choose the right one with the
Luce (Bradley-Terry) probability

    P(right) = 1 - 1 / (1 + exp((c_left - c_right) / T)),

a deterministic choice of the cheaper plan at temperature T = 0 (ties: the left one); they
accept a plan when c <= tau. ``luce_choice`` and ``accepts`` implement it. What the cost is
depends on who is simulated: the benchmark's people below (cost = distance to a hidden ideal
plan, T = 0: the HARE paper's simulated users) and a study's synthetic participants
(engine.synthetic.participants: cost = their true weighted effort, T from the protocol).

**The benchmark's people** (the HARE paper, section 5): a hidden ideal plan answers the queries.

Profiles are compared in normalized units, v(x') = (x' - x) / M (M the training ranges).

**Ground truth** (engine.synthetic.hare_truth): an ideal plan per person at scale s, drawn
``ground_truth`` = "perturbation" (the paper's: the boundary point nearest a random
perturbation of the person's mutable continuous features of norm 0.2 / 0.8 / 1.5) or "rays"
(a variant: a boundary ray within 1.25 / 2 / 4 times the nearest boundary radius). The ideal
is an action, so its profile x_gt includes consequences.

**Answers.** The cost of a profile x' is its distance to the ideal, |v(x') - v(x_gt)| (L2),
at temperature 0: relative feedback prefers the profile closer to x_gt; absolute feedback
accepts when the distance is at most tau = accept_tol * |v(x_gt)|. Metrics: GTP = that L2
distance, GTD = the cosine distance between v(x') and v(x_gt) (engine.metrics.gtp / gtd).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from engine import metrics
from engine.recourse.base import RecourseContext
from engine.recourse.shift_actions import realize
from engine.scm import ArrayLike
from engine.synthetic.hare_truth import (
    PAPER_GROUND_TRUTH,
    SCALES,
    check_ground_truth,
    ideal_by_perturbation,
    ideal_by_rays,
)

# exp overflows past this; the choice is certain long before.
_MAX_EXPONENT = 50.0


def luce_choice(
    cost_left: ArrayLike, cost_right: ArrayLike, temperature: float,
    uniform: ArrayLike | None = None,
) -> np.ndarray:
    """1 where the person chooses the right plan, else 0 (module docstring). ``uniform`` is
    a U(0, 1) draw per choice (needed when ``temperature`` > 0).

    >>> from engine.synthetic import luce_choice
    >>> luce_choice([1.0, 0.2], [0.5, 0.9], temperature=0).tolist()   # the cheaper one
    [1, 0]
    >>> luce_choice([1.0], [0.5], temperature=0.1, uniform=[0.5]).tolist()
    [1]
    """
    left = np.asarray(cost_left, dtype=np.float64)
    right = np.asarray(cost_right, dtype=np.float64)
    if temperature == 0:
        return (right < left).astype(np.int64)
    if uniform is None:
        raise ValueError("a choice at temperature > 0 needs a uniform draw")
    z = np.clip((left - right) / temperature, -_MAX_EXPONENT, _MAX_EXPONENT)
    p_left = 1.0 / (1.0 + np.exp(z))
    return (np.asarray(uniform) >= p_left).astype(np.int64)


def accepts(cost: ArrayLike, threshold: ArrayLike) -> np.ndarray:
    """True where the plan's cost is at most the person's threshold.

    >>> from engine.synthetic import accepts
    >>> accepts([0.1, 0.5], threshold=0.3).tolist()
    [True, False]
    """
    return np.asarray(cost) <= np.asarray(threshold)


@dataclass
class SimulatedPeople:
    """A batch of simulated people (module docstring).

    >>> import torch
    >>> from engine import BayesDecision, RecourseContext, get_scenario, rejected_rows
    >>> from engine.synthetic import SimulatedPeople
    >>> loan = get_scenario("loan")
    >>> ctx = RecourseContext(loan, BayesDecision(loan))
    >>> test_x, _ = loan.dataset["test"]        # the test split: (x, y)
    >>> x = test_x[rejected_rows(loan, ctx.classifier)[:3]].double()
    >>> people = SimulatedPeople.draw(ctx, x, loan.actionable_mask().expand(3, -1), "near",
    ...                               seed=0, directions=16)
    >>> people.found.tolist(), people.accept(people.truth).tolist()   # the ideal: accepted
    ([True, True, True], [True, True, True])
    >>> people.compare(x, people.truth).tolist()      # the ideal beats doing nothing
    [1, 1, 1]
    """

    x: Tensor  # (n, d) factual profiles
    truth_shift: Tensor  # (n, d) the ideal action as a shift
    truth: Tensor  # (n, d) the ideal profile x_gt
    ranges: Tensor
    found: Tensor  # (n,) bool: an ideal exists (engine.synthetic.hare_truth)
    accept_tol: float = 0.1

    @classmethod
    def draw(
        cls,
        context: RecourseContext,
        x: Tensor,
        allowed: Tensor,
        scale: str,
        *,
        seed: int,
        directions: int = 128,
        radius: float = 2.0,
        bisections: int = 20,
        accept_tol: float = 0.1,
        ground_truth: str = PAPER_GROUND_TRUTH,
    ) -> SimulatedPeople:
        if scale not in SCALES:
            raise ValueError(f"unknown scale {scale!r}; choose from {', '.join(SCALES)}")
        check_ground_truth(ground_truth)
        gen = torch.Generator().manual_seed(seed)
        if ground_truth == "rays":
            shift, found = ideal_by_rays(context, x, allowed, scale, gen,
                                         directions=directions, radius=radius,
                                         bisections=bisections)
        else:
            shift, found = ideal_by_perturbation(context, x, allowed, scale, gen, seed=seed,
                                                 bisections=bisections)
        with torch.no_grad():
            truth = realize(context, x, shift, allowed).x_cf
        return cls(x, shift, truth, context.ranges.to(torch.float64), found, accept_tol)

    def _v(self, profile: Tensor) -> Tensor:
        return (profile.to(torch.float64) - self.x) / self.ranges

    def gtp(self, profile: Tensor) -> Tensor:
        return metrics.gtp(self._v(profile), self._v(self.truth))

    def gtd(self, profile: Tensor) -> Tensor:
        return metrics.gtd(torch.zeros_like(self.x), self._v(profile), self._v(self.truth))

    def compare(self, left: Tensor, right: Tensor) -> Tensor:
        """(n,) long: 1 where the right profile is closer to the ideal, else 0."""
        return torch.from_numpy(luce_choice(self.gtp(left), self.gtp(right), 0.0))

    def accept(self, profile: Tensor) -> Tensor:
        """(n,) bool: the profile is close enough to the ideal."""
        return torch.from_numpy(
            accepts(self.gtp(profile), self.accept_tol * self._v(self.truth).norm(dim=1)))

    def row(self, i: int) -> SimulatedPeople:
        """Person i alone (a batch of one)."""
        sl = slice(i, i + 1)
        return SimulatedPeople(self.x[sl], self.truth_shift[sl], self.truth[sl], self.ranges,
                               self.found[sl], self.accept_tol)
