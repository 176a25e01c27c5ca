"""analysis.same_estimates: two summaries of one study compared within Monte Carlo error."""

from __future__ import annotations

import copy

from analysis.same_estimates import compare_summaries, exact_differences


def _model(name: str, shift: float = 0.0, ess: float = 400.0) -> dict:
    # sd 1 for the coefficient (94% interval +- 1.881), sd 0.5 for the smooth (95%: +- 0.98)
    return {"name": name, "min_ess": ess,
            "coefficients": [{"name": "beta", "mean": 1.0 + shift, "lo": 1.0 + shift - 1.881,
                              "hi": 1.0 + shift + 1.881}],
            "smooth": [{"d": 0.0, "mean": 0.2, "lo": 0.2 - 0.98, "hi": 0.2 + 0.98}],
            "loo": {"elpd_loo": -100.0, "se": 10.0}}


def _summary(*models: dict) -> dict:
    return {"models": list(models), "truth_vs_recovered": None, "mgcv": None}


def test_a_shift_within_monte_carlo_error_is_the_same_and_beyond_it_differs():
    # MCSE of each run's mean: 1 / sqrt(400) = 0.05; of their difference 0.0707
    near = compare_summaries(_summary(_model("m")), _summary(_model("m", shift=0.2)))
    assert near["same"] and abs(near["models"][0]["max_abs_z"] - 0.2 / 0.0707) < 0.01
    far = compare_summaries(_summary(_model("m")), _summary(_model("m", shift=0.3)))
    assert not far["same"] and far["models"][0]["worst"] == "beta"
    # fewer effective draws: a larger Monte Carlo error, the same shift is within it
    assert compare_summaries(_summary(_model("m", ess=100)),
                             _summary(_model("m", shift=0.3, ess=100)))["same"]


def test_a_model_missing_from_one_run_or_a_changed_verdict_differs():
    assert compare_summaries(_summary(_model("a"), _model("b")),
                             _summary(_model("a")))["missing"] == ["b"]
    truth = {"outcomes": [{"outcome": "action", "recovered": True,
                           "effects": [{"term": "violation", "covered": True}]}]}
    a = {**_summary(_model("m")), "truth_vs_recovered": truth}
    b = copy.deepcopy(a)
    assert compare_summaries(a, b)["recovery_same"] is True
    b["truth_vs_recovered"]["outcomes"][0]["effects"][0]["covered"] = False
    assert not compare_summaries(a, b)["same"]


def test_mgcv_must_agree_to_rounding():
    row = {"model": "Model-1", "edf": 2.5, "F": 10.0, "p": 0.001}
    a = {**_summary(_model("m")), "mgcv": {"status": "fitted", "table_s2": [row]}}
    b = copy.deepcopy(a)
    b["mgcv"]["table_s2"][0]["F"] = 10.0 * (1 + 1e-9)
    assert compare_summaries(a, b)["same"]
    b["mgcv"]["table_s2"][0]["F"] = 10.1
    found = compare_summaries(a, b)
    assert not found["same"] and abs(found["mgcv_max_rel_diff"] - 0.1 / 10.1) < 1e-12


def test_exact_differences_name_every_changed_value_but_the_runs_own():
    a = {"models": [{"name": "m", "seconds": 1.0, "coefficients": [{"mean": 0.3}, {"mean": 1}]}],
         "fingerprint": "x", "rhat": float("nan"), "loo": {"acceptance": [1, 2]}}
    b = {"models": [{"name": "m", "seconds": 9.0,
                     "coefficients": [{"mean": 0.1 + 0.2}, {"mean": 1}]}],
         "fingerprint": "y", "rhat": float("nan"), "loo": {"acceptance": [1]}, "new": 1}
    assert exact_differences(a, a) == []
    assert exact_differences(a, b) == ["models[0].coefficients[0].mean",
                                       "loo.acceptance (length 2 != 1)", "new"]
