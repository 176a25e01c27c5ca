"""Cross-field checks of a structurally valid protocol (the second stage of validation).

Each check yields (location in the file, message); ``protocols.schema.parse_protocol`` turns
locations into paths with line numbers. Checked: the scenario and every method exist, method
options are ones the method accepts, a hare arm has a base and an elicitation, the design
fits the plan count, screening and attention answers are among their options, attention
checks follow a page every participant sees, and the simulation block is consistent.
"""

from __future__ import annotations

import inspect
from typing import Any

from protocols.schema import Protocol


def semantic_problems(p: Protocol) -> list[tuple[tuple[Any, ...], str]]:
    """Every cross-field problem of a structurally valid protocol, as (loc, message)."""
    from engine.preferences import PREFERENCE_DISTRIBUTIONS
    from engine.recourse import METHODS
    from engine.scenarios import scenario_names

    out: list[tuple[tuple[Any, ...], str]] = []
    if p.scenario not in scenario_names():
        out.append((("scenario",), f"unknown scenario {p.scenario!r}; available: "
                    f"{', '.join(scenario_names())}"))
    seen: set[str] = set()
    for i, arm in enumerate(p.arms):
        if arm.id in seen:
            out.append((("arms", i, "id"), f"duplicate arm id {arm.id!r}"))
        seen.add(arm.id)
        out += _method_problems(("arms", i), arm.method, arm.options, METHODS)
        if arm.method == "hare":
            if arm.base is None:
                out.append((("arms", i, "base"), "a hare arm needs a base method"))
            elif arm.base == "hare":
                out.append((("arms", i, "base"), "hare cannot be its own base"))
            else:
                out += _method_problems(("arms", i), arm.base, arm.base_options, METHODS, "base")
        elif arm.base is not None or arm.base_options:
            out.append((("arms", i, "base"), "only a hare arm has a base method"))
        if arm.source == "recourse" and p.plans.design != "best" and arm.method != "hare":
            out.append((("arms", i, "source"), "a design that picks several plans needs "
                        "source: candidates (or plans.design: best)"))
    if p.has_hare:
        if len(p.arms) > 1 and p.assignment == "within":
            out.append((("assignment",), "a hare arm cannot be combined within-participant"))
        if p.elicitation.scheme == "none":
            out.append((("elicitation", "scheme"), "a hare arm needs an elicitation (its "
                        "candidates respect the stated actionable features)"))
    if p.plans.design == "best" and p.plans.per_participant != 1:
        out.append((("plans", "per_participant"), "design best gives one plan per arm; set "
                    "per_participant: 1"))
    if p.elicitation.likert_levels is not None and p.elicitation.scheme != "likert":
        out.append((("elicitation", "likert_levels"), "only a likert elicitation has levels"))
    for i, q in enumerate(p.screening):
        bad = [e for e in q.eligible if e not in q.options]
        if bad:
            out.append((("screening", i, "eligible"), f"not among the options: {', '.join(bad)}"))
    ids = [q.id for q in p.screening]
    for i, q in enumerate(p.screening):
        if ids.count(q.id) > 1 and ids.index(q.id) != i:
            out.append((("screening", i, "id"), f"duplicate question id {q.id!r}"))
    for key in ("acceptance", "action"):
        labels = getattr(p.questions, key).labels
        if len(labels) not in (2, 7):
            out.append((("questions", key, "labels"), f"a 7-point scale needs 2 or 7 labels, "
                        f"got {len(labels)}"))
    why = p.questions.why
    if why.min_chars > why.max_chars:
        out.append((("questions", "why", "min_chars"), "min_chars exceeds max_chars"))
    anchors = static_page_ids(p)
    check_ids: set[str] = set()
    for i, c in enumerate(p.attention_checks):
        if c.correct not in c.options:
            out.append((("attention_checks", i, "correct"), f"{c.correct!r} is not an option"))
        if c.after not in anchors:
            out.append((("attention_checks", i, "after"), f"no page {c.after!r}; expected one "
                        f"of {', '.join(anchors)}"))
        if c.id in check_ids:
            out.append((("attention_checks", i, "id"), f"duplicate attention check {c.id!r}"))
        check_ids.add(c.id)
    sim = p.simulation
    if sim.constraints.distribution not in PREFERENCE_DISTRIBUTIONS:
        out.append((("simulation", "constraints", "distribution"), "unknown preference "
                    f"distribution; expected one of {', '.join(PREFERENCE_DISTRIBUTIONS)}"))
    probs = sim.constraints.n_actionable_probs
    if probs is not None:
        if any(v < 0 for v in probs) or sum(probs) <= 0:
            out.append((("simulation", "constraints", "n_actionable_probs"),
                        "probabilities must be >= 0 and not all 0"))
        if p.scenario in scenario_names():
            from engine.scenarios import get_scenario

            m = len(get_scenario(p.scenario).actionable)
            if len(probs) != m:
                out.append((("simulation", "constraints", "n_actionable_probs"),
                            f"needs one probability per possible count 1..{m}, got {len(probs)}"))
    for key in ("acceptance", "action"):
        cuts = getattr(sim.ratings, key).cutpoints
        if cuts is not None and any(b <= a for a, b in zip(cuts, cuts[1:], strict=False)):
            out.append((("simulation", "ratings", key, "cutpoints"), "must be strictly "
                        "increasing"))
    return out


def _method_problems(
    loc: tuple[Any, ...], name: str, options: dict[str, Any], methods: dict[str, str],
    prefix: str = "",
) -> list[tuple[tuple[Any, ...], str]]:
    key = f"{prefix}_options" if prefix else "options"
    mloc = loc + ((prefix or "method"),)
    if name not in methods:
        return [(mloc, f"unknown recourse method {name!r}; available: "
                 f"{', '.join(sorted(methods))}")]
    from engine.recourse import method_class

    try:
        cls = method_class(name)
    except (ImportError, AttributeError):
        return []  # known but not importable yet: reported when the study starts
    params = inspect.signature(cls.__init__).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return []
    allowed = [n for n in params if n not in ("self", "context")]
    return [
        (loc + (key, opt), f"unknown option for {name}; expected one of {', '.join(allowed)}")
        for opt in options
        if opt not in allowed
    ]


def static_page_ids(p: Protocol) -> list[str]:
    """Page ids an attention check may follow (those every participant passes through)."""
    ids = ["consent"]
    if p.screening:
        ids.append("screening")
    ids += ["scenario", "profile", "decision"]
    if p.elicitation.scheme != "none":
        ids.append("elicitation")
    n = min(plans_per_participant(p, arm.id) for arm in p.arms)
    ids += [f"plan-{k}" for k in range(1, n + 1)]
    return ids


def plans_per_participant(p: Protocol, arm_id: str) -> int:
    """Plans a participant of ``arm_id`` rates (hare: its final plan and its base)."""
    if p.assignment == "within":
        return p.plans.per_participant * len(p.arms)
    return 2 if p.arm(arm_id).method == "hare" else p.plans.per_participant
