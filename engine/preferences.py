"""Individual actionability: hard masks, scores, cost profiles, elicitation and samplers.

Notation (the iCARMA paper's). F_g is the set of globally actionable features; a person i
can act on F_i subset of F_g (hard constraint) and states how hard each one is (soft
constraint) as an actionability score s_ij in {1..K_i} (1 = easiest); non-actionable features
get the reserved score K_i + 1.

- ranking: s_ij is the rank of feature j among F_i, so K_i = |F_i|;
- likert: s_ij is a difficulty score 1..K (K = |F_g| = 4 for Loan), K_i = K;
- binary: every actionable feature scores 1 (indifference).

Cost profiles map a score to an action-cost weight w and a mask prior pi. With
r = (s - 1) / (K_i - 1) in [0, 1] (r = 0 when K_i = 1) and exponent p:

    w(s)  = 1 + a * r**p
    pi(s) = pi_max - (pi_max - pi_min) * r**p

constant: w = 1 and pi = pi_flat for every feature; concave p = 0.5; linear p = 1; convex
p = 2. Non-actionable features get prior 0 (they are masked out; never traded off).

Score sampling for Likert elicitation (``SCORE_SAMPLINGS``):

- ``iid`` (the paper, App. B.2 / C.1): every globally actionable feature draws its score
  independently and uniformly. With the number of actionable features left to chance (hard +
  soft) the draw is from {1..K+1}, K+1 meaning "cannot change this" (so someone may end up
  with no actionable feature at all); with |F_i| fixed, the actionable ones (chosen as
  below) draw from {1..K};
- ``sorted`` (our earlier sampler): |F_i| uniform on 1..|F_g|, then |F_i| uniform scores
  sorted and handed out in the Plackett-Luce preference order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor

Elicitation = Literal["binary", "ranking", "likert"]
CostProfileName = Literal["constant", "concave", "linear", "convex"]

COST_PROFILE_EXPONENTS: dict[str, float | None] = {
    "constant": None,
    "concave": 0.5,
    "linear": 1.0,
    "convex": 2.0,
}
ELICITATIONS: tuple[str, ...] = ("binary", "ranking", "likert")
SCORE_SAMPLINGS: tuple[str, ...] = ("iid", "sorted")
FAVOURED_WEIGHT = 20.0
# Plackett-Luce weights by feature name; features not named get weight 1.
# Preference distributions sample, per person, which features are actionable and their order
# by a Plackett-Luce draw over F_g with feature weights (uniform: equal weights; co: loan amount
# and income favoured, i.e. causal order; rco: loan duration and savings favoured;
# privileged: income and savings; non_privileged: loan amount and duration); the first k
# features of the draw are actionable, in that order of preference. A favoured feature has
# weight ``FAVOURED_WEIGHT`` = 20 against 1, so with two favoured features out of four both
# are among the top two with probability (40/42)(20/22) = 0.87: the paper's Table 4 (whose
# probabilities were lost in the text copy) leaves most permutations at zero for its biased
# profiles, and a milder bias (weight 4: 0.53) blurs the privileged / non-privileged contrast
# the fairness case study is about.
PREFERENCE_DISTRIBUTIONS: dict[str, dict[str, float]] = {
    "uniform": {},
    "co": {"loan_amount": FAVOURED_WEIGHT, "income": FAVOURED_WEIGHT},
    "rco": {"loan_duration": FAVOURED_WEIGHT, "savings": FAVOURED_WEIGHT},
    "privileged": {"income": FAVOURED_WEIGHT, "savings": FAVOURED_WEIGHT},
    "non_privileged": {"loan_amount": FAVOURED_WEIGHT, "loan_duration": FAVOURED_WEIGHT},
}


@dataclass(frozen=True)
class CostProfile:
    """Hyper-parameters of the score -> weight / prior maps (see module docstring).

    >>> from engine import CostProfile, get_scenario, profiles_from_elicitation
    >>> loan = get_scenario("loan")
    >>> p = profiles_from_elicitation(loan.feature_names, loan.actionable,
    ...                               [{"income": 1, "savings": 2}], "ranking")
    >>> w = p.weights(CostProfile("linear"))[0, 5:]   # easiest feature, second easiest
    >>> bool(w[0] < w[1])
    True
    >>> CostProfile("steep")
    Traceback (most recent call last):
    ...
    ValueError: unknown cost profile 'steep'; expected one of constant, concave, linear, convex
    """

    name: CostProfileName = "constant"
    a: float = 3.0
    pi_min: float = 0.05
    pi_max: float = 0.5
    pi_flat: float = 0.5

    def __post_init__(self) -> None:
        if self.name not in COST_PROFILE_EXPONENTS:
            raise ValueError(
                f"unknown cost profile {self.name!r}; expected one of "
                f"{', '.join(COST_PROFILE_EXPONENTS)}"
            )
        if not 0.0 <= self.pi_min <= self.pi_max <= 1.0:
            raise ValueError("cost profile priors need 0 <= pi_min <= pi_max <= 1")
        if self.a < 0:
            raise ValueError("cost profile weight slope a must be >= 0")


@dataclass(frozen=True)
class ActionabilityProfiles:
    """A batch of n people's individual actionability over all d features of a scenario.

    ``hard_mask`` (n, d) bool: feature individually actionable (subset of the global set);
    ``scores`` (n, d) float: 1..levels for actionable features, levels + 1 otherwise;
    ``levels`` (n,) float: K_i, the top of each person's score scale;
    ``elicitation``: the scheme the scores came from.

    >>> from engine import get_scenario, profiles_from_elicitation
    >>> loan = get_scenario("loan")
    >>> p = profiles_from_elicitation(loan.feature_names, loan.actionable,
    ...                               [{"income": 1, "savings": 2}], "ranking")
    >>> len(p), p.hard_mask.int().tolist()
    (1, [[0, 0, 0, 0, 0, 1, 1]])
    >>> p.scores[0, 3:].tolist()  # loan amount, duration: cannot change (levels + 1)
    [3.0, 3.0, 1.0, 2.0]
    """

    hard_mask: Tensor
    scores: Tensor
    levels: Tensor
    elicitation: Elicitation

    def __len__(self) -> int:
        return self.hard_mask.shape[0]

    def __getitem__(self, idx: int | slice | Tensor | list[int]) -> ActionabilityProfiles:
        """The people ``idx`` as a new batch (an int gives a batch of one)."""
        if isinstance(idx, int):
            idx = slice(idx, idx + 1 if idx != -1 else None)
        idx_t = idx if isinstance(idx, slice) else torch.as_tensor(idx)
        return ActionabilityProfiles(
            self.hard_mask[idx_t], self.scores[idx_t], self.levels[idx_t], self.elicitation
        )

    @classmethod
    def concat(cls, items: Sequence[ActionabilityProfiles]) -> ActionabilityProfiles:
        """One batch of several batches (same elicitation scheme)."""
        return cls(
            torch.cat([p.hard_mask for p in items]), torch.cat([p.scores for p in items]),
            torch.cat([p.levels for p in items]), items[0].elicitation,
        )

    @classmethod
    def from_lists(
        cls, hard_mask: list[list[bool]], scores: list[list[float]], levels: list[float],
        elicitation: str,
    ) -> ActionabilityProfiles:
        """Profiles from plain lists (``to_lists``'s shape: as stored and sent as JSON)."""
        return cls(
            torch.tensor(hard_mask, dtype=torch.bool), torch.tensor(scores, dtype=torch.float64),
            torch.tensor(levels, dtype=torch.float64), elicitation,  # type: ignore[arg-type]
        )

    def to_lists(self) -> dict[str, Any]:
        """Plain lists: {hard_mask, scores, levels, elicitation} (``from_lists(**...)``)."""
        return {"hard_mask": self.hard_mask.tolist(), "scores": self.scores.tolist(),
                "levels": self.levels.tolist(), "elicitation": self.elicitation}

    @property
    def n_actionable(self) -> Tensor:
        return self.hard_mask.sum(dim=1)

    def relative_difficulty(self) -> Tensor:
        """r = (s - 1) / (K_i - 1) in [0, 1] on actionable features (0 elsewhere)."""
        denom = (self.levels - 1.0).clamp(min=1.0).unsqueeze(1)
        r = ((self.scores - 1.0) / denom).clamp(0.0, 1.0)
        return torch.where(self.hard_mask, r, torch.zeros_like(r))

    def weights(self, profile: CostProfile) -> Tensor:
        """Per-feature action-cost weights w(s), shape (n, d)."""
        p = COST_PROFILE_EXPONENTS[profile.name]
        if p is None:
            return torch.ones_like(self.scores)
        r = self.relative_difficulty()
        w = 1.0 + profile.a * r**p
        return torch.where(self.hard_mask, w, torch.full_like(w, 1.0 + profile.a))

    def priors(self, profile: CostProfile) -> Tensor:
        """Per-feature mask priors pi(s), shape (n, d); 0 on non-actionable features."""
        p = COST_PROFILE_EXPONENTS[profile.name]
        if p is None:
            pi = torch.full_like(self.scores, profile.pi_flat)
        else:
            pi = (
                profile.pi_max - (profile.pi_max - profile.pi_min) * self.relative_difficulty() ** p
            )
        return torch.where(self.hard_mask, pi, torch.zeros_like(pi))

    def least_preferred(self) -> Tensor:
        """(n, d) bool: the actionable feature(s) with the highest score (ties all count)."""
        masked = torch.where(self.hard_mask, self.scores, torch.full_like(self.scores, -1.0))
        top = masked.max(dim=1, keepdim=True).values
        return self.hard_mask & (masked == top)


def _global_indices(actionable: tuple[int, ...]) -> list[int]:
    if not actionable:
        raise ValueError("a scenario needs at least one globally actionable feature")
    return list(actionable)


def profiles_from_elicitation(
    feature_names: tuple[str, ...],
    actionable: tuple[int, ...],
    answers: list[dict[str, int | None]],
    elicitation: Elicitation,
    likert_levels: int | None = None,
) -> ActionabilityProfiles:
    """Turn elicitation answers into profiles.

    Each answer maps every globally actionable feature name to: binary -> 1 (can change) or
    None/0 (cannot); ranking -> rank 1..m among the changeable ones, None if it cannot change;
    likert -> difficulty 1..K, None if it cannot change. Ranks must be a bijection onto 1..m.

    >>> from engine import get_scenario, profiles_from_elicitation
    >>> loan = get_scenario("loan")
    >>> p = profiles_from_elicitation(
    ...     loan.feature_names, loan.actionable,
    ...     [{"loan_amount": 2, "income": None, "savings": 1, "loan_duration": None}],
    ...     "likert", likert_levels=5)
    >>> p.hard_mask[0, 3:].tolist(), p.scores[0, 3:].tolist(), p.levels.tolist()
    ([True, False, False, True], [2.0, 6.0, 6.0, 1.0], [5.0])
    """
    if elicitation not in ELICITATIONS:
        raise ValueError(f"unknown elicitation {elicitation!r}; expected one of {ELICITATIONS}")
    glob = _global_indices(actionable)
    k_likert = likert_levels or len(glob)
    n, d = len(answers), len(feature_names)
    hard = torch.zeros(n, d, dtype=torch.bool)
    scores = torch.zeros(n, d, dtype=torch.float64)
    levels = torch.zeros(n, dtype=torch.float64)
    names = [feature_names[j] for j in glob]
    for i, ans in enumerate(answers):
        unknown = sorted(set(ans) - set(names))
        if unknown:
            raise ValueError(
                f"answer {i}: not globally actionable feature(s): {', '.join(unknown)}"
            )
        vals = {name: ans.get(name) for name in names}
        can = {name: v for name, v in vals.items() if v not in (None, 0, False)}
        if elicitation == "binary":
            person_levels = 1
            sc = {name: 1 for name in can}
        elif elicitation == "ranking":
            ranks = sorted(int(v) for v in can.values())
            if ranks != list(range(1, len(can) + 1)):
                raise ValueError(
                    f"answer {i}: ranks must be 1..{len(can)} each used once, got {ranks}"
                )
            person_levels = max(len(can), 1)
            sc = {name: int(v) for name, v in can.items()}
        else:
            bad = [name for name, v in can.items() if not 1 <= int(v) <= k_likert]
            if bad:
                raise ValueError(
                    f"answer {i}: likert scores must be 1..{k_likert} ({', '.join(bad)})"
                )
            person_levels = k_likert
            sc = {name: int(v) for name, v in can.items()}
        levels[i] = person_levels
        for j, name in zip(glob, names, strict=True):
            if name in sc:
                hard[i, j] = True
                scores[i, j] = sc[name]
            else:
                scores[i, j] = person_levels + 1
    return ActionabilityProfiles(hard, scores, levels, elicitation)


def all_actionable(
    feature_names: tuple[str, ...], actionable: tuple[int, ...], n: int
) -> ActionabilityProfiles:
    """Every globally actionable feature individually actionable, all equally easy (CARMA; a
    study's participants when there was no elicitation).

    >>> from engine import all_actionable, get_scenario
    >>> loan = get_scenario("loan")
    >>> p = all_actionable(loan.feature_names, loan.actionable, 2)
    >>> p.hard_mask.int().tolist()
    [[0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1, 1]]
    """
    glob = _global_indices(actionable)
    d = len(feature_names)
    hard = torch.zeros(n, d, dtype=torch.bool)
    hard[:, glob] = True
    scores = torch.where(hard, 1.0, 2.0).to(torch.float64)
    return ActionabilityProfiles(hard, scores, torch.ones(n, dtype=torch.float64), "binary")


def sample_profiles(
    feature_names: tuple[str, ...],
    actionable: tuple[int, ...],
    n: int,
    *,
    distribution: str = "uniform",
    n_actionable: int | None = None,
    elicitation: Elicitation = "ranking",
    likert_levels: int | None = None,
    score_sampling: str = "iid",
    seed: int | np.random.Generator = 0,
) -> ActionabilityProfiles:
    """Sample n profiles (see module docstring for the Plackett-Luce construction).

    ``n_actionable`` fixes |F_i|; None draws it uniformly from 1..|F_g| per person (for
    Likert scores sampled ``iid``: from the scores, module docstring).

    >>> from engine import get_scenario, sample_profiles
    >>> loan = get_scenario("loan")
    >>> p = sample_profiles(loan.feature_names, loan.actionable, 100, n_actionable=2, seed=1)
    >>> p.hard_mask.sum(dim=1).unique().tolist(), p.hard_mask[:, :3].any().item()
    ([2], False)
    """
    if score_sampling not in SCORE_SAMPLINGS:
        raise ValueError(
            f"unknown score sampling {score_sampling!r}; expected one of "
            f"{', '.join(SCORE_SAMPLINGS)}"
        )
    if distribution not in PREFERENCE_DISTRIBUTIONS:
        raise ValueError(
            f"unknown preference distribution {distribution!r}; expected one of "
            f"{', '.join(PREFERENCE_DISTRIBUTIONS)}"
        )
    if elicitation not in ELICITATIONS:
        raise ValueError(f"unknown elicitation {elicitation!r}; expected one of {ELICITATIONS}")
    glob = _global_indices(actionable)
    m = len(glob)
    if n_actionable is not None and not 1 <= n_actionable <= m:
        raise ValueError(f"n_actionable must be in 1..{m}, got {n_actionable}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    w = np.array([PREFERENCE_DISTRIBUTIONS[distribution].get(feature_names[j], 1.0) for j in glob])
    # Plackett-Luce via Gumbel keys: sorting log w + Gumbel noise gives a PL ordering.
    keys = np.log(w)[None, :] + rng.gumbel(size=(n, m))
    order = np.argsort(-keys, axis=1)  # order[i, r] = position in glob of rank r + 1
    k = np.full(n, n_actionable) if n_actionable is not None else rng.integers(1, m + 1, size=n)
    k_likert = likert_levels or m
    d = len(feature_names)
    hard = np.zeros((n, d), dtype=bool)
    scores = np.zeros((n, d))
    levels = np.zeros(n)
    rank = np.empty((n, m), dtype=int)
    rank[np.arange(n)[:, None], order] = np.arange(1, m + 1)[None, :]
    actionable_g = rank <= k[:, None]
    if elicitation == "ranking":
        sc = rank.astype(float)
        levels[:] = k
    elif elicitation == "binary":
        sc = np.ones((n, m))
        levels[:] = 1
    elif score_sampling == "iid":
        # every feature's score uniform and independent; K + 1 = cannot change (hard + soft)
        top = k_likert + (1 if n_actionable is None else 0)
        sc = rng.integers(1, top + 1, size=(n, m)).astype(float)
        if n_actionable is None:
            actionable_g = sc <= k_likert
        levels[:] = k_likert
    else:
        # k uniform scores per person, sorted and handed out in preference order.
        draws = rng.integers(1, k_likert + 1, size=(n, m)).astype(float)
        draws[np.arange(m)[None, :] >= k[:, None]] = np.inf
        draws = np.sort(draws, axis=1)
        sc = np.take_along_axis(draws, rank - 1, axis=1)
        levels[:] = k_likert
    glob_arr = np.array(glob)
    hard[:, glob_arr] = actionable_g
    scores[:, glob_arr] = np.where(actionable_g, sc, levels[:, None] + 1)
    return ActionabilityProfiles(
        torch.from_numpy(hard), torch.from_numpy(scores), torch.from_numpy(levels), elicitation
    )
