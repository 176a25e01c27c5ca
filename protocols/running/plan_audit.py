"""What a study showed, checked against its plan rules: per rule, the shown plans breaking it.

Every plan a participant rated (``plans``) and every option an interactive method put in
front of them (``comparisons.options_json``: HARE's pairwise and accept questions) is read
back from the store and checked with engine.recourse.plan_rules under the study's rules
(``protocols.running.resources.plan_rules``), the consequence rule against the profile the person
stated (``elicitations.hard_mask_json``; none without an elicitation). A study whose methods
obey the rules audits to zero on every rule.

``same_readings`` finds the questions whose options read the same as shown: two candidate
plans of one question whose plan rows (protocols.running.display.plan_rows, the rows the
page draws) show every item with the same suggested value, so the pick between them says
nothing about the person.
"""

from __future__ import annotations

import json
from typing import Any

from data.store import Store
from engine.recourse import RecourseBatch
from engine.recourse.plan_rules import count_broken
from engine.scenarios import get_scenario
from engine.scenarios.base import Scenario
from protocols.definition.schema import Protocol
from protocols.running import display
from protocols.running.resources import plan_rules

# One arm's rows: a plan names the arm that made it; a comparison belongs to its
# participant's arm (interactive arms are between-participant only).
_PLAN_ARM = " AND ($2::VARCHAR IS NULL OR arm = $2)"
_IN_ARM = (" AND ($2::VARCHAR IS NULL OR participant_id IN (SELECT participant_id FROM "
           "participants WHERE study_id = $1 AND arm = $2))")


def audit(store: Store, study_id: str, protocol: Protocol,
          arm: str | None = None) -> dict[str, Any]:
    """{plans, options, plans_broken {rule: n}, options_broken {rule: n}} of a study (of
    ``arm`` only, when given: its plans and its participants' questions)."""
    scenario = get_scenario(protocol.scenario)
    rules = plan_rules(protocol, scenario)
    hard = {r["participant_id"]: json.loads(r["hard_mask_json"]) for r in store.query(
        "SELECT participant_id, hard_mask_json FROM elicitations WHERE study_id = $1",
        [study_id])}
    plans = [(r["participant_id"], {"x": json.loads(r["x_json"]),
                                    "x_cf": json.loads(r["x_cf_json"]),
                                    "actions": json.loads(r["actions_json"])})
             for r in store.query("SELECT participant_id, x_json, x_cf_json, actions_json "
                                  "FROM plans WHERE study_id = $1" + _PLAN_ARM,
                                  [study_id, arm])]
    options = [(r["participant_id"], o) for r in store.query(
        "SELECT participant_id, options_json FROM comparisons WHERE study_id = $1" + _IN_ARM,
        [study_id, arm]) for o in json.loads(r["options_json"])]
    out: dict[str, Any] = {"plans": len(plans), "options": len(options)}
    for key, rows in (("plans_broken", plans), ("options_broken", options)):
        stated = [hard.get(pid, {}) for pid, _ in rows] if hard else None
        out[key] = count_broken(scenario, rules, [r for _, r in rows], stated)
    return out


def readings(scenario: Scenario, options: list[dict[str, Any]]
             ) -> list[list[display.PlanRow]]:
    """The plan rows the page draws for each candidate plan of a question
    (``RecourseBatch.record``s)."""
    batch = RecourseBatch.from_records(options, scenario)
    return [display.plan_rows(scenario, batch, i) for i in range(len(options))]


def same_readings(store: Store, study_id: str, protocol: Protocol,
                  arm: str | None = None) -> list[dict[str, Any]]:
    """Every question (of the participants of ``arm``, when given) with two options that
    read the same as shown (every row's suggested value equal): [{participant_id, step,
    kind, options (the pair's positions), changes [{label, current, suggested}] (the rows
    the plan changes)}]."""
    scenario = get_scenario(protocol.scenario)
    out = []
    for r in store.query("SELECT participant_id, step, kind, options_json FROM comparisons "
                         "WHERE study_id = $1" + _IN_ARM + " ORDER BY participant_id, step",
                         [study_id, arm]):
        options = json.loads(r["options_json"])
        if len(options) < 2:
            continue
        rows = readings(scenario, options)
        shown = [tuple(row.suggested for row in plan) for plan in rows]
        for i in range(len(shown)):
            for j in range(i + 1, len(shown)):
                if shown[i] == shown[j]:
                    out.append({"participant_id": r["participant_id"], "step": r["step"],
                                "kind": r["kind"], "options": [i, j],
                                "changes": [{"label": row.label, "current": row.current,
                                             "suggested": row.suggested}
                                            for row in rows[i] if row.kind != "same"]})
    return out
