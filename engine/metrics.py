"""Recourse metrics, exactly as the iCARMA paper and the reference user study define them. Batched torch, (n, d) arrays.

For a factual x, action mask m (features intervened on), counterfactual x' and per-feature
ranges M (max - min over the training split):

- validity: h(x') is favourable;
- cost (unweighted): sum_j m_j |x'_j - x_j| / M_j (downstream consequences cost nothing);
  weighted cost: the same with per-person weights w_ij;
- plausibility: log p(x') >= log p(x);
- hap: the recourse intervenes on the person's least-preferred individually actionable
  feature (defined when |F_i| >= 2, NaN otherwise);
- distances of the user study (the reference user study, eq. 2-3): delta_j = |x'_j - x_j| / M_j for numeric
  features and 1[x'_j != x_j] for categorical ones; L0 = #{j: delta_j > 0}, L1 = sum_j delta_j,
  over the actions (j with m_j = 1) and over the whole profile (actions + consequences);
- HARE: GTP = ||r - r_gt||_2, GTD = 1 - cos(r - x, r_gt - x);
- user-study preference terms: satisfaction = 1 - mean relative difficulty of the acted,
  individually actionable features (``preference_satisfaction``) and violation = 1 if the plan
  acts outside the stated actionable set (``preference_violation``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from engine.metric_names import DISTANCES, METRIC_NAMES, PREFERENCE_METRICS
from engine.preferences import ActionabilityProfiles

# Changes smaller than this (relative to a feature's range) count as no change in L0.
CHANGE_TOLERANCE = 1e-6

__all__ = [
    "CHANGE_TOLERANCE", "DISTANCES", "METRIC_NAMES", "PREFERENCE_METRICS", "Distances",
    "action_cost", "changed_items", "distances", "feature_deltas", "gtd", "gtp", "hap",
    "nanmean", "nanstd", "plausible", "preference_satisfaction", "preference_violation",
    "violations",
]


def _f64(t: Tensor) -> Tensor:
    return torch.as_tensor(t).to(torch.float64)


def feature_deltas(
    x: Tensor, x_cf: Tensor, ranges: Tensor, categorical: Tensor | None = None
) -> Tensor:
    """delta_j per feature: |x'_j - x_j| / M_j (numeric) or 1[x'_j != x_j] (categorical)."""
    x, x_cf, ranges = _f64(x), _f64(x_cf), _f64(ranges)
    if (ranges <= 0).any():
        raise ValueError("feature ranges must be positive")
    delta = (x_cf - x).abs() / ranges
    if categorical is not None and categorical.any():
        cat = categorical.bool().expand_as(delta)
        delta = torch.where(cat, (x_cf != x).to(delta.dtype), delta)
    return delta


def changed_items(
    x: Tensor, x_cf: Tensor, ranges: Tensor, categorical: Tensor | None = None
) -> Tensor:
    """(n, d) bool: delta_j > CHANGE_TOLERANCE, the items a plan changes (actions and their
    consequences)."""
    return feature_deltas(x, x_cf, ranges, categorical) > CHANGE_TOLERANCE


def action_cost(
    x: Tensor, x_cf: Tensor, action_mask: Tensor, ranges: Tensor, weights: Tensor | None = None
) -> Tensor:
    """sum_j m_j w_j |x'_j - x_j| / M_j per person (w = 1 gives the unweighted cost)."""
    delta = (_f64(x_cf) - _f64(x)).abs() / _f64(ranges)
    delta = delta * action_mask.to(torch.float64)
    if weights is not None:
        delta = delta * _f64(weights)
    return delta.sum(dim=1)


@dataclass(frozen=True)
class Distances:
    """L0 / L1 over the actions and over the whole profile change, each (n,), and
    ``changed`` (n, d): the items that change (delta_j > CHANGE_TOLERANCE)."""

    l0_actions: Tensor
    l1_actions: Tensor
    l0_profile: Tensor
    l1_profile: Tensor
    changed: Tensor


def distances(
    x: Tensor,
    x_cf: Tensor,
    action_mask: Tensor,
    ranges: Tensor,
    categorical: Tensor | None = None,
) -> Distances:
    """Sparsity (L0) and proximity (L1) over actions and over the profile (module docstring)."""
    delta = feature_deltas(x, x_cf, ranges, categorical)
    changed = delta > CHANGE_TOLERANCE  # changed_items, sharing the deltas
    acted = action_mask.bool() & changed
    return Distances(
        l0_actions=acted.sum(dim=1).to(torch.float64),
        l1_actions=(delta * acted).sum(dim=1),
        l0_profile=changed.sum(dim=1).to(torch.float64),
        l1_profile=(delta * changed).sum(dim=1),
        changed=changed,
    )


