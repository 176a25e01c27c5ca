"""Power analysis pieces without Ray: effect names, detection rules on posteriors whose
answer we know, Monte Carlo intervals, the task plan, the results file (a line cut short by
a kill), the power curve, and the compiled-once refits really fitting each new study."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

from analysis import power
from analysis.models import FAMILIES, prepare
from analysis.power_run import ResultsLog
from analysis.refit import Refitter
from analysis.simdata import simulate_ratings
from engine.synthetic.rating_model import RatingBehaviour


def test_effect_names_follow_what_the_model_estimates():
    names = set(power.effects(["oracle", "carma", "icarma"], ["satisfaction", "violation"]))
    assert {"action.distance", "acceptance.satisfaction", "action.violation",
            "action.arm.icarma-carma", "acceptance.arm.oracle-carma"} <= names
    assert set(power.effects(["pool"], [])) == {"acceptance.distance", "action.distance"}
    with pytest.raises(power.PowerInputError, match="unknown effect 'action.cost'.*"
                       "action.distance"):
        power.parse_effect("action.cost", power.effects(["pool"], []))


@pytest.fixture(scope="module")
def data():
    return prepare(simulate_ratings(20, 5, seed=1), "action", "l1_profile")


def _posterior(data, *, delta=None, beta=None, draws=2000):
    k = data.basis.k - 1
    rng = np.random.default_rng(0)
    if delta is None:
        delta = rng.normal(0, 0.05, (draws, k))
    ds = {"delta_f": (("chain", "draw", "knot"), delta.reshape(1, draws, k))}
    if beta is not None:
        ds["beta"] = (("chain", "draw", "term"), beta.reshape(1, draws, -1))
    return xr.Dataset(ds, coords={"term": list(data.terms)})


def test_coefficient_detected_when_its_interval_excludes_zero(data):
    spec = power.PowerSpec(power.Effect("action.satisfaction", "action", "satisfaction"))
    rng = np.random.default_rng(1)
    clear = np.column_stack([rng.normal(0.8, 0.2, 2000), rng.normal(0, 1, 2000)])
    vague = np.column_stack([rng.normal(0.2, 0.3, 2000), rng.normal(0, 1, 2000)])
    hit = power.detect(spec, data, _posterior(data, beta=clear))
    assert hit.detected and 0.7 < hit.estimate < 0.9 and hit.lo > 0
    assert not power.detect(spec, data, _posterior(data, beta=vague)).detected


def test_smooth_band_is_simultaneous(data):
    spec = power.PowerSpec(power.Effect("action.distance", "action", "distance"))
    rng = np.random.default_rng(2)
    k = data.basis.k - 1
    falling = rng.normal(-0.6, 0.05, (2000, k))  # every increment down: f clearly decreasing
    hit = power.detect(spec, data, _posterior(data, delta=falling))
    assert hit.detected and hit.estimate < 0 and hit.hi < 0
    # flat truth, posterior noise only: a simultaneous band holds 0 (pointwise bands would
    # leave it at some of the 60 distances in a good share of such posteriors)
    flat = [power.detect(spec, data, _posterior(data, delta=rng.normal(0, 0.3, (2000, k))))
            for _ in range(20)]
    assert sum(d.detected for d in flat) == 0
    contrast = power.PowerSpec(spec.effect, rule="contrast")
    assert power.detect(contrast, data, _posterior(data, delta=falling)).detected


def test_distance_range_is_checked(data):
    effect = power.Effect("action.distance", "action", "distance")
    with pytest.raises(power.PowerInputError, match="two increasing numbers"):
        power.PowerSpec(effect, distance_range=(0.5, 0.1))
    far = power.PowerSpec(effect, distance_range=(5.0, 6.0))
    with pytest.raises(power.PowerInputError, match="no observed distance"):
        power.detect(far, data, _posterior(data))


def test_clopper_pearson_matches_the_exact_binomial_interval():
    assert power.clopper_pearson(0, 10) == pytest.approx((0.0, 0.30850), abs=1e-4)
    assert power.clopper_pearson(5, 10) == pytest.approx((0.18709, 0.81291), abs=1e-4)
    assert power.clopper_pearson(40, 40)[1] == 1.0


def test_plan_is_simulation_major_with_paired_seeds():
    tasks = power.plan_tasks([200, 60], 3, null=False, seed=4)
    assert [(t.participants, t.sim) for t in tasks[:3]] == [(60, 0), (200, 0), (60, 1)]
    nulls = power.plan_tasks([200, 60], 3, null=True, seed=4)
    assert [t.seed for t in tasks] == [t.seed for t in nulls]  # the same studies, effect off
    assert len({t.seed for t in tasks}) == 6 and len({t.key for t in tasks + nulls}) == 12
    with pytest.raises(power.PowerInputError, match="--sims must be at least 1"):
        power.plan_tasks([60], 0, null=False, seed=0)


def test_results_log_survives_a_line_cut_short(tmp_path):
    log = ResultsLog(tmp_path / "results.jsonl")
    log.append({"key": "effect-60-0", "fingerprint": "a", "detected": True})
    with open(log.path, "a") as f:
        f.write('{"key": "effect-60-1", "fingerp')  # killed mid-write
    log.append({"key": "effect-60-2", "fingerprint": "a", "detected": False})
    log.append({"key": "effect-60-3", "fingerprint": "a", "error": "boom"})
    log.append({"key": "effect-60-4", "fingerprint": "b", "detected": False})
    assert set(log.finished("a")) == {"effect-60-0", "effect-60-2"}
    lines = log.path.read_text().splitlines()
    assert json.loads(lines[2])["key"] == "effect-60-2"  # appended on its own line


def _record(n, sim, detected, null=False, rhat=1.0):
    return {"key": f"x-{n}-{sim}", "participants": n, "sim": sim, "null": null,
            "detected": detected, "estimate": 1.0, "max_rhat": rhat}


def test_curve_power_rates_and_smallest_n():
    records = ([_record(60, s, s < 5) for s in range(10)]
               + [_record(120, s, s < 9, rhat=1.2 if s == 0 else 1.0) for s in range(10)]
               + [_record(60, s, s == 0, null=True) for s in range(10)])
    doc = power.curve(records, [60, 120], 0.8)
    n60, n120 = doc["rows"]
    assert n60["power"]["rate"] == 0.5 and n120["power"]["rate"] == 0.9
    assert n120["power"]["rhat_above_1_05"] == 1
    assert n60["false_positive"]["rate"] == 0.1 and n120["false_positive"] is None
    assert doc["smallest_n"] == 120 and doc["smallest_n_lower_bound"] is None
    assert doc["false_positive_rate"]["sims"] == 10


def _with_satisfaction(k: float, seed: int, participants: int = 12):
    b = RatingBehaviour.reference()
    b = type(b)(acceptance=b.acceptance, action=type(b.action)(
        **{**b.action.__dict__, "satisfaction": k}))
    return prepare(simulate_ratings(participants, 6, behaviour=b, seed=seed), "action",
                   "l1_profile")


# whole power studies fitted (tens of seconds each; nutpie also compiles through numba):
# make test-e2e for PyMC, make test-slow for nutpie
@pytest.mark.parametrize("backend", [pytest.param("pymc", marks=pytest.mark.e2e),
                                     pytest.param("nutpie", marks=pytest.mark.slow)])
def test_refitter_compiles_once_and_fits_each_new_study(backend):
    """Two studies of one shape (the second with fewer ratings) share a compiled model, and
    each fit answers its own data: satisfaction +4 then -4 on the logit scale."""
    refitter = Refitter(backend=backend, draws=150, tune=150, chains=2)
    up = _with_satisfaction(4.0, seed=1)
    down = _with_satisfaction(-4.0, seed=2)
    down.y, down.d, down.participant, down.arm = (down.y[:-4], down.d[:-4],
                                                  down.participant[:-4], down.arm[:-4])
    down.terms = {t: v[:-4] for t, v in down.terms.items()}
    first, second = refitter.fit(up, seed=0), refitter.fit(down, seed=0)
    assert refitter.compiles == 1 and first.compile_seconds > 0 == second.compile_seconds
    beta = [float(f.idata.posterior["beta"].sel(term="satisfaction").mean())
            for f in (first, second)]
    assert beta[0] > 1.5 and beta[1] < -1.5
    if backend == "pymc":  # (nutpie's compilation is the slow one: once is enough here)
        refitter.fit(_with_satisfaction(4.0, seed=3, participants=13), seed=0)
        assert refitter.compiles == 2  # another number of participants: another shape


@pytest.mark.slow  # several studies fitted; the refitter test above keeps one compile covered
def test_studies_padded_to_their_n_share_one_compiled_model():
    """Simulated studies of one N keep different numbers of participants (screening,
    exclusions); padded to N they are one shape: one compilation, each fit still its own
    data, and the padding participants (no ratings) are left at their N(0, 1) prior."""
    from analysis.refit import padded

    full = _with_satisfaction(4.0, seed=1, participants=20)
    fewer = _with_satisfaction(-4.0, seed=2, participants=13)
    assert padded(full, 20) is full
    p = padded(fewer, 20)
    assert len(p.participants) == 20 and p.participants[:13] == fewer.participants
    assert np.array_equal(p.participant, fewer.participant) and p.n == fewer.n
    refitter = Refitter(backend="pymc", draws=300, tune=300, chains=2)
    first = refitter.fit(full, seed=0, pad_participants=20)
    second = refitter.fit(fewer, seed=0, pad_participants=20)
    assert refitter.compiles == 1 and second.compile_seconds == 0
    beta = [float(f.idata.posterior["beta"].sel(term="satisfaction").mean())
            for f in (first, second)]
    assert beta[0] > 1.5 and beta[1] < -1.5
    z = second.idata.posterior["z_u"].isel(participant=slice(13, None)).values.ravel()
    assert abs(z.mean()) < 0.15 and 0.85 < z.std() < 1.15


@pytest.mark.parametrize("arms", [("pool",), ("a", "b", "c")])
@pytest.mark.parametrize("likelihood", list(FAMILIES))
def test_model_arrays_are_exactly_the_data_the_model_uses(arms, likelihood):
    """nutpie's compiled model swaps only data its log-density reads (an unused container,
    such as the arm index of a one-arm study, is a KeyError there)."""
    from pytensor.graph.traversal import ancestors

    from analysis.models import build_model, model_arrays

    data = prepare(simulate_ratings(8, 4, seed=3, arms=arms), "action", "l1_profile")
    model = build_model(data, likelihood, shared=True)
    used = {v.name for v in ancestors([model.logp()]) if v in model.data_vars}
    assert used == set(model_arrays(data, likelihood))
    assert ("arm_index" in used) == (len(arms) > 1)
