"""The plan's path: one planning pass hands the page display-ready plans (ShownPlan), measured
once against the stated profile, and a resumed participant's plans are read back from the
store without rebuilding a batch of the engine."""

from __future__ import annotations

import numpy as np
import pytest

from data.store import Store
from engine.recourse import RecourseBatch, RecourseContext
from protocols.running.session import Study


def _to_plan_1(study: Study, answer) -> str:
    s = study.start()
    page = s.current_page()
    while page.id != "plan-1":
        page = s.submit(page.id, answer(page))
    return s.token


def test_a_resumed_plan_is_the_plan_that_was_shown(tmp_path, small_protocol, answer,
                                                   monkeypatch) -> None:
    path = tmp_path / "study.duckdb"
    with Store(path) as store:
        study = Study(small_protocol, store)
        token = _to_plan_1(study, answer)
        pid = study.resume(token).participant_id
        fresh = study.participant(pid).plans
        first_page = study.current_page(pid)

    def no_batch(*args, **kwargs):
        raise AssertionError("resume rebuilt a batch of the engine")

    monkeypatch.setattr(RecourseBatch, "from_records", classmethod(no_batch))
    monkeypatch.setattr(RecourseContext, "evaluate", no_batch)
    with Store(path) as store:
        study = Study(small_protocol, store)
        resumed = study.participant(pid).plans
        assert study.resume(token).current_page() == first_page
    assert len(fresh) == len(resumed) == 3
    for a, b in zip(fresh, resumed, strict=True):
        assert a.stored("s", None) == b.stored("s", None)
        assert a.rows == b.rows and a.values == b.values
        assert a.action_mask.tolist() == b.action_mask.tolist()
        assert any(r.kind == "action" for r in a.rows)


def test_a_personalized_arms_plans_are_measured_against_the_stated_profile(
        store, small_protocol, answer) -> None:
    """The arm saw the stated profile, so its own evaluation is the measure (no second
    evaluation): the same values as evaluating the shown plan against that profile."""
    assert all(arm.personalized for arm in small_protocol.arms)
    study = Study(small_protocol, store)
    pid = study.resume(_to_plan_1(study, answer)).participant_id
    p = study.participant(pid)
    context = study.resources.context(small_protocol.arm(p.arm))
    names = study.scenario.feature_names
    for plan in p.plans:
        x = plan.array("x")
        values = np.array([plan.actions.get(n, x[j]) for j, n in enumerate(names)])
        again = context.evaluate(plan.method, x[None], plan.action_mask[None], values[None],
                                 p.stated, x_cf=plan.array("x_cf")[None])
        for name, value in plan.values.items():
            expected = again.value(name, 0)
            if isinstance(value, float):
                assert value == pytest.approx(expected, rel=1e-12, abs=1e-12), name
            else:
                assert value == expected, name
        assert np.isfinite(plan.value("satisfaction"))
