"""A plan as a participant is shown it: display-ready, and the same whether just generated or
read back from the store.

``ShownPlan`` holds what the study needs of one plan and nothing of the engine's batch: its
place in the study (id, arm, position, why it was selected), its stored values (the metrics
of ``engine.metric_names``, evaluated against the participant's stated profile, NaN as
None; the factual, the counterfactual and the actions by feature name), the action mask
(what a synthetic participant reads) and the rows of its table (protocols.running.display.PlanRow:
display units, action / consequence / same). It is made once, where the plan is chosen
(``of_batch``), or from its ``plans`` row on resume (``from_stored``: JSON and the scenario's
change rule; no batch of the engine rebuilt).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from data.columns import METRIC_COLUMNS, PLANS, PREFERENCE_COLUMNS
from engine.metric_names import METRIC_NAMES, PREFERENCE_METRICS
from engine.recourse import RecourseBatch
from engine.scenarios.base import Scenario
from protocols.running import display

# The plans columns that hold a plan's metrics (data.columns): the same names as the
# engine's metrics (a test checks it), so ``values`` is read and stored by them.
_STORED_METRICS = (*METRIC_COLUMNS, *PREFERENCE_COLUMNS)


@dataclass
class ShownPlan:
    """One plan of one participant (module docstring).

    >>> import engine
    >>> from protocols import ShownPlan
    >>> loan = engine.load("loan", decision_model="bayes")
    >>> batch = loan.recourse("oracle", loan.rejected(1), loan.constraints({"income": 1}))
    >>> plan = ShownPlan.of_batch(loan.scenario, batch, 0, "p1", "oracle", "best")
    >>> plan.method, plan.value("valid"), plan.array("action_mask").tolist()
    ('oracle', True, [False, False, False, False, False, True, False])
    >>> row = plan.stored("pilot", at=None)              # the plans row
    >>> again = ShownPlan.from_stored([row], loan.scenario)[0]
    >>> again.value("cost") == plan.value("cost") and again.rows == plan.rows
    True
    """

    plan_id: str
    participant_id: str
    arm: str
    method: str
    position: int
    selection: str
    values: dict[str, Any]  # METRIC_NAMES and PREFERENCE_METRICS (None for NaN)
    density_source: str
    x: dict[str, float]  # feature -> model-unit value
    x_cf: dict[str, float]
    actions: dict[str, float]  # acted feature -> its new value
    action_mask: np.ndarray  # (d,) bool
    rows: list[display.PlanRow]

    def value(self, name: str) -> Any:
        """A metric of this plan (``engine.metric_names``) as a Python scalar, NaN as None."""
        return self.values[name]

    def array(self, name: str) -> np.ndarray:
        """``x`` or ``x_cf`` (model units, in feature order) or ``action_mask`` as numpy."""
        if name == "action_mask":
            return self.action_mask
        if name in ("x", "x_cf"):
            return np.array(list(getattr(self, name).values()), dtype=float)
        raise KeyError(f"a shown plan has no array {name!r} (x, x_cf, action_mask)")

    def stored(self, study_id: str, at: Any) -> dict[str, Any]:
        """The ``plans`` row."""
        return PLANS.row(
            study_id=study_id, participant_id=self.participant_id, plan_id=self.plan_id,
            arm=self.arm, method=self.method, position=self.position, selection=self.selection,
            **{k: self.values[k] for k in _STORED_METRICS},
            density_source=self.density_source, actions_json=json.dumps(self.actions),
            x_json=json.dumps(self.x), x_cf_json=json.dumps(self.x_cf), created_at=at,
        )

    @classmethod
    def of_batch(cls, scenario: Scenario, plans: RecourseBatch, row: int, participant_id: str,
                 arm: str, selection: str) -> ShownPlan:
        """Row ``row`` of evaluated plans, not yet placed (``position`` -1, no id: set by
        protocols.running.planning.finalize)."""
        rec = plans.record(row, scenario.feature_names)
        return cls(
            plan_id="", participant_id=participant_id, arm=arm, method=plans.method,
            position=-1, selection=selection,
            values={k: plans.value(k, row) for k in (*METRIC_NAMES, *PREFERENCE_METRICS)},
            density_source=rec["density_source"], x=rec["x"], x_cf=rec["x_cf"],
            actions=rec["actions"], action_mask=plans.array("action_mask")[row],
            rows=display.plan_rows(scenario, plans, row),
        )

    @classmethod
    def from_stored(cls, rows: list[dict[str, Any]], scenario: Scenario) -> list[ShownPlan]:
        """Stored ``plans`` rows back as shown plans."""
        names = scenario.feature_names
        out = []
        for r in rows:
            x, x_cf = json.loads(r["x_json"]), json.loads(r["x_cf_json"])
            actions = json.loads(r["actions_json"])
            xa = np.array([float(x[n]) for n in names])
            cfa = np.array([float(x_cf[n]) for n in names])
            mask = np.array([n in actions for n in names])
            out.append(cls(
                plan_id=r["plan_id"], participant_id=r["participant_id"], arm=r["arm"],
                method=r["method"], position=int(r["position"]), selection=r["selection"],
                values={k: _stored_value(k, r[k]) for k in _STORED_METRICS},
                density_source=r["density_source"], x=x, x_cf=x_cf, actions=actions,
                action_mask=mask,
                rows=display.plan_rows_of(scenario, xa, cfa, mask,
                                          scenario.changed(xa, cfa).numpy()[0]),
            ))
        return out


_FLAGS = ("found", "valid", "plausible")


def _stored_value(name: str, v: Any) -> Any:
    """A stored metric as the engine's batch gives it (RecourseBatch.from_records then
    ``value``): flags as bool (a missing one False), ``violations`` as int, the rest as float
    with a missing one None."""
    if name in _FLAGS:
        return bool(v)
    if name == "violations":
        return int(v or 0)
    return None if v is None or v != v else float(v)
