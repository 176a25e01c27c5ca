"""Plans shown in a study are realistic (display bounds, no needless or invisible action) and
a shortfall of plans is reported and handled as the protocol says (fewer, fallback, end)."""

from __future__ import annotations

import json

import pytest
import torch

from data.store import Store
from engine.recourse import realism
from engine.scenarios import get_scenario
from protocols.running.planning import ShownPlan
from study_app.simulator import simulate

PILOT = """\
id: realism
title: Realism check
scenario: loan
seed: 5
decision_model: bayes
elicitation: {scheme: ranking}
arms:
  - {id: pool, method: pool, options: {donors: 10}}
  - {id: oracle, method: oracle, options: {bins: 6, plausibility: false}}
plans: {per_participant: 3, design: stratified,
        bounds: {loan_amount: {none: true}, loan_duration: {none: true}, income: {none: true},
                 savings: {none: true}},
        distance: l1_profile}
attention_checks:
  - {id: c1, after: plan-1, question: "Pick b", options: [a, b], correct: b}
"""


# The display bounds and invisible changes are this module's subject: the pilot lifts the
# plausible-change step limits (tests/engine/test_plan_bounds.py pins those).


def _shown(store: Store, study_id: str) -> list[ShownPlan]:
    rows = store.query("SELECT * FROM plans WHERE study_id = $1", [study_id])
    return ShownPlan.from_stored(rows, get_scenario("loan"))


@pytest.mark.parametrize("n", [200, pytest.param(1000, marks=pytest.mark.slow)])
def test_participants_see_only_realistic_plans(tmp_path, n: int) -> None:
    """The issue's acceptance check is the 1,000-participant run (``pytest -m slow``, about
    a minute); ``make test`` runs the same check on 200."""
    from protocols.definition.schema import parse_protocol

    protocol = parse_protocol(PILOT)
    with Store(tmp_path / "pilot.duckdb") as store:
        summary = simulate(protocol, store, n, chunk=500)
        plans = _shown(store, "realism")
    sc = get_scenario("loan")
    assert summary["complete"] == n and summary["plans"] > 2.5 * n
    x = torch.tensor([p.array("x").tolist() for p in plans], dtype=torch.float64)
    x_cf = torch.tensor([p.array("x_cf").tolist() for p in plans], dtype=torch.float64)
    mask = torch.tensor([p.array("action_mask").tolist() for p in plans])
    values = torch.where(mask, x_cf, x)
    # inside the display bounds wherever the plan changes an item
    lo, hi = sc.display_bounds
    changed = sc.changed(x, x_cf)
    assert not (changed & ((x_cf < lo) | (x_cf > hi))).any()
    loans = torch.tensor([float(sc.features[3].display.to_display(v)) for v in x_cf[:, 3]])
    assert (loans[changed[:, 3]] >= 1_000.0).all()
    # every action shows a change a person can see
    for j, f in enumerate(sc.features):
        acted = mask[:, j]
        before = torch.round(torch.as_tensor(f.display.to_display(x[acted, j].numpy())) / f.resolution)
        after = torch.round(torch.as_tensor(f.display.to_display(x_cf[acted, j].numpy())) / f.resolution)
        assert (before != after).all(), f.name
    # valid, and valid without no single action (exact SCM, Bayes rule)
    assert (sc.scm.label_proba(x_cf) >= 0.5).all()
    several = mask.sum(1) > 1
    assert several.sum() > n / 10
    for j in range(sc.d):
        rows = several & mask[:, j]
        trial = mask[rows].clone()
        trial[:, j] = False
        cf = sc.scm.counterfactual(x[rows], trial, values[rows])
        assert not (sc.scm.label_proba(cf) >= 0.5).any(), sc.features[j].name
    # the summary reports the shortfalls it had, per arm and reason
    short = summary["plan_shortfalls"]
    assert summary["participants_short"] == sum(r["participants"] for r in short)
    assert sum(r["missing"] for r in short) == 3 * n - summary["plans"]
    assert all(r["reason"] for r in short)


def test_pruning_is_a_protocol_setting(tmp_path) -> None:
    from protocols.definition.schema import parse_protocol

    mean_actions = {}
    for prune in (True, False):
        text = PILOT.replace("distance: l1_profile}",
                             f"distance: l1_profile, prune_actions: {str(prune).lower()}}}")
        with Store(tmp_path / f"p{prune}.duckdb") as store:
            simulate(parse_protocol(text), store, 60)
            pool = [p for p in _shown(store, "realism") if p.arm == "pool"]
        mean_actions[prune] = sum(int(p.array("action_mask").sum()) for p in pool) / len(pool)
    # pool samples are whole approved profiles: they change every item the person can
    # change, most of which the plan does not need
    assert mean_actions[True] < mean_actions[False] - 0.5, mean_actions


