"""preference_satisfaction and preference_violation (engine.metrics)."""

from __future__ import annotations

import math

import torch

from engine import metrics
from engine.preferences import profiles_from_elicitation
from engine.scenarios import get_scenario


def _profiles(answers, scheme="ranking"):
    sc = get_scenario("loan")
    return sc, profiles_from_elicitation(sc.feature_names, sc.actionable, answers, scheme)


def _mask(sc, *names):
    m = torch.zeros(1, sc.d, dtype=torch.bool)
    for n in names:
        m[0, sc.index(n)] = True
    return m


def test_satisfaction_is_one_minus_mean_relative_difficulty() -> None:
    sc, prof = _profiles([{"income": 1, "savings": 2, "loan_amount": 3, "loan_duration": None}])
    # ranks 1, 2, 3 of K = 3 -> r = 0, 0.5, 1
    assert float(metrics.preference_satisfaction(_mask(sc, "income"), prof)[0]) == 1.0
    assert float(metrics.preference_satisfaction(_mask(sc, "loan_amount"), prof)[0]) == 0.0
    both = metrics.preference_satisfaction(_mask(sc, "income", "savings"), prof)
    assert math.isclose(float(both[0]), 0.75)
    # a feature outside the stated set does not enter the mean (it is a violation)
    mixed = _mask(sc, "income", "loan_duration")
    assert float(metrics.preference_satisfaction(mixed, prof)[0]) == 1.0
    assert float(metrics.preference_violation(mixed, prof.hard_mask)[0]) == 1.0
    assert float(metrics.preference_violation(_mask(sc, "income"), prof.hard_mask)[0]) == 0.0
    only_bad = _mask(sc, "loan_duration")
    assert float(metrics.preference_satisfaction(only_bad, prof)[0]) == 0.0


def test_binary_and_missing_elicitation() -> None:
    sc, prof = _profiles([{"income": 1, "savings": 1}], "binary")
    assert float(metrics.preference_satisfaction(_mask(sc, "income", "savings"), prof)[0]) == 1.0
    m = _mask(sc, "income").repeat(3, 1)
    assert torch.isnan(metrics.preference_satisfaction(m, None)).all()
    assert torch.isnan(metrics.preference_violation(m, None)).all()


def test_a_batch_of_plans_and_people_row_by_row() -> None:
    """Two people, two plans: each row uses its own person's ranks (no mixing across rows)."""
    sc, prof = _profiles([{"income": 1, "savings": 2, "loan_amount": 3, "loan_duration": None},
                          {"income": 3, "savings": 1, "loan_amount": 2, "loan_duration": 4}])
    mask = torch.cat([_mask(sc, "income", "savings"), _mask(sc, "income", "loan_duration")])
    sat = metrics.preference_satisfaction(mask, prof)
    assert sat.dtype == torch.float64 and sat.shape == (2,)
    # person 1: r = 0, 0.5 -> 0.75; person 2 (K = 4): income r = 2/3, duration r = 1
    assert sat.tolist() == [0.75, 1 - (2 / 3 + 1) / 2]
    vio = metrics.preference_violation(mask, prof.hard_mask)
    assert vio.dtype == torch.float64 and vio.tolist() == [0.0, 0.0]
    none = metrics.preference_satisfaction(mask, None)
    assert none.dtype == torch.float64 and none.shape == (2,)
    none_v = metrics.preference_violation(mask, None)
    assert none_v.dtype == torch.float64 and none_v.shape == (2,)
    import pytest

    with pytest.raises(ValueError, match=r"^3 action masks but 2 profiles$"):
        metrics.preference_satisfaction(mask.repeat(2, 1)[:3], prof)
