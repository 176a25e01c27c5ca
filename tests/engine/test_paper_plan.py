"""The training estimate of the paper's models (engine.papers.icarma.plan)."""

from __future__ import annotations

import pytest

from engine.artifact_plan import format_duration
from engine.papers.icarma.plan import MEMBER_SHARE, STEP_SECONDS, SetupPlan, describe_plan


def test_seeds_trained_together_cost_one_step_plus_a_share_per_further_seed():
    plan = SetupPlan("ranking", "constant", tuple(range(1000, 11000, 1000)), 450, 37)
    steps = 450 * 37
    assert plan.seconds(ensemble=False) == pytest.approx(steps * STEP_SECONDS * 10)
    assert plan.seconds() == pytest.approx(steps * STEP_SECONDS * (1 + 9 * MEMBER_SHARE))
    assert SetupPlan("likert", "convex", (), 900, 37).seconds() == 0.0
    text = describe_plan([plan, SetupPlan("likert", "convex", (1000,), 900, 37)])
    assert "ranking/constant (10 seeds)" in text and "likert/convex (1 seed)" in text
    assert describe_plan([SetupPlan("likert", "convex", (), 900, 37)]).startswith("every")


def test_durations_read_in_the_unit_that_fits():
    assert format_duration(42) == "42 s"
    assert format_duration(600) == "10 min"
    assert format_duration(3 * 3600) == "3.0 h"
