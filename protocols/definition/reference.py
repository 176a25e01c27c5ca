"""The protocol reference, generated from the schema (``recourse-study protocol docs``).

Every field of ``Protocol`` and its blocks, walked from the pydantic models: its path, type,
default, allowed values and bounds (from the annotations and constraints), what it means
and which page's text it controls (protocols.definition.reference_text), then the synthetic behaviour
model: its equations (engine.synthetic.rating_model) and each knob's meaning. The figure of
rating curves is drawn by the command (``curve_settings`` lists what it draws).
"""

from __future__ import annotations

import json
import typing
from typing import Any

import annotated_types as at
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from protocols.definition.reference_text import MEANING, SHOWN
from protocols.definition.schema import Protocol, shipped_protocols
from protocols.definition.validation import model_of

# The rating-curve settings the reference draws (label, action overrides).
CURVES: tuple[tuple[str, dict[str, float]], ...] = (
    ("reference (Tominaga-like): drop 1.6, scale 0.1", {}),
    ("falls with distance: at_zero 4.5, at_far 2.0, half_distance 0.15",
     {"at_zero": 4.5, "at_far": 2.0, "half_distance": 0.15}),
    ("slow fall: at_zero 4.5, at_far 2.5, half_distance 0.4",
     {"at_zero": 4.5, "at_far": 2.5, "half_distance": 0.4}),
    ("flat: at_zero 3.5, at_far 3.5", {"at_zero": 3.5, "at_far": 3.5}),
    ("drop 1.0 alone (the old knob)", {"drop": 1.0}),
)


def fields(model: type[BaseModel] = Protocol, prefix: str = "") -> list[dict[str, Any]]:
    """One row per field (depth first): path, key (Model.field), type, default, bounds,
    meaning, shown (the page whose text it is, or '')."""
    rows = []
    for name, info in model.model_fields.items():
        key = f"{model.__name__}.{name}"
        path = f"{prefix}{name}"
        sub = model_of(info.annotation)
        rows.append({"path": path, "key": key, "type": type_name(info.annotation),
                     "default": _default(info), "bounds": _bounds(info.metadata),
                     "meaning": MEANING.get(key, ""), "shown": SHOWN.get(key, "")})
        if sub is not None:
            listed = typing.get_origin(info.annotation) is list
            rows += fields(sub, f"{path}[]." if listed else f"{path}.")
    return rows


def type_name(annotation: Any) -> str:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return "one of " + ", ".join(f"`{a}`" for a in args)
    if origin is typing.Annotated:
        return type_name(args[0])
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        named = [type_name(a) for a in args if a is not type(None)]
        return " or ".join(named) + (" or null" if type(None) in args else "")
    if origin is list:
        return f"list of {type_name(args[0])}" if args else "list"
    if origin is dict:
        return "mapping"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "block"
    return getattr(annotation, "__name__", str(annotation))


def _default(info: Any) -> str:
    if info.is_required():
        return "required"
    value = info.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return "(block defaults)"
    if value is None or value is PydanticUndefined:
        return "null"
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "...\""


def _bounds(metadata: list[Any]) -> str:
    out = []
    for m in metadata:
        for cls, sym, attr in ((at.Ge, ">=", "ge"), (at.Gt, ">", "gt"), (at.Le, "<=", "le"),
                               (at.Lt, "<", "lt"), (at.MinLen, "min length", "min_length"),
                               (at.MaxLen, "max length", "max_length")):
            if isinstance(m, cls):
                out.append(f"{sym} {getattr(m, attr)}")
        pattern = getattr(m, "pattern", None)
        if pattern:
            out.append(f"pattern `{pattern}`")
    return ", ".join(out)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(figure: str | None = "protocol-rating-curves.png") -> str:
    """The whole reference page (``figure``: the rating-curve picture's file name)."""
    from engine.synthetic import rating_model

    rows = fields()
    table = ["| field | type | default | bounds | meaning | participants read it on |",
             "|---|---|---|---|---|---|"]
    table += [f"| `{r['path']}` | {_cell(r['type'])} | `{_cell(r['default'])}` | "
              f"{_cell(r['bounds'])} | {_cell(r['meaning'])} | {r['shown']} |" for r in rows]
    return PAGE.format(
        shipped=", ".join(f"`{p}`" for p in shipped_protocols()), table="\n".join(table),
        behaviour=_indent(_behaviour_text(rating_model)),
        picture=f"![Mean action rating against distance]({figure})\n\n" if figure else "",
        curves="\n".join(f"- {label}" for label, _ in CURVES))


