"""A preregistration of a protocol, in the sections of the OSF Preregistration template.

``preregistration(protocol, ...)`` builds one document (a dict, written as prereg.json)
whose ``sections`` are, in order: hypotheses, design, sampling plan, variables, analysis
plan, exclusions and the protocol's identity (id and SHA-256, ``Protocol.fingerprint``:
the hash the store keeps for a study). Each section is a list of sentences and never empty:
where the protocol fixes nothing (no quotas, no planned N) the section says so. ``planned``
holds what ``analyze --prereg`` compares the analysis with (analysis.deviations): N, the
exclusion rules, the models and the sampler. ``markdown(doc)`` is prereg.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from analysis.exclusions import FLAG_RULES
from analysis.pipeline import sampler_settings
from data.jsonio import write_json
from protocols.definition.schema import Protocol
from study_app.prereg_analysis import analysis_plan, hypotheses

FORMAT = "recourse-study-prereg"
VERSION = 1
SECTIONS = (("hypotheses", "Hypotheses"), ("design", "Design plan"),
            ("sampling", "Sampling plan"), ("variables", "Variables"),
            ("analysis", "Analysis plan"), ("exclusions", "Exclusions"),
            ("protocol", "Protocol identity"))
EXCLUSION_TEXT = {
    "impossible_items": "a rating whose participant marked an item of the plan impossible "
                        "to implement is left out",
    "failed_attention": "every rating of a participant who answered an attention check "
                        "wrongly is left out",
    "fewer_plans": "every rating of a participant who rated fewer plans than asked is "
                   "left out",
    "speeder": "every rating of a participant flagged as a speeder is left out",
    "straightliner": "every rating of a participant flagged as a straight-liner is left out",
}


class PreregError(ValueError):
    """A preregistration cannot be written or read as asked."""


def preregistration(protocol: Protocol, *, power: dict[str, Any] | None = None,
                    participants: int | None = None, sampler: dict[str, Any] | None = None,
                    gaussian: bool = True, flag_rules: tuple[str, ...] = ()
                    ) -> dict[str, Any]:
    """The document of the module docstring. ``power``: a power.json of this protocol;
    ``participants``: the planned N (default: the power run's smallest N reaching its
    target, else the quotas' total); ``flag_rules``: the quality-flag rules (speeder,
    straightliner) preregistered as exclusions (analyze --exclude)."""
    if power is not None and power.get("protocol") != protocol.id:
        raise PreregError(f"the power analysis is of protocol {power.get('protocol')!r}, "
                          f"not {protocol.id!r}")
    unknown = [r for r in flag_rules if r not in (*FLAG_RULES, "failed_attention")]
    if unknown:
        raise PreregError(f"unknown flag rule(s) {', '.join(unknown)}; expected "
                          f"{', '.join(FLAG_RULES)} or failed_attention")
    sampler = sampler or sampler_settings()
    try:
        hyp = hypotheses(protocol, power)
    except ValueError as e:
        raise PreregError(str(e)) from None
    plan = analysis_plan(protocol, sampler, gaussian,
                         power.get("distance") if power is not None else None)
    n, sampling = sampling_plan(protocol, power, participants)
    rules, exclusions = exclusion_plan(protocol, flag_rules)
    text = {"hypotheses": hyp["text"], "design": design(protocol), "sampling": sampling,
            "variables": variables(protocol), "analysis": plan["text"],
            "exclusions": exclusions, "protocol": identity(protocol)}
    return {
        "format": FORMAT, "version": VERSION,
        "protocol": {"id": protocol.id, "title": protocol.title,
                     "sha256": protocol.fingerprint()},
        "planned": {"participants": n, "distance": plan["distance"], "exclusions": rules,
                    "models": [m["name"] for m in plan["models"]], "sampler": sampler},
        "hypotheses": hyp["effects"], "models": plan["models"], "priors": plan["priors"],
        "sections": [{"id": k, "title": t, "text": text[k]} for k, t in SECTIONS],
    }


def design(protocol: Protocol) -> list[str]:
    """Arms, assignment, plans, questions and scales with their labels, in words."""
    p, q = protocol.plans, protocol.questions
    arms = "; ".join(f"{a.id} (method {a.method}"
                     f"{', options ' + json.dumps(a.options, sort_keys=True) if a.options else ''}"
                     f"{', not personalized' if not a.personalized else ''}, weight {a.weight})"
                     for a in protocol.arms)
    assign = ("each participant is assigned one arm at random, in proportion to the arms' "
              "weights (between participants)" if protocol.assignment == "between" else
              "each participant sees plans of every arm (within participants)")
    chosen = (f"sparsity {p.sparsity} and proximity {p.proximity} (tominaga design)"
              if p.design == "tominaga" else f"{p.distance} ({p.design} design)")
    out = [f"Study type: an experiment on scenario {protocol.scenario!r} with "
           f"{len(protocol.arms)} arm(s): {arms}.",
           f"Assignment: {assign}.",
           f"Plans: {p.per_participant} recourse plans per participant, chosen by {chosen}, "
           f"shown in {p.order} order.",
           f"Elicitation of the participant's constraints: {protocol.elicitation.scheme}.",
           f"Profile: {protocol.profile.source}."]
    for name in ("acceptance", "action"):
        rq = getattr(q, name)
        scale = ", ".join(f"{i} = {label}" for i, label in enumerate(rq.labels, 1))
        out.append(f"Question {name}: \"{rq.text}\" on a {len(rq.labels)}-point scale "
                   f"({scale}).")
    if q.why.enabled:
        out.append(f"Open question after each plan: \"{q.why.text}\".")
    if q.impossible:
        out.append(f"Per changed item: \"{q.impossible_text}\" (yes/no).")
    checks = [f"{c.id} after {c.after}: \"{c.question}\" (correct: {c.correct})"
              for c in protocol.attention_checks]
    out.append("Attention checks: " + ("; ".join(checks) if checks else "none") + ".")
    out.append("Blinding: the protocol states none; what each page shows participants is "
               "what recourse-study preview renders.")
    return out


def sampling_plan(protocol: Protocol, power: dict[str, Any] | None,
                  participants: int | None) -> tuple[int | None, list[str]]:
    """(the planned N or None, the section's sentences): N and its power justification,
    the stopping rule, the quotas and time limit."""
    quota_total = sum(protocol.quotas.targets.values()) if protocol.quotas else None
    n = participants
    if n is None and power is not None:
        n = power.get("smallest_n")
    if n is None:
        n = quota_total
    out = []
    if power is not None:
        rows = ", ".join(f"N = {r['participants']}: {r['power']['rate']:.2f} "
                         f"[{r['power']['lo']:.2f}, {r['power']['hi']:.2f}]"
                         for r in power.get("rows", [])
                         if r.get("power") and r["power"].get("rate") is not None)
        reached = (f"the smallest N reaching it is {power['smallest_n']}"
                   if power.get("smallest_n") is not None else
                   "no N tried reaches it")
        out.append(f"Power justification: simulation-based power for effect "
                   f"{power['effect']} (rule {power.get('rule')}), {power.get('sims')} "
                   f"simulated studies per N, target power {power.get('target')}: {reached}. "
                   f"Power per N (Monte Carlo 95% interval): {rows or 'none finished'}."
                   + _pilot_clause(power))
    else:
        out.append("Power justification: none given (no power analysis was attached; run "
                   "recourse-study power and pass --power).")
    if n is None:
        out.append("Planned sample size: not fixed (no power analysis reaching its target, "
                   "no --participants and no quotas in the protocol).")
    else:
        source = ("as stated (--participants)" if participants is not None else
                  "the power analysis's smallest N" if power is not None
                  and power.get("smallest_n") is not None else "the quotas' total")
        out.append(f"Planned sample size: N = {n} participants ({source}).")
    if protocol.quotas:
        targets = ", ".join(f"{arm} {t}" for arm, t in protocol.quotas.targets.items())
        out.append(f"Quotas: per arm {targets} (counting {protocol.quotas.counts} "
                   "participants); an arm at its target admits no one more.")
    else:
        out.append("Quotas: none in the protocol.")
    stop = (f"none other than N = {n}: recruitment stops when {n} participants have "
            "completed" if n is not None else "none (the protocol and this plan fix no N)")
    out.append(f"Stopping rule: {stop}; no interim analysis or optional stopping.")
    if protocol.time_limit:
        out.append(f"Time limit: a session ends after {protocol.time_limit.seconds:g} s.")
    else:
        out.append("Time limit: none in the protocol.")
    return n, out


def variables(protocol: Protocol) -> list[str]:
    """Measured, manipulated and derived variables."""
    q = protocol.questions
    out = [f"Measured: {name} (\"{getattr(q, name).text}\"), ordinal 1-"
           f"{len(getattr(q, name).labels)}" for name in ("acceptance", "action")]
    if q.impossible:
        out.append("Measured: impossible (per changed item, yes/no).")
    if protocol.elicitation.scheme != "none":
        out.append(f"Measured: the participant's stated constraints "
                   f"({protocol.elicitation.scheme} elicitation).")
    out.append("Manipulated: arm (" + ", ".join(a.id for a in protocol.arms)
               + f"; {protocol.assignment} participants) and the plans' distances by the "
               f"{protocol.plans.design} design.")
    out.append("Indices: l0_actions, l1_actions, l0_profile, l1_profile (the plan's L0 and "
               "L1 distance over the changed items or the whole profile)"
               + ("; satisfaction (share of stated constraints the plan satisfies) and "
                  "violation (the plan violates one)" if protocol.elicitation.scheme != "none"
                  else "") + ".")
    out.append("Indices: data-quality flags speeder, straightliner, attention_failed "
               "(data.quality).")
    return out


def exclusion_plan(protocol: Protocol, flag_rules: tuple[str, ...]
                   ) -> tuple[dict[str, bool], list[str]]:
    """(rule -> applied, the section's sentences): the protocol's exclusions and the
    quality flags, in the keys of analysis.exclusions' record."""
    ex = protocol.exclusions
    rules = {"impossible_items": ex.impossible_items,
             "failed_attention": ex.failed_attention or "failed_attention" in flag_rules,
             "fewer_plans": ex.fewer_plans,
             **{r: r in flag_rules for r in FLAG_RULES}}
    on = [f"{rule}: {EXCLUSION_TEXT[rule]}." for rule, v in rules.items() if v]
    off = [rule for rule, v in rules.items() if not v]
    out = on or ["No exclusion rule applies: every rating is analysed."]
    if off:
        out.append("Not applied: " + ", ".join(off) + ".")
    qual = protocol.quality
    out.append(f"Quality flags (recorded for every participant): speeder when the total or "
               f"typical page time is under {qual.speeder_fraction:g} of the median; "
               f"straightliner when the same acceptance and action rating was given on "
               f"every plan over at least {qual.straightliner_min_ratings} plans; "
               "attention_failed when an attention check was answered wrongly.")
    out.append("Excluded participants and ratings stay in the data and the export; the "
               "analysis counts them per rule.")
    return rules, out


def identity(protocol: Protocol) -> list[str]:
    return [f"Protocol {protocol.id!r}: {protocol.title}.",
            f"SHA-256 of the canonical protocol: {protocol.fingerprint()} (the hash the study "
            "database stores; a study run with another protocol is refused)."]


def markdown(doc: dict[str, Any]) -> str:
    """prereg.md: a title, then each section as a heading and its sentences."""
    lines = [f"# Preregistration: {doc['protocol']['title']}", "",
             f"Protocol `{doc['protocol']['id']}`, SHA-256 `{doc['protocol']['sha256']}`.", ""]
    for section in doc["sections"]:
        lines += [f"## {section['title']}", ""]
        lines += [f"- {sentence}" for sentence in section["text"]] + [""]
    return "\n".join(lines)


def write_prereg(doc: dict[str, Any], out: Path) -> dict[str, Path]:
    """OUT/prereg.json and OUT/prereg.md; an existing, non-empty OUT is refused (nothing
    is overwritten)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise PreregError(f"{out} exists and is not an empty folder; choose a new --out "
                          "(nothing was written)")
    out.mkdir(parents=True, exist_ok=True)
    files = {"json": out / "prereg.json", "markdown": out / "prereg.md"}
    write_json(files["json"], doc)
    files["markdown"].write_text(markdown(doc), encoding="utf-8")
    return files


def read_prereg(path: Path) -> dict[str, Any]:
    """A prereg.json; PreregError when it is missing, not JSON or not a preregistration."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PreregError(f"no preregistration at {path}") from None
    except (OSError, ValueError) as e:
        raise PreregError(f"cannot read {path} as JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or "planned" not in doc:
        raise PreregError(f"{path} is not a preregistration written by recourse-study "
                          "prereg")
    return doc


def _pilot_clause(power: dict[str, Any]) -> str:
    """Where a power analysis from a pilot got its truth (empty for a protocol's own)."""
    pilot = power.get("pilot")
    if not pilot:
        return ""
    return (f" The synthetic participants of each simulated study rated as one draw of the "
            f"posterior of the analysis model fitted to pilot {pilot['study_id']} "
            f"({pilot['participants']} participants, {pilot['ratings']} ratings), a "
            f"different draw per simulated study, so the pilot's uncertainty is part of the "
            f"power.")
