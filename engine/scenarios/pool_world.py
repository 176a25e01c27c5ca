"""A world given by a table of profiles and a fixed decision rule (no causal equations).

Such a world (the reference user study's, paper 003) knows no mechanism linking its
features, so:

- ``counterfactual(x, m, a)`` sets the acted-on features and changes nothing else
  (x'_j = a_j where m_j, else x_j): without equations there are no consequences to compute.
  Plans that adopt a pool member's whole profile pass their x' explicitly
  (engine.recourse.pool_profiles);
- ``log_prob(x)`` is the log-mass of the profile's discrete items under independent
  per-item frequencies of the pool, Laplace-smoothed: sum_j log((n_j(x_j) + 1) / (P + L_j))
  over the discrete items j with L_j levels (P pool profiles). Continuous features (income)
  do not enter. It orders profiles by how common their items are (plausibility), nothing
  more;
- the decision is the fixed ``rule``: ``label_logit(x) = rule(x)`` (>= 0 approves), so the
  "Bayes" decision model of the scenario is the rule itself, exact and never trained.

``PoolRuleSamples`` is the data source: the pool as every role's training split and
applicants (people like the study's participants) as the test split, both from a
deterministic generator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from engine.scm import ArrayLike, as_batch

Rule = Callable[[Tensor], Tensor]  # (n, d) float64 -> (n,) score, >= 0 approves
Table = Callable[[], np.ndarray]  # () -> (n, d) float64 profiles in model units


class PoolWorld:
    """Counterfactuals without consequences, item-frequency log-mass, a fixed rule."""

    def __init__(self, feature_names: tuple[str, ...], rule: Rule, pool: Table,
                 levels: dict[int, int]) -> None:
        self.feature_names = feature_names
        self.rule = rule
        self._pool = pool
        self.levels = levels  # discrete item index -> number of levels
        self.parents: dict[int, tuple[int, ...]] = {j: () for j in range(len(feature_names))}
        self.immutable: tuple[int, ...] = ()

    @property
    def d(self) -> int:
        return len(self.feature_names)

    def counterfactual(self, x: ArrayLike, action_mask: ArrayLike,
                       action_values: ArrayLike) -> Tensor:
        t, dtype = as_batch(x, self.d)
        mask = torch.as_tensor(np.asarray(action_mask), dtype=torch.bool).expand_as(t)
        values = torch.as_tensor(np.asarray(action_values), dtype=torch.float64).expand_as(t)
        return torch.where(mask, values, t.double()).to(dtype)

    def _log_freq(self) -> dict[int, Tensor]:
        if not hasattr(self, "_freq"):
            pool = self._pool()
            self._freq = {}
            for j, k in self.levels.items():
                counts = np.bincount(pool[:, j].astype(int), minlength=k)[:k]
                self._freq[j] = torch.from_numpy(np.log((counts + 1.0) / (len(pool) + k)))
        return self._freq

    def log_prob(self, x: ArrayLike) -> Tensor:
        t, dtype = as_batch(x, self.d)
        out = torch.zeros(t.shape[0], dtype=torch.float64)
        for j, table in self._log_freq().items():
            code = t[:, j].round().long().clamp(0, len(table) - 1)
            out += table[code]
        return out.to(dtype)

    def label_logit(self, x: ArrayLike) -> Tensor:
        t, dtype = as_batch(x, self.d)
        return self.rule(t.double()).to(dtype)

    def label_proba(self, x: ArrayLike) -> Tensor:
        return (self.label_logit(x) >= 0).to(torch.float64)


@dataclass(frozen=True)
class PoolRuleSamples:
    """The pool (``pool()``) as the training split of every role; ``applicants()`` split in
    half as validation and test. Labels are the rule's decisions."""

    pool: Table
    applicants: Table
    source: str = ""
    kind: str = field(default="pool", init=False)

    def describe(self) -> str:
        return f"a profile pool and generated applicants ({self.source})"

    def load(self, scm: PoolWorld, label_rule: str) -> dict[str, dict[str, tuple[Tensor, Tensor]]]:
        pool = torch.from_numpy(self.pool()).double()
        people = torch.from_numpy(self.applicants()).double()
        half = people.shape[0] // 2

        def labelled(x: Tensor) -> tuple[Tensor, Tensor]:
            return x, (scm.label_logit(x) >= 0).double()

        splits = {"train": labelled(pool), "validation": labelled(people[:half]),
                  "test": labelled(people[half:])}
        return {role: splits for role in ("decision", "flow", "recourse")}
