"""Synthetic participants: hidden constraints and preferences, noisy reports, ordinal ratings.

The model (docs/protocol-reference.md, "Synthetic participants"); every parameter is ground truth
that the simulator stores apart from the answers.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from engine import metrics
from engine.preferences import ActionabilityProfiles, sample_profiles
from engine.scenarios.base import Scenario
from engine.synthetic.hare_people import accepts, luce_choice
from engine.synthetic.rating_model import RatingBehaviour

# Added to the personal cost for each acted feature the person cannot change.
VIOLATION_COST = 10.0
_STREAM_PERSON, _STREAM_PLAN, _STREAM_PAGE, _STREAM_CARE, _STREAM_TIME = 1, 2, 3, 4, 5
# Typical seconds on a page of each kind (module docstring: page times); others: DEFAULT.
PAGE_SECONDS = {"consent": 30.0, "screening": 20.0, "scenario": 25.0, "persona": 20.0,
                "profile_entry": 60.0, "decision": 15.0, "elicitation_binary": 40.0,
                "elicitation_ranking": 50.0, "elicitation_likert": 50.0, "plan": 45.0,
                "attention": 10.0, "hare_choice": 20.0, "hare_accept": 15.0}
DEFAULT_PAGE_SECONDS = 20.0
SPEEDER_PACE = 0.25
PACE_SD, PAGE_SD = 0.3, 0.4


@dataclass(frozen=True)
class Behaviour:
    """Everything that drives synthetic answers (module docstring).

    >>> from engine.synthetic import Behaviour
    >>> b = Behaviour(swap_rate=0.0, speeder_share=0.1)
    >>> b.to_dict()["swap_rate"], b.to_dict()["speeder_share"], b.ratings.distance
    (0.0, 0.1, 'l1_profile')
    """

    ratings: RatingBehaviour = field(default_factory=RatingBehaviour.reference)
    distribution: str = "uniform"
    n_actionable_probs: tuple[float, ...] | None = None
    min_actionable: int = 0
    cost_slope: float = 3.0
    swap_rate: float = 0.1
    mark_error_rate: float = 0.05
    temperature: float = 0.05
    threshold: float = 0.15
    threshold_sd: float = 0.5
    attention_pass_rate: float = 0.97
    speeder_share: float = 0.0
    straightliner_share: float = 0.0

    def __post_init__(self) -> None:
        shares = (self.speeder_share, self.straightliner_share)
        if min(shares) < 0 or sum(shares) > 1:
            raise ValueError("speeder and straight-liner shares must be >= 0 and sum to at "
                             f"most 1, got {shares}")

    def to_dict(self) -> dict[str, Any]:
        """Plain values (stored with a simulated study)."""
        return asdict(self)


@dataclass
class Person:
    """One synthetic participant's hidden truth.

    >>> from engine import BayesDecision, get_scenario, rejected_rows
    >>> from engine.synthetic import Behaviour, Population
    >>> loan = get_scenario("loan")
    >>> test_x, _ = loan.dataset["test"]        # the test split: (x, y)
    >>> x = test_x[rejected_rows(loan, BayesDecision(loan))[:10]].numpy()
    >>> person = Population(loan, Behaviour(), seed=3, rejected=x).person(0)
    >>> truth = person.truth()         # the hidden parameters the simulation stores
    >>> sorted(truth)[:4], bool(person.hard[:3].any())     # never an immutable feature
    (['difficulty', 'effects', 'hard_mask', 'pace'], False)
    """

    index: int
    x: np.ndarray
    true: ActionabilityProfiles  # a batch of one (ranking scores)
    difficulty: np.ndarray  # r_ij on every feature (0 outside F_i)
    weights: np.ndarray  # w_ij (inf outside F_i)
    effects: dict[str, float]
    threshold: float
    quality: str | None = None  # speeder | straightliner | None (careful)
    pace: float = 1.0  # s_i, SPEEDER_PACE included
    line: int = 4  # a straight-liner's one rating

    @property
    def hard(self) -> np.ndarray:
        return self.true.hard_mask[0].numpy()

    def truth(self) -> dict[str, Any]:
        """Hidden parameters as plain values (the simulation-truth row)."""
        return {
            "x": self.x.tolist(),
            "hard_mask": self.hard.tolist(),
            "ranks": self.true.scores[0].tolist(),
            "difficulty": self.difficulty.tolist(),
            "weights": [None if not np.isfinite(w) else float(w) for w in self.weights],
            "effects": self.effects,
            "threshold": self.threshold,
            "quality": self.quality,
            "pace": self.pace,
        }


class Population:
    """Synthetic participants of one simulation (draws per person: module docstring).

    >>> from engine import BayesDecision, get_scenario, rejected_rows
    >>> from engine.synthetic import Behaviour, Population
    >>> loan = get_scenario("loan")
    >>> test_x, _ = loan.dataset["test"]        # the test split: (x, y)
    >>> x = test_x[rejected_rows(loan, BayesDecision(loan))[:10]].numpy()
    >>> people = Population(loan, Behaviour(), seed=3, rejected=x)
    >>> people.person(0) is people.person(0)                        # drawn once
    True
    >>> again = Population(loan, Behaviour(), seed=3, rejected=x)
    >>> (again.person(0).x == people.person(0).x).all().item()     # fixed by the seed
    True
    >>> answer = people.elicitation(0, "ranking")     # the elicitation page's answer
    >>> sorted(answer) == sorted(loan.feature_names[j] for j in loan.actionable)
    True

    Person i (all draws from a generator seeded by (seed, i), so a person is the same whoever
    else is simulated and after a resume):

    - factual profile x_i: a uniform draw from the profiles the decision model rejects;
    - true hard constraints F_i and preference order: a Plackett-Luce draw over the globally
      actionable features (``engine.preferences.sample_profiles``, named distribution), with
      |F_i| = k drawn from ``n_actionable_probs`` (uniform on 1..|F_g| when None),
      restricted to k >= ``min_actionable`` (the probabilities renormalized: a study whose
      elicitation asks to leave at least that many items changeable);
      true relative difficulty r_ij = (rank_ij - 1) / (k - 1) (0 when k = 1);
    - true soft costs: w_ij = 1 + cost_slope * r_ij on F_i; the personal cost of a plan
      (mask m, values a) is  C_i = sum_{j in m, j in F_i} w_ij |a_j - x_ij| / M_j
      + VIOLATION_COST * #{j in m, j not in F_i};
    - reports (elicitation): truthful up to noise - each globally actionable feature's
      "can change" mark flips with probability ``mark_error_rate``; a page that asks for at
      least ``least`` changeable items and gets fewer is answered again with the wrongly
      dropped items marked back, then (a person who truly has fewer) other items in random
      order until there are ``least``; the ranking of the marked
      items follows the true order (wrongly marked items last), then each adjacent pair swaps
      with probability ``swap_rate``; a Likert difficulty is 1 + round(r_ij (K - 1)), moved by
      one step with probability ``swap_rate`` (wrongly marked items get K);
    - ratings: ``engine.synthetic.rating_model`` (cumulative logit on 1..7 with participant effects) on
      the plan's distance d (the behaviour's ``distance`` column), the TRUE satisfaction
      (engine.metrics.preference_satisfaction on the true profile) and the TRUE violation
      (the plan acts outside F_i); each plan's draw uses a generator seeded by
      (seed, i, position);
    - impossibility: an action item is "impossible" exactly when it is outside F_i;
    - HARE: the answering model of engine.synthetic.hare_people with the personal cost C_i:
      between two candidates, P(choose left) = 1 / (1 + exp((C_left - C_right) / T)) (Luce /
      Bradley-Terry with temperature T); accept a plan when C <= tau_i,
      tau_i = threshold * exp(threshold_sd * z_i), z_i ~ N(0, 1);
    - attention checks: answered correctly with probability ``attention_pass_rate``, else a
      uniformly chosen wrong option;
    - reasons: a short sentence chosen from templates that fit the rating (and name an
      impossible item when there is one);
    - careless participants (data-quality checks): a person is a speeder with probability
      ``speeder_share``, else a straight-liner with probability ``straightliner_share``
      (their own stream, so the other draws of a person stay the same); a straight-liner gives
      one rating v_i ~ U{1..7} to both questions of every plan (truth: ``quality``);
    - page times: t_ij = m_k * s_i * exp(0.4 z_ij), m_k the typical time of the page's kind
      (``PAGE_SECONDS``), s_i = exp(0.3 z_i) the person's pace, times ``SPEEDER_PACE`` for a
      speeder (z standard normal, per person and per page).
    """

    def __init__(
        self, scenario: Scenario, behaviour: Behaviour, seed: int, rejected: np.ndarray
    ) -> None:
        if len(rejected) == 0:
            raise ValueError("no rejected profiles to draw synthetic participants from")
        self.scenario = scenario
        self.behaviour = behaviour
        self.seed = int(seed)
        self.rejected = np.asarray(rejected, dtype=float)
        self._people: dict[int, Person] = {}

    def _rng(self, *keys: int) -> np.random.Generator:
        return np.random.default_rng([self.seed & 0xFFFFFFFF, *keys])

    def person(self, index: int) -> Person:
        if index not in self._people:
            self._people[index] = self._draw(index)
        return self._people[index]

    def _draw(self, index: int) -> Person:
        sc, b = self.scenario, self.behaviour
        rng = self._rng(_STREAM_PERSON, index)
        x = self.rejected[int(rng.integers(len(self.rejected)))]
        m = len(sc.actionable)
        least = max(1, min(b.min_actionable, m))
        if b.n_actionable_probs is None:
            k = int(rng.integers(least, m + 1))
        else:
            probs = np.asarray(b.n_actionable_probs, dtype=float)
            probs[: least - 1] = 0.0
            if probs.sum() <= 0:
                raise ValueError(f"n_actionable_probs gives no probability to {least} or more "
                                 "changeable items (min_actionable)")
            k = int(rng.choice(np.arange(1, m + 1), p=probs / probs.sum()))
        true = sample_profiles(sc.feature_names, sc.actionable, 1, distribution=b.distribution,
                               n_actionable=k, elicitation="ranking", seed=rng)
        r = true.relative_difficulty()[0].numpy()
        hard = true.hard_mask[0].numpy()
        weights = np.where(hard, 1.0 + b.cost_slope * r, np.inf)
        effects = {key: float(v[0]) for key, v in b.ratings.draw_effects(1, rng).items()}
        threshold = float(b.threshold * np.exp(b.threshold_sd * rng.standard_normal()))
        care = self._rng(_STREAM_CARE, index)
        u, pace = care.random(), float(np.exp(PACE_SD * care.standard_normal()))
        quality = ("speeder" if u < b.speeder_share else "straightliner"
                   if u < b.speeder_share + b.straightliner_share else None)
        line = int(care.integers(1, 8))
        if quality == "speeder":
            pace *= SPEEDER_PACE
        return Person(index, x.copy(), true, r, weights, effects, threshold, quality, pace,
                      line)

    def page_seconds(self, index: int, step: int, kind: str) -> float:
        """The simulated time on the participant's ``step``-th page, of kind ``kind``
        (module docstring)."""
        z = self._rng(_STREAM_TIME, index, step).standard_normal()
        typical = PAGE_SECONDS.get(kind, DEFAULT_PAGE_SECONDS)
        return float(typical * self.person(index).pace * np.exp(PAGE_SD * z))

    # ---- answers ------------------------------------------------------------------------
    def elicitation(self, index: int, scheme: str, levels: int | None = None,
                    least: int = 0) -> dict[str, Any]:
        """The reported answer (pages' format: binary bool, ranking/likert int or None), with
        at least ``least`` items marked changeable (the page's minimum; class docstring)."""
        p, b, sc = self.person(index), self.behaviour, self.scenario
        rng = self._rng(_STREAM_PAGE, index, 0)
        names = [sc.feature_names[j] for j in sc.actionable]
        true_can = p.hard[list(sc.actionable)]
        flip = rng.random(len(names)) < b.mark_error_rate
        can = true_can ^ flip
        if can.sum() < least:
            can = _at_least(can | true_can, least, self._rng(_STREAM_PAGE, index, 1))
        if scheme == "binary":
            return {n: bool(c) for n, c in zip(names, can, strict=True)}
        r = p.difficulty[list(sc.actionable)]
        if scheme == "likert":
            k_levels = levels or len(names)
            score = 1 + np.rint(r * (k_levels - 1)).astype(int)
            move = rng.random(len(names)) < b.swap_rate
            score = np.where(move, score + rng.choice([-1, 1], size=len(names)), score)
            score = np.where(true_can, score, k_levels).clip(1, k_levels)
            return {n: (int(s) if c else None) for n, s, c in zip(names, score, can, strict=True)}
        # ranking: true order among the marked items, wrongly marked ones last
        key = np.where(true_can, r, 2.0)
        order = [i for i in np.argsort(key, kind="stable") if can[i]]
        for a in range(len(order) - 1):
            if rng.random() < b.swap_rate:
                order[a], order[a + 1] = order[a + 1], order[a]
        ranks = {names[i]: pos + 1 for pos, i in enumerate(order)}
        return {n: ranks.get(n) for n in names}

    def personal_cost(
        self, index: int, x: np.ndarray, mask: np.ndarray, values: np.ndarray
    ) -> float:
        """C_i of a plan acting on the profile x the participant has in the study (their
        own or an assigned persona; module docstring)."""
        p = self.person(index)
        mask = np.asarray(mask, dtype=bool)
        moved = np.abs(np.asarray(values, dtype=float) - np.asarray(x, dtype=float))
        moved = moved / self.scenario.ranges.numpy()
        can = mask & p.hard
        return float((p.weights[can] * moved[can]).sum() + VIOLATION_COST * (mask & ~p.hard).sum())

    def choose(self, index: int, step: int, cost_left: float, cost_right: float) -> int:
        """HARE comparison: 0 (left) or 1 (right) by the Luce rule."""
        u = self._rng(_STREAM_PAGE, index, 100 + step).random()
        return int(luce_choice(cost_left, cost_right, self.behaviour.temperature, u))

    def accepts(self, index: int, cost: float) -> bool:
        return bool(accepts(cost, self.person(index).threshold))

    def attention(self, index: int, check: int, options: list[str], correct: str) -> str:
        rng = self._rng(_STREAM_PAGE, index, 1000 + check)
        if rng.random() < self.behaviour.attention_pass_rate:
            return correct
        wrong = [o for o in options if o != correct]
        return wrong[int(rng.integers(len(wrong)))] if wrong else correct

    def rate(
        self,
        index: np.ndarray,
        position: np.ndarray,
        distance: np.ndarray,
        action_mask: np.ndarray,
    ) -> dict[str, np.ndarray]:
        """Ratings of plans (one row per plan): acceptance, action (1..7), the latent etas,
        the true satisfaction and violation, and whether any action item is impossible."""
        index = np.asarray(index, dtype=int)
        mask = torch.as_tensor(np.asarray(action_mask, dtype=bool))
        people = [self.person(int(i)) for i in index]
        true = ActionabilityProfiles(
            torch.cat([p.true.hard_mask for p in people]),
            torch.cat([p.true.scores for p in people]),
            torch.cat([p.true.levels for p in people]), "ranking",
        )
        sat = metrics.preference_satisfaction(mask, true).numpy()
        vio = metrics.preference_violation(mask, true.hard_mask).numpy()
        model = self.behaviour.ratings
        d = np.asarray(distance, dtype=float)
        eff = {k: np.array([p.effects.get(k, 0.0) for p in people]) for k in people[0].effects}
        zeros = np.zeros(len(index))
        eta_acc = model.acceptance.latent(d, sat, vio, eff.get("u_acc", zeros),
                                          eff.get("b_acc", zeros))
        eta_act = model.action.latent(d, sat, vio, eff.get("u_act", zeros),
                                      eff.get("b_act", zeros))
        acc = np.empty(len(index), dtype=int)
        act = np.empty(len(index), dtype=int)
        for k, (i, pos) in enumerate(zip(index, position, strict=True)):
            rng = self._rng(_STREAM_PLAN, int(i), int(pos))
            acc[k] = int(model.acceptance.sample(eta_acc[k:k + 1], rng)[0])
            act[k] = int(model.action.sample(eta_act[k:k + 1], rng)[0])
            if people[k].quality == "straightliner":
                acc[k] = act[k] = people[k].line
        impossible = (mask.numpy() & ~true.hard_mask.numpy()).any(axis=1)
        return {"acceptance": acc, "action": act, "eta_acceptance": np.asarray(eta_acc),
                "eta_action": np.asarray(eta_act), "satisfaction": sat, "violation": vio,
                "impossible": impossible}

    def reasons(self, index: int, position: int, acceptance: int, action: int,
                impossible_labels: list[str]) -> tuple[str, str]:
        """Short free-text reasons fitting the two ratings."""
        rng = self._rng(_STREAM_PLAN, index, 10_000 + position)

        def pick(options: tuple[str, ...]) -> str:
            return options[int(rng.integers(len(options)))]

        acc_why = pick(_LOW_ACCEPT if acceptance <= 3 else
                       _MID if acceptance == 4 else _HIGH_ACCEPT)
        if impossible_labels and action <= 3:
            act_why = f"I cannot change my {impossible_labels[0].lower()}."
        else:
            act_why = pick(_LOW_ACTION if action <= 3 else _MID if action == 4 else _HIGH_ACTION)
        return acc_why, act_why


_LOW_ACCEPT = ("Almost the same as my profile.", "That's it? It does not explain much.",
               "I do not see why these items matter.")
_HIGH_ACCEPT = ("It shows what the bank cares about.", "The changes make sense to me.",
                "A clear reason for the decision.")
_MID = ("Partly convincing.", "Hard to say.", "Some of it makes sense.")
_LOW_ACTION = ("Too much to change.", "Not worth the effort for a loan.",
               "I would rather apply elsewhere.")
_HIGH_ACTION = ("These changes are within my reach.", "I could do this in a year or so.",
                "Worth trying to get the loan.")


def _at_least(can: np.ndarray, least: int, rng: np.random.Generator) -> np.ndarray:
    """``can`` with items marked, in random order, until at least ``least`` are."""
    can = can.copy()
    for i in rng.permutation(len(can)):
        if can.sum() >= least:
            break
        can[i] = True
    return can
