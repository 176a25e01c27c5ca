"""The stored reproduction runs (docs/reproductions/data) describe what the current code runs:
a run whose config lacks an option the code records, or that was made with an older default,
is stale (engine.papers.stored_runs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.papers.stored_runs import recorded_defaults, stale_reasons

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "docs" / "reproductions" / "data"
# hare-budget.json as stored before the HARE options keep_incumbent (then off by default),
# iterations_reading, ground_truth and failed_plans were recorded: the run the check must catch
STALE = Path(__file__).with_name("fixtures") / "stale-hare-budget.json"


def _runs(path: Path) -> list[dict]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return doc.get("targets", [doc])


@pytest.mark.parametrize("path", sorted(DATA.glob("*.json")), ids=lambda p: p.name)
def test_every_stored_run_is_current(path: Path) -> None:
    for run in _runs(path):
        assert stale_reasons(run) == [], (
            f"{path.name} is stale: run its command again (config.command) and "
            "`recourse-study docs generate`")


def test_the_old_budget_run_is_stale_for_each_reason() -> None:
    (run,) = _runs(STALE)
    reasons = stale_reasons(run)
    assert len(reasons) == 4
    assert reasons[0].startswith("made with keep_incumbent = False, but the current default "
                                 "is True")
    assert any("lacks 'iterations_reading'" in r for r in reasons)
    assert any("lacks 'ground_truth'" in r for r in reasons)
    assert any("lacks 'failed_plans'" in r for r in reasons)


def test_a_named_variant_is_not_stale_and_an_unnamed_one_is() -> None:
    (run,) = _runs(STALE)
    config = {**run["config"], **recorded_defaults("hare-budget")}
    assert stale_reasons({**run, "config": config}) == []
    variant = {**config, "keep_incumbent": False, "gamma_schedule": "halve"}
    named = "recourse-study reproduce hare-budget --fast --drop-incumbent --gamma-schedule halve"
    assert stale_reasons({**run, "config": {**variant, "command": named}}) == []
    reasons = stale_reasons({**run, "config": {**variant, "command": named.replace(
        " --gamma-schedule halve", "")}})
    assert reasons == ["made with gamma_schedule = 'halve', but the current default is "
                       "'paper' and its command names no --gamma-schedule"]


def test_the_defaults_a_run_records_are_the_codes() -> None:
    from engine.recourse.hare.config import HareConfig

    hare = recorded_defaults("hare-table1")
    assert hare["keep_incumbent"] is HareConfig.keep_incumbent
    assert hare["iterations_reading"] == HareConfig.iterations_reading
    assert recorded_defaults("icarma-table1")["shift_bounds"] == [-4.0, 5.0]
    # GMSC's clamp is CARMA's rule under our flow (CARMA's bounds are Loan's)
    assert recorded_defaults("icarma-table1", "gmsc-causal")["shift_bounds"] == "flow"
    assert recorded_defaults("icarma-fairness") == {}
