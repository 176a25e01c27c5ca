"""Spline basis, data preparation, recourse table, and a small parameter recovery (nutpie,
short chains) of the ordinal model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.models import AnalysisDataError, basis_size, build_model, prepare
from analysis.recovery import RecoveryConfig, check_study
from analysis.simdata import simulate_ratings
from analysis.splines import SplineBasis
from analysis.tables import participants_by_kind, recorded, recourse_table
from engine.synthetic.rating_model import RatingBehaviour


def test_spline_basis_is_a_centred_partition_of_unity():
    d = np.random.default_rng(0).uniform(0, 0.8, 300)
    basis = SplineBasis.fit(d, k=8)
    np.testing.assert_allclose(basis.raw(d).sum(axis=1), 1.0)
    np.testing.assert_allclose(basis(d).mean(axis=0), 0.0, atol=1e-12)
    assert basis(np.array([-1.0, 5.0])).shape == (2, 8)  # clipped, not an error
    with pytest.raises(ValueError, match="k >= 4"):
        SplineBasis.fit(d, k=3)
    with pytest.raises(ValueError, match="finite"):
        SplineBasis.fit(np.array([0.1, np.nan]))


def test_prepare_checks_its_input_and_drops_missing_terms():
    df = simulate_ratings(10, 3, seed=1)
    with pytest.raises(AnalysisDataError, match="unknown distance"):
        prepare(df, "action", "l2")
    with pytest.raises(AnalysisDataError, match="unknown outcome"):
        prepare(df, "trust", "l1_profile")
    with pytest.raises(AnalysisDataError, match="too few ratings"):
        prepare(df.head(5), "action", "l1_profile")
    bad = df.copy()
    bad.loc[0, "action"] = 9
    with pytest.raises(AnalysisDataError, match="1..7"):
        prepare(bad, "action", "l1_profile")
    no_elicitation = df.assign(satisfaction=np.nan, violation=np.nan)
    data = prepare(no_elicitation, "action", "l1_profile")
    assert data.terms == {}
    model = build_model(data)
    assert "beta" not in model.named_vars and "gamma" in model.named_vars
    assert set(prepare(df, "action", "l1_profile").terms) == {"satisfaction", "violation"}


def test_prepare_keeps_each_column_as_it_is():
    """The arrays are the rows' values, in the rows' order: no sign, scale or shift."""
    df = simulate_ratings(12, 4, seed=5)
    df.loc[df.index[:3], "satisfaction"] = np.nan  # missing: 0 (no elicitation for them)
    data = prepare(df, "acceptance", "l1_profile")
    sat = df["satisfaction"].to_numpy(dtype=float)
    np.testing.assert_array_equal(data.terms["satisfaction"], np.where(np.isnan(sat), 0.0, sat))
    np.testing.assert_array_equal(data.terms["violation"], df["violation"].to_numpy(float))
    np.testing.assert_array_equal(data.y, df["acceptance"].to_numpy(int))
    np.testing.assert_array_equal(data.d, df["l1_profile"].to_numpy(float))
    assert data.d_centre == pytest.approx(df["l1_profile"].mean()) and data.n == len(df)
    assert [data.participants[i] for i in data.participant] == df["participant_id"].astype(
        str).tolist()
    assert data.arms == sorted(df["arm"].astype(str).unique())
    assert [data.arms[i] for i in data.arm] == df["arm"].astype(str).tolist()
    assert (data.outcome, data.distance) == ("acceptance", "l1_profile")
    with pytest.raises(AnalysisDataError, match="lack the columns"):
        prepare(df.drop(columns=["l1_profile"]), "acceptance", "l1_profile")
    constant = df.assign(violation=1.0)  # a term without variation is dropped
    assert set(prepare(constant, "acceptance", "l1_profile").terms) == {"satisfaction"}
    no_arm = prepare(df.drop(columns=["arm"]), "acceptance", "l1_profile")
    assert no_arm.arms == ["(none)"] and set(no_arm.arm) == {0}


def test_a_discrete_distance_gets_no_more_basis_functions_than_values():
    df = simulate_ratings(20, 5, seed=2)
    df["l0_profile"] = np.random.default_rng(2).integers(1, 5, len(df)).astype(float)  # 1..4
    assert basis_size(df["l0_profile"].to_numpy()) == 4
    assert basis_size(np.array([1.0, 2.0] * 10)) == 4  # never below a cubic basis
    assert basis_size(df["l1_profile"].to_numpy()) == 8
    assert prepare(df, "action", "l0_profile").basis.k == 4
    assert prepare(df, "action", "l1_profile").basis.k == 8
    model = build_model(prepare(df, "action", "l0_profile"))
    assert model.named_vars["z_f"].eval().shape == (3,)  # k - 1 non-centred increments


def test_recourse_table_by_arm():
    plans = pd.DataFrame({
        "arm": ["a", "a", "b"], "method": ["oracle", "oracle", "icarma"],
        "valid": [True, False, True], "plausible": [True, True, False],
        "cost": [0.2, 9.0, 0.4], "hap": [np.nan, 1.0, 0.0], "l0_actions": [1, 2, 2],
        "l1_actions": [0.1, 0.2, 0.3], "l0_profile": [2, 3, 3], "l1_profile": [0.2, 0.3, 0.4],
        "satisfaction": [1.0, 0.5, np.nan], "violation": [0.0, 1.0, np.nan]})
    t = recourse_table(plans).set_index("arm")
    assert t.loc["a", "validity"] == 0.5 and t.loc["a", "cost"] == pytest.approx(0.2)
    assert t.loc["a", "hap"] == 1.0 and np.isnan(t.loc["b", "satisfaction"])
    # a column the study lacks is "not recorded" (NaN), never an error
    assert recourse_table(plans.drop(columns=["cost"]))["cost"].isna().all()


def test_recourse_table_and_recorded_fields_of_imported_plans():
    """Imported plans have no validity, plausibility, cost, hap or method (the crash was
    'cannot convert float NaN to bool'), and maybe no arm."""
    plans = pd.DataFrame({
        "arm": [None, None], "method": ["imported", "imported"], "valid": [None, None],
        "plausible": [None, None], "cost": [np.nan, np.nan], "hap": [np.nan, np.nan],
        "l0_actions": [1, 3], "l1_actions": [0.1, 0.5], "l0_profile": [1, 3],
        "l1_profile": [0.1, 0.5], "satisfaction": [np.nan, np.nan], "violation": [1.0, 0.0]})
    t = recourse_table(plans)
    assert len(t) == 1 and t.loc[0, "arm"] is None and t.loc[0, "plans"] == 2
    assert t[["validity", "plausibility", "cost", "hap", "satisfaction"]].isna().all().all()
    assert t.loc[0, "l1_profile"] == pytest.approx(0.3) and t.loc[0, "violation"] == 0.5
    ratings = plans[["arm", "satisfaction", "violation"]].assign(
        participant_id=["p", "q"], source="imported")
    assert recorded(ratings, plans) == {
        "validity": 0, "plausibility": 0, "cost": 0, "hap": 0, "method": 0, "arm": 0,
        "satisfaction": 0, "violation": 2}
    assert participants_by_kind(ratings) == {"imported": 2}


@pytest.mark.slow  # PyMC sampling of two models: minutes (make test-slow)
def test_small_recovery_of_effects_and_shapes():
    """A small version of scripts/recovery_study.py: one study, short chains. Strong effects
    so that 120 participants identify them."""
    ref = RatingBehaviour.reference()
    behaviour = RatingBehaviour(
        acceptance=ref.acceptance,
        action=type(ref.action)(**{**ref.action.__dict__, "violation": 2.0}),
    )
    rows = check_study(behaviour, RecoveryConfig(participants=150, plans=5, draws=400, tune=400,
                                                 chains=2), seed=3)
    by = {(r["outcome"], r["check"]): r for r in rows}
    assert by[("acceptance", "flat")]["passed"]  # flat acceptance: band contains 0 everywhere
    assert by[("action", "falls then flat")]["mean"] > 0.5
    assert by[("action", "violation")]["hi"] < 0  # the violation penalty is found
    for (outcome, check), r in by.items():
        if check not in ("satisfaction", "violation", "sigma_u", "sigma_b"):
            continue
        # every 90% interval covers its truth (a fixed seed: deterministic) ...
        assert r["lo"] <= r["truth"] <= r["hi"], (outcome, check, r)
        # ... and a non-zero effect is recovered with its sign
        if r["truth"] != 0:
            assert np.sign(r["mean"]) == np.sign(r["truth"]), (outcome, check, r)


def test_prepare_limits_at_their_boundaries():
    from engine.metric_names import DISTANCES

    df = simulate_ratings(6, 5, seed=7)
    two = df[df["participant_id"].isin(df["participant_id"].unique()[:2])]  # 2 x 5 = 10 rows
    assert len(two) == 10 and prepare(two, "action", "l1_profile").n == 10
    with pytest.raises(AnalysisDataError, match=r"^too few ratings to fit a model: 9 rows from "
                       r"2 participants \(need at least 10 and 2\)$"):
        prepare(two.iloc[:9], "action", "l1_profile")
    one = df[df["participant_id"] == df["participant_id"].iloc[0]]
    many = pd.concat([one] * 3)  # 15 rows, one participant
    with pytest.raises(AnalysisDataError, match=r"15 rows from 1 participants"):
        prepare(many, "action", "l1_profile")
    with pytest.raises(AnalysisDataError, match=r"^unknown distance 'l2'; expected one of "
                       + ", ".join(DISTANCES) + "$"):
        prepare(df, "action", "l2")
    sevens = df.assign(action=7.0)  # floats on the scale: integers 1..7
    data = prepare(sevens, "action", "l1_profile")
    assert data.y.dtype.kind == "i" and set(data.y) == {7}
    with pytest.raises(AnalysisDataError, match=r"^action ratings must lie in 1\.\.7$"):
        prepare(df.assign(action=8), "action", "l1_profile")
    with pytest.raises(AnalysisDataError, match=r"1\.\.7"):
        prepare(df.assign(action=0), "action", "l1_profile")
    mixed = df.copy()
    mixed.loc[mixed.index[:5], "arm"] = None  # a rating without an arm: its own level
    data = prepare(mixed, "action", "l1_profile")
    assert "(none)" in data.arms and data.arms == sorted(data.arms)
    assert [data.arms[i] for i in data.arm[:5]] == ["(none)"] * 5
    assert prepare(df, "action", "l1_profile", k=5).basis.k == 5  # k reaches the basis
    # columns of Python objects (None for missing, ints for a discrete distance) are numbers
    obj = df.assign(satisfaction=[None if i % 4 == 0 else 0.5 + (i % 2) / 4
                                  for i in range(len(df))])
    obj["satisfaction"] = obj["satisfaction"].astype(object)
    obj["l0_profile"] = [1 + i % 3 for i in range(len(obj))]
    data = prepare(obj, "action", "l0_profile")
    assert data.terms["satisfaction"].dtype == float and data.terms["satisfaction"][0] == 0.0
    assert data.d.dtype == float and data.d_centre == pytest.approx(obj["l0_profile"].mean())


def test_sampler_defaults_resolve_per_backend():
    """Each backend's own draws and tuning steps unless given; the same target_accept; an
    ESS target of 400 when the draws are left to their default, none when they are given
    (a number of draws asked for is what is drawn), none at 0."""
    from analysis import fit

    assert fit.resolve("nutpie") == {"draws": 1000, "tune": 300, "target_accept": 0.95,
                                     "ess_target": 400}
    assert fit.resolve("pymc") == {"draws": 1000, "tune": 1000, "target_accept": 0.95,
                                   "ess_target": 400}
    assert fit.resolve("pymc", 200, 100, 0.9) == {"draws": 200, "tune": 100,
                                                  "target_accept": 0.9, "ess_target": None}
    assert fit.resolve("nutpie", ess_target=0)["ess_target"] is None
    assert fit.resolve("nutpie", 200, ess_target=300)["ess_target"] == 300
    with pytest.raises(ValueError, match="ESS target must be at least 1"):
        fit.resolve("nutpie", ess_target=-1)
    with pytest.raises(ValueError, match="unknown backend 'stan'"):
        fit.resolve("stan")