def test_shortfall_fallback_fills_and_end_ends_with_the_message(tmp_path) -> None:
    from protocols.definition.schema import parse_protocol

    one_arm = PILOT.replace("  - {id: oracle, method: oracle, options: {bins: 6, plausibility: "
                            "false}}\n", "")
    fallback = one_arm.replace(
        "distance: l1_profile}",
        "distance: l1_profile,\n        shortfall: {then: fallback, fallback: {method: oracle, "
        "options: {bins: 6, plausibility: false}}}}")
    with Store(tmp_path / "f.duckdb") as store:
        s = simulate(parse_protocol(fallback), store, 100)
        plans = _shown(store, "realism")
        details = [json.loads(r["detail_json"]) for r in store.query(
            "SELECT detail_json FROM events WHERE event = 'plans'")]
    filled = [d for d in details if d["fallback"] > 0]
    assert filled, "the pool arm falls short for some participants"
    assert sum(d["fallback"] for d in details) == sum(p.selection == "fallback" for p in plans)
    assert {p.method for p in plans if p.selection == "fallback"} == {"oracle"}
    assert all(d["reason"] for d in filled)  # the arm's own shortfall stays visible
    assert any(r["fallback"] > 0 for r in s["plan_shortfalls"])

    message = "Sorry, no plan fits you; thank you."
    end = one_arm.replace("distance: l1_profile}", "distance: l1_profile,\n        shortfall: "
                          f"{{then: end, message: '{message}'}}}}")
    with Store(tmp_path / "e.duckdb") as store:
        from protocols.running.session import Study

        study = Study(parse_protocol(end), store)
        simulate(study.protocol, store, 50)
        ended = store.query("SELECT participant_id FROM participants WHERE status = 'no_plans'")
        assert ended, "some pool participants fall short"
        page = study.current_page(ended[0]["participant_id"])
        assert page.kind == "end" and page.payload.text == message
        assert page.payload.reason == "no_plans"
        n_rated = store.query("SELECT count(*) AS n FROM ratings r JOIN participants p USING "
                              "(study_id, participant_id) WHERE p.status = 'no_plans'")[0]["n"]
        assert n_rated == 0


def test_a_fallback_never_repeats_a_plan_the_person_already_sees(tmp_path) -> None:
    """Falling back to the arm's own method (the Oracle filling the Oracle's gap) adds
    nothing a person already has on screen. The arm's coarse grid (2 bins) leaves most
    people short of three plans, so the fallback (6 bins, whose grid holds the coarse one's
    points) runs for most of them."""
    from protocols.definition.schema import parse_protocol

    text = PILOT.replace("  - {id: pool, method: pool, options: {donors: 10}}\n", "").replace(
        "options: {bins: 6, plausibility: false}}\n", "options: {bins: 2, plausibility: "
        "false}}\n").replace(
        "distance: l1_profile}",
        "distance: l1_profile,\n        shortfall: {then: fallback, fallback: {method: oracle, "
        "options: {bins: 6, plausibility: false}}}}")
    with Store(tmp_path / "o.duckdb") as store:
        simulate(parse_protocol(text), store, 60)
        plans = _shown(store, "realism")
        filled = [json.loads(r["detail_json"])["fallback"] for r in store.query(
            "SELECT detail_json FROM events WHERE event = 'plans'")]
    assert sum(n > 0 for n in filled) >= 20  # the fallback really filled gaps
    sc = get_scenario("loan")
    seen = set()
    for p in plans:
        key = (p.participant_id, tuple(realism.displayed(
            sc, torch.tensor(p.array("x_cf"))[None]).flatten().tolist()))
        assert key not in seen, p.plan_id
        seen.add(key)


def test_a_participant_with_no_plan_at_all_is_told_why_on_the_debrief(tmp_path) -> None:
    """``then: fewer`` and nothing found: the debrief carries the shortfall's message (the
    participant would otherwise go from "rejected" to "thank you" without a plan or a word);
    a participant who rated plans gets the plain debrief."""
    from protocols.definition.schema import parse_protocol
    from protocols.running.session import Study

    message = "No plan fits the profile you entered; thank you."
    text = PILOT.replace("  - {id: oracle, method: oracle, options: {bins: 6, plausibility: "
                         "false}}\n", "").replace("donors: 10", "donors: 1").replace(
        "distance: l1_profile}", "distance: l1_profile,\n        shortfall: "
        f"{{then: fewer, message: '{message}'}}}}")
    with Store(tmp_path / "n.duckdb") as store:
        study = Study(parse_protocol(text), store)
        simulate(study.protocol, store, 60)
        rows = store.query("SELECT p.participant_id, p.status, count(pl.plan_id) AS n FROM "
                           "participants p LEFT JOIN plans pl USING (study_id, participant_id) "
                           "GROUP BY ALL")
        done = [r for r in rows if r["status"] == "complete"]
        none = [r for r in done if r["n"] == 0]
        some = [r for r in done if r["n"] > 0]
        assert none and some, "one pool donor leaves some participants without any plan"
        for r, expected in ((none[0], message), (some[0], None)):
            page = study.current_page(r["participant_id"])
            assert page.kind == "debrief" and page.payload.no_plans == expected
