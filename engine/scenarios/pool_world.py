"""A pool + rule world: a table of profiles and a fixed decision rule (no causal model).

The reference user study (Tominaga et al.) showed each participant members of a profile pool
as plans, and decided with a hidden fixed rule. ``PoolWorld`` holds both: ``x`` is the pool
in model units (n, d) in the scenario's feature order (level features as codes 0..k-1,
continuous ones through their display maps), ``table`` the same rows in display units as the
file gave them, and ``decide`` the rule. The rule reads display units (engine.scenarios.rules),
so ``decide`` takes the display columns of model-unit profiles (Scenario.display_columns).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from torch import Tensor

# feature -> display values (level codes), one per profile -> favourable (bool (n,))
RuleFunction = Callable[[Mapping[str, np.ndarray]], np.ndarray]


@dataclass(frozen=True)
class PoolWorld:
    """The pool (model units and display table), the rule and where they came from."""

    x: Tensor
    table: pd.DataFrame
    rule: RuleFunction
    rule_text: str
    source: str

    def __len__(self) -> int:
        return int(self.x.shape[0])

    def decide(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """Favourable (bool, (n,)) of profiles given as feature -> display values."""
        out = np.asarray(self.rule(columns), dtype=bool)
        n = len(next(iter(columns.values()))) if columns else 0
        if out.shape != (n,):
            raise ValueError(f"the rule returned shape {out.shape}, expected ({n},)")
        return out
