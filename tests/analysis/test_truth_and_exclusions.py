"""Truth vs recovered (analysis.truth) and exclusions (analysis.exclusions), on results whose
answer we know."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.exclusions import apply_exclusions, by_arm, uneven
from analysis.families import Coefficient
from analysis.fit import Diagnostics
from analysis.pipeline import Analysis
from analysis.report import exclusions_section
from analysis.results import ModelResult, ModelSpec
from analysis.truth import compare
from engine.synthetic.rating_model import (
    DEFAULT_CUTPOINTS,
    OutcomeModel,
    RatingBehaviour,
    from_ratings,
)


def _result(outcome: str, smooth: pd.DataFrame, cutpoints: np.ndarray,
            effects: dict[str, tuple[float, float, float]]) -> ModelResult:
    coefs = [Coefficient(f"cutpoint[{k + 1}]", "cutpoint", float(c), c, c)
             for k, c in enumerate(cutpoints)]
    coefs += [Coefficient(t, "effect", m, lo, hi) for t, (m, lo, hi) in effects.items()]
    return ModelResult(ModelSpec(outcome, "l1_profile", "ordinal"), None,  # type: ignore[arg-type]
                       Diagnostics(1.0, 1000.0, 1000.0, 0), 1.0, "pymc", smooth, coefs)


def _truth() -> RatingBehaviour:
    a, curve = from_ratings(4.5, 2.0, 0.15)
    ref = RatingBehaviour.reference()
    action = OutcomeModel(intercept=a, curve=curve, satisfaction=0.8, violation=1.5)
    return RatingBehaviour(acceptance=ref.acceptance, action=action)


def test_a_fit_that_matches_the_truth_is_recovered_and_a_flat_one_is_not() -> None:
    truth = _truth()
    d = np.linspace(0.0, 0.9, 40)
    latent = truth.action.intercept + truth.action.curve(d)
    centre = latent.mean()  # the model's smooth is centred; its cutpoints take the level
    band = 0.2
    smooth = pd.DataFrame({"d": d, "mean": latent - centre, "lo": latent - centre - band,
                           "hi": latent - centre + band})
    cuts = np.asarray(DEFAULT_CUTPOINTS) - centre
    good = _result("action", smooth, cuts, {"satisfaction": (0.7, 0.3, 1.1),
                                            "violation": (-0.2, -0.6, 0.2)})
    out = compare([good], truth)
    row = out["outcomes"][0]
    assert row["truth_shape"] == "falls" and row["recovered"]
    curve = pd.DataFrame(row["curve"])
    assert np.allclose(curve["mean"], curve["truth"], atol=1e-9)  # same quantity, same scale
    assert row["true_change"] == pytest.approx(float(truth.action.typical_curve(d[:1])[0]
                                                      - truth.action.typical_curve(d[-1:])[0]))
    cover = {e["term"]: e["covered"] for e in row["effects"]}
    assert cover == {"satisfaction": True, "violation": False}  # truth -1.5 not in [-0.6, 0.2]
    flat = smooth.assign(mean=0.0, lo=-band, hi=band)
    row = compare([_result("action", flat, cuts, {})], truth)["outcomes"][0]
    assert not row["recovered"] and row["recovered_change"] == pytest.approx(0.0)


def test_a_flat_truth_is_recovered_by_a_band_around_a_constant() -> None:
    truth = RatingBehaviour.reference()  # acceptance is flat
    d = np.linspace(0, 0.8, 30)
    smooth = pd.DataFrame({"d": d, "mean": 0.0, "lo": -0.3, "hi": 0.3})
    row = compare([_result("acceptance", smooth, np.asarray(DEFAULT_CUTPOINTS), {})],
                  truth)["outcomes"][0]
    assert row["truth_shape"] == "flat" and row["recovered"]
    falling = smooth.assign(mean=-3 * d, lo=-3 * d - 0.1, hi=-3 * d + 0.1)
    row = compare([_result("acceptance", falling, np.asarray(DEFAULT_CUTPOINTS), {})],
                  truth)["outcomes"][0]
    assert not row["recovered"]


def test_exclusions_follow_the_rules() -> None:
    ratings = pd.DataFrame({
        "participant_id": ["a", "a", "b", "b", "c", "d", "d"],
        "attention_passed": [True, True, False, False, None, None, None],
        "acceptance": [4] * 7,
    })
    kept, rec = apply_exclusions(ratings, failed_attention=True)
    assert sorted(kept["participant_id"].unique()) == ["a", "c", "d"]  # null is never excluded
    assert rec["counts"] == {"failed_attention": 1, "fewer_plans": 0}
    kept, rec = apply_exclusions(ratings, failed_attention=False,
                                 expected={"a": 2, "b": 2, "c": 2, "d": 2})
    assert sorted(kept["participant_id"].unique()) == ["a", "b", "d"]
    assert rec["excluded"] == [{"participant_id": "c", "reason": "fewer_plans"}]
    kept, rec = apply_exclusions(ratings)
    assert len(kept) == len(ratings) and rec["excluded"] == []
    flagged = {"a": ("speeder", "straightliner"), "b": ("speeder",), "d": ("straightliner",)}
    kept, rec = apply_exclusions(ratings, failed_attention=True, flagged=flagged,
                                 flag_rules=("speeder", "straightliner"))
    assert sorted(kept["participant_id"].unique()) == ["c"]
    # each participant under the first rule that drops them: b failed attention first
    assert rec["excluded"] == [{"participant_id": "a", "reason": "speeder"},
                               {"participant_id": "b", "reason": "failed_attention"},
                               {"participant_id": "d", "reason": "straightliner"}]
    assert rec["counts"] == {"failed_attention": 1, "fewer_plans": 0, "speeder": 1,
                             "straightliner": 1}
    assert rec["ratings_excluded"] == {"failed_attention": 2, "fewer_plans": 0, "speeder": 2,
                                       "straightliner": 2, "impossible_items": 0}
    kept, rec = apply_exclusions(ratings, flagged=flagged, flag_rules=("straightliner",))
    assert sorted(kept["participant_id"].unique()) == ["b", "c"]
    assert rec["rules"]["straightliner"] and not rec["rules"]["speeder"]


def test_impossible_items_leave_out_ratings_and_are_counted() -> None:
    """The reference study's rule: a rating with an item marked impossible is left out (the
    participant's other ratings stay); each rule's dropped ratings are counted."""
    ratings = pd.DataFrame({
        "participant_id": ["a", "a", "b", "b", "c"],
        "attention_passed": [True, True, False, False, True],
        "impossible": [False, True, True, False, None],
        "acceptance": [4] * 5,
    })
    kept, rec = apply_exclusions(ratings, impossible_items=True)
    assert list(kept.index) == [0, 3, 4]
    assert rec["ratings_excluded"]["impossible_items"] == 2
    assert (rec["n_ratings_before"], rec["n_ratings_kept"]) == (5, 3)
    kept, rec = apply_exclusions(ratings, impossible_items=True, failed_attention=True)
    assert list(kept.index) == [0, 4]  # b's impossible rating counts under failed_attention
    assert rec["ratings_excluded"] == {"failed_attention": 2, "fewer_plans": 0,
                                       "impossible_items": 1}
    kept, rec = apply_exclusions(ratings)
    assert len(kept) == 5 and rec["ratings_excluded"]["impossible_items"] == 0


def _arm_ratings() -> pd.DataFrame:
    """Two arms of 10 ratings each: arm b has 4 impossible ratings (all of b0's and b1's),
    arm a 1."""
    return pd.DataFrame({
        "participant_id": [f"a{i // 2}" for i in range(10)] + ["b0", "b0"]
        + [f"b{1 + i // 2}" for i in range(8)],
        "arm": ["a"] * 10 + ["b"] * 10,
        "impossible": [True] + [False] * 9 + [True, True, True, True] + [False] * 6,
        "acceptance": [4] * 20,
    })


def test_exclusions_are_counted_per_arm_and_uneven_above_ten_points() -> None:
    ratings = _arm_ratings()
    kept, _ = apply_exclusions(ratings, impossible_items=True)
    rows = by_arm(ratings, kept)
    assert rows == [
        {"arm": "a", "ratings": 10, "excluded": 1, "rate": 10.0, "participants": 5,
         "participants_excluded": 0},
        {"arm": "b", "ratings": 10, "excluded": 4, "rate": 40.0, "participants": 5,
         "participants_excluded": 2}]  # b0 and b1 have no rating left
    assert uneven(rows)  # 30 points apart
    assert not uneven([{**rows[0], "rate": 10.0}, {**rows[1], "rate": 20.0}])  # exactly 10
    assert uneven([{**rows[0], "rate": 10.0}, {**rows[1], "rate": 20.1}])
    assert not uneven(rows[:1])  # one arm has nothing to differ from
    kept, _ = apply_exclusions(ratings)
    assert [r["rate"] for r in by_arm(ratings, kept)] == [0.0, 0.0]


def test_the_report_puts_intention_to_treat_beside_the_per_protocol_fit() -> None:
    """Uneven exclusions: the per-arm table, the warning, and each effect of the main model
    per protocol and on every rating side by side."""
    ratings = _arm_ratings()
    kept, record = apply_exclusions(ratings, impossible_items=True)
    record["by_arm"] = by_arm(ratings, kept)
    record["uneven"] = uneven(record["by_arm"])
    smooth = pd.DataFrame({"d": [0.0], "mean": [0.0], "lo": [0.0], "hi": [0.0]})
    cuts = np.zeros(6)
    pp = _result("acceptance", smooth, cuts, {"arm[b]": (0.50, 0.10, 0.90)})
    itt = _result("acceptance", smooth, cuts, {"arm[b]": (-0.20, -0.60, 0.20)})
    analysis = Analysis("s", kept, pd.DataFrame(), exclusions=record, itt_ratings=ratings)
    analysis.models, analysis.itt = [pp], [itt]
    section = exclusions_section(analysis)
    assert "unevenly" in section and "40.0" in section
    assert "0.50 [0.10, 0.90]" in section and "-0.20 [-0.60, 0.20]" in section
    assert f"{len(ratings)} ratings" in section
    summary = Analysis("s", kept, pd.DataFrame(), exclusions=record,
                       itt_ratings=ratings).intention_to_treat()
    assert summary is not None and (summary["n_ratings"], summary["n_participants"]) == (20, 10)
    even = Analysis("s", kept, pd.DataFrame(), exclusions={**record, "uneven": False})
    assert even.intention_to_treat() is None and "intention to treat" not in \
        exclusions_section(even).lower()
