"""The world model of a pool + rule world (engine.scenarios.pool_world), for evaluating plans.

Such a world knows no mechanism linking its features, so:

- ``counterfactual(x, m, a)`` sets the acted-on features and changes nothing else
  (x'_j = a_j where m_j, else x_j): without equations there are no consequences to compute.
  Plans that adopt a pool member's whole profile pass their x' explicitly
  (engine.recourse.pool_profiles);
- ``log_prob(x)`` is the log-mass of the profile's level items under independent per-item
  frequencies of the pool, Laplace-smoothed: sum_j log((n_j(x_j) + 1) / (P + L_j)) over
  the level features j with L_j levels (P pool profiles). Continuous features (income) do
  not enter. It orders profiles by how common their items are (the plausibility flag),
  nothing more.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from engine.scenarios.base import Scenario
from engine.scm import ArrayLike, as_batch


class PoolWorldModel:
    """Counterfactuals without consequences and item-frequency log-mass (module docstring)."""

    def __init__(self, scenario: Scenario) -> None:
        if scenario.pool is None:
            raise ValueError(f"scenario {scenario.name!r} is not a pool world")
        self.d = scenario.d
        pool = scenario.pool.x.numpy()
        self._log_freq: dict[int, Tensor] = {}
        for j, f in enumerate(scenario.features):
            k = len(f.levels)
            if k:
                counts = np.bincount(pool[:, j].round().astype(int), minlength=k)[:k]
                self._log_freq[j] = torch.from_numpy(np.log((counts + 1.0) / (len(pool) + k)))

    def counterfactual(self, x: ArrayLike, action_mask: ArrayLike,
                       action_values: ArrayLike) -> Tensor:
        t, dtype = as_batch(x, self.d)
        mask = torch.as_tensor(np.asarray(action_mask), dtype=torch.bool).expand_as(t)
        values = torch.as_tensor(np.asarray(action_values), dtype=torch.float64).expand_as(t)
        return torch.where(mask, values, t.double()).to(dtype)

    def log_prob(self, x: ArrayLike) -> Tensor:
        t, dtype = as_batch(x, self.d)
        out = torch.zeros(t.shape[0], dtype=torch.float64)
        for j, table in self._log_freq.items():
            out += table[t[:, j].round().long().clamp(0, len(table) - 1)]
        return out.to(dtype)
