"""A preregistration's hypotheses and analysis plan, read from what ``analyze`` fits.

The models are ``analysis.pipeline.plan_models`` for the protocol's distance (the one its
plans are chosen by, as ``analyze`` reads it), the priors those of their model families
(``ModelFamily.priors``, checked against the built PyMC model by the tests), the decision rules those
of ``analysis.power`` (``RULE_TEXT``). Hypotheses come from a power analysis's effect when
one is given (power.json), otherwise from every effect the model of this protocol's data
estimates (``study_app.power.protocol_effects``), each stated in words.
"""

from __future__ import annotations

from typing import Any

from analysis.pipeline import plan_models
from analysis.power import Effect
from analysis.power_report import RULE_TEXT
from protocols.definition.schema import Protocol
from study_app.power import protocol_effects

DIRECTION = {"distance": "changes with the plan's distance {d} (the smooth f of {d} is not "
                         "flat)",
             "satisfaction": "changes with the share of the participant's stated "
                             "constraints the plan satisfies (beta_s != 0)",
             "violation": "changes when the plan violates a stated constraint (beta_v != 0)"}


def plan_distance(protocol: Protocol) -> str:
    """The distance ``analyze`` uses by default: the protocol's proximity (tominaga design)
    or distance (the others), as study_app.study_analysis.protocol_distance reads it."""
    spec = protocol.plans
    return spec.proximity if spec.design == "tominaga" else spec.distance


def effect_sentence(effect: Effect, distance: str) -> str:
    """One hypothesis in words."""
    if effect.term == "arm":
        return (f"H: the {effect.outcome} rating differs between arm {effect.arm} and arm "
                f"{effect.reference} at equal distance (gamma_{effect.arm} - "
                f"gamma_{effect.reference} != 0).")
    text = DIRECTION[effect.term].format(d=distance)
    return f"H: the {effect.outcome} rating {text}."


def hypotheses(protocol: Protocol, power: dict[str, Any] | None) -> dict[str, Any]:
    """{source, effects [{name, sentence, rule}], text [...]}: the power run's effect, or
    every effect of this protocol's model."""
    distance = plan_distance(protocol)
    known = protocol_effects(protocol)
    if power is not None:
        effect = known.get(power["effect"])
        if effect is None:
            raise ValueError(f"the power analysis's effect {power['effect']!r} is not one of "
                             f"this protocol's model: {', '.join(sorted(known))}")
        distance = power.get("distance") or distance
        chosen, source = [effect], f"the power analysis's effect ({power['effect']})"
        rules = {effect.name: power.get("rule") or ("band" if effect.smooth else "interval")}
    else:
        chosen = list(known.values())
        source = ("the analysis model this protocol's data imply (no power analysis given "
                  "and the protocol states no hypotheses)")
        rules = {e.name: "band" if e.smooth else "interval" for e in chosen}
    items = [{"name": e.name, "sentence": effect_sentence(e, distance), "rule": rules[e.name],
              "decision": RULE_TEXT[rules[e.name]]} for e in chosen]
    text = [f"Hypotheses from {source}."]
    text += [f"{i['sentence']} Supported when {i['decision']}." for i in items]
    if any(e.term == "arm" for e in chosen):
        text.append("The synthetic participants have no arm term: arm contrasts are "
                    "two-sided tests without a simulated expectation.")
    return {"source": "power" if power is not None else "model", "effects": items,
            "text": text}


def analysis_plan(protocol: Protocol, sampler: dict[str, Any], gaussian: bool,
                  distance: str | None = None) -> dict[str, Any]:
    """{distance, models [{name, outcome, distance, likelihood, formula, words}], priors,
    sampler, text}: each model ``analyze`` will fit, in words and formula."""
    distance = distance or plan_distance(protocol)
    terms = (["satisfaction", "violation"] if protocol.elicitation.scheme != "none" else [])
    terms += ["arm"] if len(protocol.arms) > 1 else []
    extra = f", with {' and '.join(terms)} terms" if terms else ""
    models, stated = [], {}
    for spec in plan_models(distance, gaussian):
        stated.update({p[0]: p for p in spec.family.priors() if p[0] not in stated})
        models.append({"name": spec.name, "outcome": spec.outcome, "distance": spec.distance,
                       "likelihood": spec.likelihood, "formula": spec.family.formula,
                       "words": spec.family.describe(spec.outcome, spec.distance, extra)})
    priors = [{"parameter": n, "distribution": f"{d}({', '.join(f'{p:g}' for p in ps)})",
               "meaning": m} for n, d, ps, m in stated.values()]
    text = [f"Main distance: {distance} (the protocol's plan design)."]
    text += [f"Model {m['name']}: {m['words']}; {m['formula']}." for m in models]
    text.append("PSIS-LOO compares, per outcome, the ordinal models with L0 and with L1.")
    text.append("Priors: " + "; ".join(f"{p['parameter']} ~ {p['distribution']}"
                                       for p in priors) + ".")
    text.append("Sampler: " + ", ".join(f"{k} {v}" for k, v in sampler.items()) + ".")
    text.append("Decision rules: a smooth effect is supported when "
                f"{RULE_TEXT['band']}; a coefficient when {RULE_TEXT['interval']}.")
    text.append("Missing data: a missing satisfaction or violation (no elicitation) "
                "contributes 0; a term missing or constant everywhere is dropped"
                + ("" if terms else " (here: satisfaction, violation and arm terms)") + ".")
    return {"distance": distance, "models": models, "priors": priors, "sampler": sampler,
            "gaussian": gaussian, "text": text}