# The page around the generated parts (``markdown``; str.format fields, literal braces doubled).
PAGE = """# Protocol reference

<!-- generated by `recourse-study protocol docs --out docs/protocol-reference.md`; do not
edit by hand: the field meanings live in protocols/definition/reference_text.py -->

A protocol is a YAML file (shipped: {shipped}).
Check one without running it with `recourse-study validate FILE`: every problem at once,
each with its path, line and suggestions; for a valid file the resolved protocol (page
sequence, arms, every text participants read, defaults marked) and warnings.

Minimal example:

```yaml
id: my-study
title: My study
scenario: loan
elicitation: {{scheme: likert, likert_levels: 5, likert_low: easiest}}
arms:
  - {{id: icarma, method: icarma}}
  - {{id: oracle, method: oracle, options: {{bins: 10, plausibility: false}}}}
plans: {{per_participant: 3, design: stratified, shortfall: {{then: fewer}}}}
questions:
  why: {{enabled: false}}
  impossible: false
attention_checks:
  - {{id: careful, after: plan-2, question: "Please choose 'No'.",
     options: ["Yes", "No"], correct: "No"}}
```

The page sequence: consent, [screening], scenario, profile, decision, [elicitation],
[hare-1..k], plan-1..n, debrief (screening before consent with `screening_first`); each
attention check right after the page it names. A participant whose session ends early
(declined, screened out, approved own profile, a plan shortfall under `then: end`) sees the
end page instead of the rest. A study of two `sessions` shows the pause page after
`sessions.break_after` until the second session opens.

## Fields

{table}

## Realistic plans

A scenario's features carry display bounds (Loan: a loan of at least $1,000; other items
within the training split's 0.1% / 99.9% quantiles). Plans outside them are never shown.
With `plans.prune_actions` (default on) an action is dropped when the plan stays valid
without it, and an action whose change is below the item's display resolution (e.g. less
than a dollar) is never shown as an action. Participants for whom fewer plans remain than
`plans.per_participant` are reported by `simulate` and the dashboard (per arm, with the
reason), and `plans.shortfall` says what the study does.

## The synthetic behaviour model

Synthetic participants rate each plan with the ordinal model of
`engine.synthetic.rating_model`:

```
{behaviour}
```

The knobs, per outcome (`simulation.ratings.acceptance` / `.action`):

- `at_zero`, `at_far`, `half_distance` (in the researcher's terms): the typical
  participant's mean rating at distance 0, far away, and the distance where it is halfway
  between. Ratings fall with distance when `at_far < at_zero`.
- `intercept`, `drop`, `scale`: the same curve on the latent scale (the older names; one of
  each pair may be given, not both). `drop` alone lowers every plan beyond about `scale`
  by the same amount: with the reference `scale` 0.1 and plans mostly farther than that, it
  moves all ratings down instead of making them fall with distance.
- `satisfaction` (k), `violation` (nu), `sd_intercept`, `sd_slope`, `cutpoints`: as in the
  equation.
- `curve_of`: `typical` (default) makes the curve the typical participant's (u_p = b_p =
  0); `population` makes it the mean rating over all participants, the quantity a Gaussian
  mixed model (mgcv's GAMM) estimates. They differ when `sd_slope` > 0: the spread of the
  participants grows with distance and pulls the mean rating toward the scale's middle, so
  a flat typical curve gives a mean rating that drifts with distance.

`analyze` on a simulated study adds a "truth vs recovered" section: the curve the
participants were given against the one the ordinal model recovers.

{picture}The picture shows the typical participant's mean action rating against distance for:

{curves}
"""


def _behaviour_text(rating_model: Any) -> str:
    """The rating model as its module and ``OutcomeModel`` document it: the module's
    docstring, then the class's paragraphs after its summary (its example left out)."""
    import inspect

    paragraphs = inspect.cleandoc(rating_model.OutcomeModel.__doc__ or "").split("\n\n")[1:]
    prose = [p for p in paragraphs if not p.lstrip().startswith(">>>")]
    return "\n\n".join([(rating_model.__doc__ or "").strip(), *prose])


def _indent(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())
