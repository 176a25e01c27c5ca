"""What a study showed, checked against its plan rules: per rule, the shown plans breaking it.

Every plan a participant rated (``plans``) and every option an interactive method put in
front of them (``comparisons.options_json``: HARE's pairwise and accept questions) is read
back from the store and checked with engine.recourse.plan_rules under the study's rules
(``protocols.running.resources.plan_rules``), the consequence rule against the profile the person
stated (``elicitations.hard_mask_json``; none without an elicitation). A study whose methods
obey the rules audits to zero on every rule.
"""

from __future__ import annotations

import json
from typing import Any

from data.store import Store
from engine.recourse.plan_rules import count_broken, count_same_reading
from engine.scenarios import get_scenario
from protocols.definition.schema import Protocol
from protocols.running.resources import plan_rules


def audit(store: Store, study_id: str, protocol: Protocol) -> dict[str, Any]:
    """{plans, options, pairs, pairs_same_reading, plans_broken {rule: n}, options_broken
    {rule: n}} of a study (``pairs_same_reading``: compared pairs whose two options read the
    same as shown, engine.recourse.plan_rules.reads_same)."""
    scenario = get_scenario(protocol.scenario)
    rules = plan_rules(protocol, scenario)
    hard = {r["participant_id"]: json.loads(r["hard_mask_json"]) for r in store.query(
        "SELECT participant_id, hard_mask_json FROM elicitations WHERE study_id = $1",
        [study_id])}
    plans = [(r["participant_id"], {"x": json.loads(r["x_json"]),
                                    "x_cf": json.loads(r["x_cf_json"]),
                                    "actions": json.loads(r["actions_json"])})
             for r in store.query("SELECT participant_id, x_json, x_cf_json, actions_json "
                                  "FROM plans WHERE study_id = $1", [study_id])]
    questions = [(r["participant_id"], json.loads(r["options_json"])) for r in store.query(
        "SELECT participant_id, options_json FROM comparisons WHERE study_id = $1",
        [study_id])]
    options = [(pid, o) for pid, shown in questions for o in shown]
    pairs = [(shown[0], shown[1]) for _, shown in questions if len(shown) == 2]
    out: dict[str, Any] = {"plans": len(plans), "options": len(options), "pairs": len(pairs),
                           "pairs_same_reading": count_same_reading(scenario, pairs)}
    for key, rows in (("plans_broken", plans), ("options_broken", options)):
        stated = [hard.get(pid, {}) for pid, _ in rows] if hard else None
        out[key] = count_broken(scenario, rules, [r for _, r in rows], stated)
    return out