def plausible(log_prob_cf: Tensor, log_prob_factual: Tensor) -> Tensor:
    """log p(x') >= log p(x), per person."""
    return _f64(log_prob_cf) >= _f64(log_prob_factual)


def touches(action_mask: Tensor, least_preferred: Tensor) -> Tensor:
    """1.0 where the mask touches a least-preferred actionable feature, else 0.0 (float64)."""
    return (action_mask.bool() & least_preferred.bool()).any(dim=1).to(torch.float64)


def hap(action_mask: Tensor, least_preferred: Tensor, n_actionable: Tensor) -> Tensor:
    """1.0 if the action touches a least-preferred actionable feature, NaN if |F_i| < 2."""
    touched = touches(action_mask, least_preferred)
    return torch.where(n_actionable >= 2, touched, torch.full_like(touched, float("nan")))


def violations(action_mask: Tensor, hard_mask: Tensor) -> Tensor:
    """Number of intervened features outside the person's actionable set, per person."""
    return (action_mask.bool() & ~hard_mask.bool()).sum(dim=1)


def gtp(recourse: Tensor, ground_truth: Tensor) -> Tensor:
    """Ground-truth proximity: L2 distance between a recourse and the hidden ideal one."""
    return (_f64(recourse) - _f64(ground_truth)).norm(dim=1)


def gtd(factual: Tensor, recourse: Tensor, ground_truth: Tensor) -> Tensor:
    """Ground-truth direction: cosine distance of (recourse - x) and (ground truth - x)."""
    a = _f64(recourse) - _f64(factual)
    b = _f64(ground_truth) - _f64(factual)
    cos = torch.nn.functional.cosine_similarity(a, b, dim=1, eps=1e-12)
    return 1.0 - cos


def nanmean(t: Tensor) -> float:
    """Mean over the finite entries (NaN when there are none)."""
    t = _f64(t)
    ok = torch.isfinite(t)
    return float(t[ok].mean()) if ok.any() else float("nan")


def nanstd(t: Tensor) -> float:
    """Sample standard deviation over the finite entries (NaN with fewer than two)."""
    t = _f64(t)
    ok = torch.isfinite(t)
    return float(t[ok].std()) if ok.sum() > 1 else float("nan")


def preference_satisfaction(action_mask: Tensor, profiles: ActionabilityProfiles | None) -> Tensor:
    """How well a plan respects stated soft preferences, per plan, in [0, 1].

    With r_ij = (s_ij - 1) / (K_i - 1) the relative difficulty of feature j for person i
    (``ActionabilityProfiles.relative_difficulty``) and A_i the acted features that person i
    marked actionable,

        satisfaction_i = 1 - mean_{j in A_i} r_ij,

    so 1.0 means the plan only uses the person's easiest features. A plan that acts on none
    of the person's actionable features satisfies no preference: 0.0. NaN for every plan when
    there is no elicitation (``profiles`` is None).
    """
    mask = action_mask.bool()
    if profiles is None:
        return torch.full((mask.shape[0],), float("nan"), dtype=torch.float64)
    if len(profiles) != mask.shape[0]:
        raise ValueError(f"{mask.shape[0]} action masks but {len(profiles)} profiles")
    used = mask & profiles.hard_mask.bool()
    r = _f64(profiles.relative_difficulty())
    n_used = used.sum(dim=1)
    mean_r = (r * used).sum(dim=1) / n_used.clamp(min=1)
    return torch.where(n_used > 0, 1.0 - mean_r, torch.zeros_like(mean_r))


def preference_violation(action_mask: Tensor, hard_mask: Tensor | None) -> Tensor:
    """1.0 if the plan acts on a feature outside the stated actionable set, else 0.0.

    NaN for every plan when there is no elicitation (``hard_mask`` is None).
    """
    if hard_mask is None:
        return torch.full((action_mask.shape[0],), float("nan"), dtype=torch.float64)
    return (violations(action_mask, hard_mask) > 0).to(torch.float64)
