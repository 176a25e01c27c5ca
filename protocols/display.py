"""Display units for pages: profile entry fields, profile rows and plan rows.

Everything a page shows goes through the scenario's display maps (engine.scenarios.base):
model units never reach a renderer.
"""

from __future__ import annotations

import numpy as np

from engine.scenarios.base import Scenario
from protocols.pages import PlanRow, ProfileAnswer, ProfileField, ProfileRow


def profile_fields(scenario: Scenario) -> list[ProfileField]:
    """Entry fields of every feature, bounded by the training range in display units."""
    lo, hi = scenario.bounds
    out = []
    for j, f in enumerate(scenario.features):
        if f.display.kind == "categorical":
            out.append(ProfileField(feature=f.name, label=f.label, help=f.help, kind="category",
                                    unit=f.display.unit, options=list(f.display.categories)))
            continue
        # rounded outward, so every profile of the training range can be entered
        step = 10.0 ** -f.display.decimals
        vmin = float(np.floor(float(f.display.to_display(float(lo[j]))) / step) * step)
        vmax = float(np.ceil(float(f.display.to_display(float(hi[j]))) / step) * step)
        out.append(ProfileField(feature=f.name, label=f.label, help=f.help, kind="number",
                                unit=f.display.unit, min=round(vmin, f.display.decimals),
                                max=round(vmax, f.display.decimals),
                                decimals=f.display.decimals))
    return out


def profile_rows(scenario: Scenario, x: np.ndarray) -> list[ProfileRow]:
    return [ProfileRow.model_construct(feature=f.name, label=f.label, value=f.display.format(float(x[j])))
            for j, f in enumerate(scenario.features)]


def plan_rows(
    scenario: Scenario, x: np.ndarray, x_cf: np.ndarray, action_mask: np.ndarray,
    changed: np.ndarray,
) -> list[PlanRow]:
    """Every item, current -> suggested, tagged action / consequence / same (``changed``
    from ``engine.study_plans.changed_items``)."""
    rows = []
    for j, f in enumerate(scenario.features):
        kind = "action" if action_mask[j] else "consequence" if changed[j] else "same"
        d = f.display
        rows.append(PlanRow.model_construct(
            feature=f.name, label=f.label, current=d.format(float(x[j])),
            suggested=d.format(float(x_cf[j])), current_value=float(d.to_display(float(x[j]))),
            suggested_value=float(d.to_display(float(x_cf[j]))), kind=kind,
        ))
    return rows


def profile_from_answer(scenario: Scenario, answer: ProfileAnswer) -> np.ndarray:
    """Model-unit profile of a validated profile answer."""
    values: dict[str, float] = {}
    for f in scenario.features:
        v = answer.values[f.name]
        if f.display.kind == "categorical" and isinstance(v, str):
            v = f.display.categories.index(v)
        values[f.name] = float(v)
    return scenario.from_display(values)
