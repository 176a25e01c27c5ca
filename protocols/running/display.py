"""Display units for pages: profile entry fields, profile rows and plan rows.

Everything a page shows goes through the scenario's display maps (engine.scenarios.base):
model units never reach a renderer.

Plan rows list every item of the profile: ``action`` items are the ones the plan asks the
person to change; ``consequence`` items change as a result (the world model's causal
effects), with a plain-words ``note`` naming the actions they follow from ("follows from
the lower loan amount": the acted items among the item's causal ancestors); ``same`` items
do not change.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from engine.recourse import RecourseBatch
from engine.scenarios.base import Scenario


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProfileField(_Row):
    feature: str
    label: str
    help: str
    kind: Literal["number", "category"]
    unit: str
    min: float | None = None
    max: float | None = None
    decimals: int = 0
    options: list[str] = Field(default_factory=list)


class ProfileRow(_Row):
    feature: str
    label: str
    value: str
    number: float | None = None  # a number's display-unit value (None: a category)
    unit: str = ""
    decimals: int = 0


class PlanRow(_Row):
    feature: str
    label: str
    current: str
    suggested: str
    current_value: float
    suggested_value: float
    kind: Literal["action", "consequence", "same"]
    note: str = ""  # a consequence's cause in plain words
    # the note's parts, for another language: (acted item's label, "higher" or "lower")
    causes: list[tuple[str, str]] = Field(default_factory=list)
    numeric: bool = False  # a number (else a category): shown with ``unit``, ``decimals``
    unit: str = ""
    decimals: int = 0


def profile_fields(scenario: Scenario) -> list[ProfileField]:
    """Entry fields of every feature, bounded by the training range in display units."""
    lo, hi = scenario.bounds
    out = []
    for j, f in enumerate(scenario.features):
        if f.derived_from is not None:
            continue  # computed from the entered items (Scenario.from_display)
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


def shown_value(scenario: Scenario, j: int, v: float) -> str:
    """Feature j's model-unit value as a person reads it, in sentence case ("Male")."""
    text = scenario.features[j].display.format(float(v))
    return text[:1].upper() + text[1:]


def profile_rows(scenario: Scenario, x: np.ndarray) -> list[ProfileRow]:
    rows = []
    for j, f in enumerate(scenario.features):
        d = f.display
        number = None if d.kind == "categorical" else float(d.to_display(float(x[j])))
        rows.append(ProfileRow.model_construct(
            feature=f.name, label=f.label, value=shown_value(scenario, j, x[j]), number=number,
            unit=d.unit, decimals=d.decimals))
    return rows


def plan_rows(scenario: Scenario, plans: RecourseBatch, i: int = 0) -> list[PlanRow]:
    """The rows of plan i of a batch (``plan_rows_of``)."""
    return plan_rows_of(scenario, plans.array("x")[i], plans.array("x_cf")[i],
                        plans.array("action_mask")[i], plans.array("changed")[i])


def plan_rows_of(scenario: Scenario, x: np.ndarray, x_cf: np.ndarray, action_mask: np.ndarray,
                 changed: np.ndarray) -> list[PlanRow]:
    """Every plan item (features with ``in_plan``) of the plan x -> x_cf, current ->
    suggested, tagged action (in ``action_mask``) / consequence (``changed``) / same."""
    rows = []
    for j, f in enumerate(scenario.features):
        if not f.in_plan:
            continue
        kind = "action" if action_mask[j] else "consequence" if changed[j] else "same"
        d = f.display
        causes = consequence_causes(scenario, j, x, x_cf, action_mask) \
            if kind == "consequence" else []
        rows.append(PlanRow.model_construct(
            feature=f.name, label=f.label, current=shown_value(scenario, j, x[j]),
            suggested=shown_value(scenario, j, x_cf[j]), current_value=float(d.to_display(float(x[j]))),
            suggested_value=float(d.to_display(float(x_cf[j]))), kind=kind,
            note=note_of(causes), causes=causes, numeric=d.kind != "categorical", unit=d.unit,
            decimals=d.decimals,
        ))
    return rows


def consequence_note(scenario: Scenario, j: int, x: np.ndarray, x_cf: np.ndarray,
                     action_mask: np.ndarray) -> str:
    """Why item j changes without being acted on: "follows from the lower loan amount and
    the higher savings" (the acted items among its causal ancestors, in feature order)."""
    return note_of(consequence_causes(scenario, j, x, x_cf, action_mask))


def note_of(causes: list[tuple[str, str]]) -> str:
    """The English note of a consequence's causes ((label, way) pairs; "" for none)."""
    words = [f"the {way} {label[:1].lower() + label[1:]}" for label, way in causes]
    if not words:
        return ""
    return "follows from " + (" and ".join(words) if len(words) < 3
                              else ", ".join(words[:-1]) + " and " + words[-1])


def consequence_causes(scenario: Scenario, j: int, x: np.ndarray, x_cf: np.ndarray,
                       action_mask: np.ndarray) -> list[tuple[str, str]]:
    """(label, "higher" or "lower") of the acted items among item j's causal ancestors, in
    feature order (what ``consequence_note`` says)."""
    parents = scenario.parents
    seen: set[int] = set()
    todo = list(parents.get(j, ()))
    while todo:
        k = todo.pop()
        if k not in seen:
            seen.add(k)
            todo.extend(parents.get(k, ()))
    return [(scenario.features[k].label, "higher" if x_cf[k] > x[k] else "lower")
            for k in sorted(seen) if action_mask[k]]


def profile_from_answer(scenario: Scenario, values: dict[str, float | int | str]) -> np.ndarray:
    """Model-unit profile of a validated profile answer's values (display units; a category
    as its label or code)."""
    out: dict[str, float] = {}
    for f in scenario.entered:
        v = values[f.name]
        if f.display.kind == "categorical" and isinstance(v, str):
            v = f.display.categories.index(v)
        out[f.name] = float(v)
    return scenario.from_display(out)


def display_values(scenario: Scenario, x: np.ndarray) -> dict[str, float | str]:
    """A model-unit profile as a profile answer's values (a category as its label)."""
    values: dict[str, float | str] = {}
    for j, f in enumerate(scenario.features):
        if f.derived_from is not None:
            continue
        if f.display.kind == "categorical":
            values[f.name] = f.display.categories[int(round(x[j]))]
        else:
            values[f.name] = float(f.display.to_display(x[j]))
    return values


def field_problems(f: ProfileField, v: Any) -> list[str]:
    """What is wrong with an entered value v of the profile field f."""
    if f.kind == "category":
        if isinstance(v, str):
            return [] if v in f.options else [f"{f.feature}: {v!r} is not one of "
                                              f"{', '.join(f.options)}"]
        if isinstance(v, int) and 0 <= v < len(f.options):
            return []
        return [f"{f.feature}: expected one of {', '.join(f.options)}"]
    if isinstance(v, str) or not np.isfinite(v):
        return [f"{f.feature}: expected a number in {f.unit or 'display units'}"]
    if (f.min is not None and v < f.min) or (f.max is not None and v > f.max):
        return [f"{f.feature}: {v} is outside {f.min}..{f.max} {f.unit}".rstrip()]
    return []
