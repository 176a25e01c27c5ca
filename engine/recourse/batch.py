"""The record of recourse plans: ``RecourseBatch``, one row per plan, every metric measured.

Every method returns one (``RecourseContext.evaluate`` builds it), a study stores its rows
(``record`` is the stored and JSON form, ``from_records`` reads it back) and shows them, the
benchmarks summarize it: one record of a plan from generation to analysis. Columns are
tensors (n,) or (n, d) in the scenario's feature order, float64 unless noted; ``array`` gives
a column as numpy for callers that do not use torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import Tensor

from engine import metrics

if TYPE_CHECKING:
    import pandas as pd

    from engine.scenarios.base import Scenario


def _plain(v: Any) -> Any:
    """A Python scalar with NaN as None (the stored and JSON form)."""
    return v if not isinstance(v, float) or v == v else None


@dataclass
class RecourseBatch:
    """Recourses for a batch (one row per recourse; ``person`` indexes the input batch).

    ``found`` is False where the method had no action to offer (then the action is empty and
    x' = x). ``satisfaction``/``violation`` are measured against the profiles the plans were
    evaluated with, NaN when there were no stated constraints (``engine.metrics``);
    ``changed`` (n, d) bool marks the items that change (actions and consequences).

    >>> import engine
    >>> loan = engine.load("loan", decision_model="bayes")
    >>> batch = loan.recourse("oracle", loan.rejected(2), loan.constraints(
    ...     [{"income": 1, "savings": 2}, {"savings": 1}]))
    >>> len(batch), batch.valid.tolist()   # savings alone cannot get the second approved
    (2, [True, False])
    >>> batch.action_mask[0].int().tolist(), batch.found.tolist()
    ([0, 0, 0, 0, 0, 1, 0], [True, False])
    >>> frame = batch.to_frame()                # one row per recourse, every metric
    >>> list(frame["method"]), list(frame["valid"])
    (['oracle', 'oracle'], [True, False])
    """

    method: str
    person: Tensor  # long
    x: Tensor
    action_mask: Tensor  # bool
    action_values: Tensor
    x_cf: Tensor
    found: Tensor  # bool
    valid: Tensor  # bool
    cost: Tensor
    weighted_cost: Tensor
    log_prob_factual: Tensor
    log_prob_cf: Tensor
    plausible: Tensor  # bool
    hap: Tensor  # NaN where undefined
    violations: Tensor  # long
    l0_actions: Tensor
    l1_actions: Tensor
    l0_profile: Tensor
    l1_profile: Tensor
    satisfaction: Tensor
    violation: Tensor
    changed: Tensor  # bool (n, d)
    runtime: float
    density_source: str
    extras: dict[str, Tensor] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.person.shape[0])

    def select(self, idx: Tensor | np.ndarray | Sequence[int]) -> RecourseBatch:
        """The rows ``idx`` (a long index or bool mask) as a new batch."""
        idx_t = torch.as_tensor(idx)
        kwargs: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, Tensor):
                kwargs[f.name] = v[idx_t]
            elif f.name == "extras":
                kwargs[f.name] = {k: t[idx_t] for k, t in v.items()}
            else:
                kwargs[f.name] = v
        return RecourseBatch(**kwargs)

    def array(self, name: str) -> np.ndarray:
        """A column as a numpy array."""
        return getattr(self, name).numpy()

    def value(self, name: str, i: int) -> Any:
        """Row i of a metric column as a Python scalar (NaN as None)."""
        return _plain(getattr(self, name)[i].item())

    def record(self, i: int, feature_names: tuple[str, ...]) -> dict[str, Any]:
        """Row i as plain Python values (for storage and JSON): method, person, x, actions
        {feature: value}, x_cf, runtime, density_source and ``metrics.METRIC_NAMES``."""
        rec: dict[str, Any] = {
            "method": self.method,
            "person": int(self.person[i]),
            "x": dict(zip(feature_names, self.x[i].tolist(), strict=True)),
            "actions": {
                name: float(self.action_values[i, j])
                for j, name in enumerate(feature_names)
                if bool(self.action_mask[i, j])
            },
            "x_cf": dict(zip(feature_names, self.x_cf[i].tolist(), strict=True)),
            "runtime": self.runtime / max(len(self), 1),
            "density_source": self.density_source,
        }
        for name in metrics.METRIC_NAMES:
            rec[name] = self.value(name, i)
        return rec

    @classmethod
    def from_records(cls, records: Sequence[dict[str, Any]], scenario: Scenario) -> RecourseBatch:
        """A batch of ``record``-shaped dicts (one method; metrics absent or None read as NaN,
        ``satisfaction``/``violation`` too); ``changed`` is recomputed."""
        names = scenario.feature_names

        def col(key: str, dtype: torch.dtype) -> Tensor:
            vals = [r.get(key) for r in records]
            return torch.tensor([float("nan") if v is None else v for v in vals], dtype=dtype)

        x = torch.tensor([[float(r["x"][n]) for n in names] for r in records],
                         dtype=torch.float64).reshape(-1, len(names))
        x_cf = torch.tensor([[float(r["x_cf"][n]) for n in names] for r in records],
                            dtype=torch.float64).reshape(-1, len(names))
        mask = torch.tensor([[n in r.get("actions", {}) for n in names] for r in records],
                            dtype=torch.bool).reshape(-1, len(names))
        values = torch.where(mask, torch.tensor(
            [[float(r.get("actions", {}).get(n, 0.0)) for n in names] for r in records],
            dtype=torch.float64).reshape(-1, len(names)), x)
        kinds = {"found": torch.bool, "valid": torch.bool, "plausible": torch.bool,
                 "violations": torch.long}
        cols = {k: (col(k, torch.float64).nan_to_num(0).to(kinds[k]) if k in kinds
                    else col(k, torch.float64))
                for k in (*metrics.METRIC_NAMES, *metrics.PREFERENCE_METRICS)}
        return cls(
            method=records[0]["method"] if records else "", person=torch.tensor(
                [int(r.get("person", i)) for i, r in enumerate(records)], dtype=torch.long),
            x=x, action_mask=mask, action_values=values, x_cf=x_cf, **cols,
            changed=scenario.changed(x, x_cf).reshape(-1, len(names)),
            runtime=float(sum(r.get("runtime") or 0.0 for r in records)),
            density_source=records[0].get("density_source", "") if records else "",
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per recourse: method, person and every metric (NaN where undefined)."""
        import pandas as pd

        cols = {"method": [self.method] * len(self), "person": self.array("person")}
        for name in (*metrics.METRIC_NAMES, *metrics.PREFERENCE_METRICS):
            cols[name] = self.array(name)
        return pd.DataFrame(cols)

    def summary(self) -> dict[str, float]:
        """Population metrics: validity, plausibility, cost mean/sd over valid, hap, violations."""
        valid = self.valid
        return {
            "n": len(self),
            "validity": float(valid.double().mean()) if len(self) else float("nan"),
            "plausibility": float(self.plausible.double().mean()) if len(self) else float("nan"),
            "cost_mean": metrics.nanmean(self.cost[valid]),
            "cost_sd": metrics.nanstd(self.cost[valid]),
            "hap": metrics.nanmean(self.hap),
            "violations": int(self.violations.sum()),
            "seconds": self.runtime,
        }
