"""The world model of a tabular world (engine.scenarios.tabular): data without a causal graph.

Nothing links the features, so a plan changes exactly the features it sets:

- ``counterfactual(x, m, a)``: x'_j = a_j where m_j, else x_j (acting on an immutable feature
  is an error, as in every world model);
- ``shift_counterfactual(x, m, s, lo, hi)``: x'_j = clamp(x_j + s_j, lo_j, hi_j) where m_j,
  else x_j, in one pass and differentiable in s (engine.recourse.shift_actions);
- in both, a level feature (binary, ordinal, categorical) that a plan sets takes the nearest
  of its level codes, round(v), so a plan's validity is judged on the profile a person is
  shown (CARLA's methods round binary features back the same way). The rounding is
  straight-through, v + (round(v) - v) with the correction held constant for gradients, so
  gradient searches still see d x'_j / d s_j = 1;
- ``log_prob(x)``: log of the product of the features' marginal laws over the training
  split, sum_j log p_j(x_j), the features taken as independent. A level feature j with L_j
  levels: p_j(k) = (n_j(k) + 1) / (n + L_j) (Laplace-smoothed frequencies of the n training
  rows). A continuous feature: a histogram density of ``BINS`` equal bins over its training
  [min, max], p_j(v) = (n_b + 1) / ((n + BINS) w) for v in bin b of width w; a value outside
  [min, max] counts as an empty bin. It orders profiles by how typical each of their values
  is (the plausibility flag), and says nothing about combinations of values;
- ``sample(n, seed)``: n rows of the training split drawn with replacement (the empirical
  joint law, so sampled people are real combinations of values);
- ``abduct``: there is no exogenous noise to infer without a causal model (an error).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from engine.scenarios.base import Scenario
from engine.scm import ArrayLike, WorldModelInputError, as_action_mask, as_batch

BINS = 20


class TabularWorldModel:
    """Plans change only what they set; independent-marginal log-density (module docstring)."""

    def __init__(self, scenario: Scenario) -> None:
        if scenario.world_kind != "tabular":
            raise ValueError(f"scenario {scenario.name!r} is a {scenario.world_kind} world, "
                             "not a tabular one")
        self.scenario = scenario
        self.d = scenario.d
        self.feature_names = scenario.feature_names
        self.immutable = scenario.immutable
        self.parents: dict[int, tuple[int, ...]] = {j: () for j in range(self.d)}
        self._level = torch.tensor([bool(f.levels) for f in scenario.features])
        x = scenario.dataset["train"][0].numpy()
        self._train = scenario.dataset["train"][0]
        n = len(x)
        self._tables: list[tuple[np.ndarray, np.ndarray | None]] = []
        for j, f in enumerate(scenario.features):
            if f.levels:
                k = len(f.levels)
                counts = np.bincount(x[:, j].round().astype(int), minlength=k)[:k]
                self._tables.append((np.log((counts + 1.0) / (n + k)), None))
                continue
            lo, hi = float(x[:, j].min()), float(x[:, j].max())
            edges = np.linspace(lo, hi if hi > lo else lo + 1.0, BINS + 1)
            counts = np.histogram(x[:, j], bins=edges)[0]
            width = edges[1] - edges[0]
            density = np.log((np.append(counts, 0) + 1.0) / ((n + BINS) * width))
            self._tables.append((density, edges))  # last entry: outside the range

    def counterfactual(self, x: ArrayLike, action_mask: ArrayLike,
                       action_values: ArrayLike) -> Tensor:
        t, dtype = as_batch(x, self.d)
        mask = as_action_mask(action_mask, t.shape[0], self.feature_names, self.immutable).bool()
        values = action_values if isinstance(action_values, Tensor) else \
            torch.as_tensor(np.asarray(action_values))
        values = torch.atleast_2d(values).to(t.dtype).expand_as(t)
        return torch.where(mask, self._snap(values), t).to(dtype)

    def shift_counterfactual(self, x: ArrayLike, shift_mask: ArrayLike, shifts: ArrayLike,
                             lower: Tensor, upper: Tensor) -> Tensor:
        t, dtype = as_batch(x, self.d)
        mask = as_action_mask(shift_mask, t.shape[0], self.feature_names, self.immutable).bool()
        s = shifts if isinstance(shifts, Tensor) else torch.as_tensor(np.asarray(shifts))
        moved = torch.clamp(t + s.to(t.dtype), lower.to(t.dtype), upper.to(t.dtype))
        return torch.where(mask, self._snap(moved), t).to(dtype)

    def _snap(self, v: Tensor) -> Tensor:
        """Level features to their nearest code, straight-through (module docstring)."""
        return torch.where(self._level, v + (v.detach().round() - v.detach()), v)

    def log_prob(self, x: ArrayLike) -> Tensor:
        t, dtype = as_batch(x, self.d)
        arr = t.detach().numpy()
        out = np.zeros(len(arr))
        for j, (table, edges) in enumerate(self._tables):
            if edges is None:
                out += table[np.clip(arr[:, j].round().astype(int), 0, len(table) - 1)]
                continue
            b = np.clip(np.searchsorted(edges, arr[:, j], side="right") - 1, 0, BINS - 1)
            outside = (arr[:, j] < edges[0]) | (arr[:, j] > edges[-1])
            out += table[np.where(outside, BINS, b)]
        return torch.from_numpy(out).to(dtype)

    def sample(self, n: int, seed: int = 0) -> Tensor:
        """n training rows drawn with replacement (float64, (n, d))."""
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        g = torch.Generator().manual_seed(int(seed))
        return self._train[torch.randint(len(self._train), (n,), generator=g)].clone()

    def abduct(self, x: ArrayLike) -> Tensor:
        raise WorldModelInputError(
            f"scenario {self.scenario.name!r} is a tabular world without a causal model: it "
            "has no exogenous noise to abduct (its counterfactuals change only the features "
            "a plan sets)")
