"""The posterior's spread between power from a pilot and from the truth (analysis.pilot_band,
scripts/pilot_band.py): the curve's fall, the tercile strata, the band protocols and the
rate intervals."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from analysis.pilot_band import (
    compare,
    curve_fall,
    drop_for_fall,
    posterior_falls,
    rate_difference,
    stratum_of,
)
from analysis.power import parse_effect
from protocols.definition.schema import load_protocol
from study_app.power import protocol_effects, truth

_ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("pilot_band_script",
                                               _ROOT / "scripts" / "pilot_band.py")
assert _SPEC is not None and _SPEC.loader is not None
script = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(script)
EXAMPLE = _ROOT / "docs" / "examples" / "pilot-power.yaml"


def test_the_fall_is_the_curves_difference_and_drop_for_fall_inverts_it():
    lo, hi, scale = 0.11, 9.44, 2.97
    d = np.array([lo, hi])
    curve = -0.92 * (1 - np.exp(-d / scale))  # the synthetic f(d)
    assert curve_fall(0.92, scale, lo, hi) == pytest.approx(curve[0] - curve[1])
    for fall in (-1.1, 0.0, 0.42, 1.7):
        assert curve_fall(drop_for_fall(fall, scale, lo, hi), scale, lo, hi) == pytest.approx(fall)
    with pytest.raises(ValueError, match="lo < hi"):
        drop_for_fall(0.5, scale, 3.0, 1.0)


def test_posterior_falls_and_strata():
    rng = np.random.default_rng(1)
    drop = rng.normal(0.5, 0.6, 3000)
    scale = np.full(3000, 2.0)
    found = posterior_falls(drop, scale, 0.0, 8.0)
    falls = drop * (1 - np.exp(-4.0))
    assert found["median"] == pytest.approx(np.median(falls))
    assert found["quantiles"]["0.1667"] == pytest.approx(np.quantile(falls, 1 / 6))
    lo_edge, hi_edge = found["tercile_edges"]
    shares = np.bincount([stratum_of(f, found["tercile_edges"]) for f in falls], minlength=3)
    assert shares.tolist() == pytest.approx([1000, 1000, 1000], abs=2)
    assert stratum_of(lo_edge - 1e-9, found["tercile_edges"]) == 0
    assert stratum_of(hi_edge + 1e-9, found["tercile_edges"]) == 2


@pytest.mark.parametrize(("counts", "expected"), [
    # Newcombe (1998), Statistics in Medicine 17:873-890, Table II, method 10
    ((56, 70, 48, 80), (0.0524, 0.3339)),
    ((9, 10, 3, 10), (0.1705, 0.8090)),
    ((6, 7, 2, 7), (0.0582, 0.8062)),
    ((5, 56, 0, 29), (-0.0381, 0.1926)),
    ((0, 10, 0, 20), (-0.1611, 0.2775)),
    ((10, 10, 0, 20), (0.6791, 1.0)),
])
def test_rate_difference_is_newcombes_hybrid_score_interval(counts, expected):
    _d, lo, hi = rate_difference(*counts)
    assert (round(lo, 4), round(hi, 4)) == expected


def test_compare_strata_mixture_and_truth():
    edges = [0.0, 1.0]
    # stratum 0 (fall < 0): 1/4 detected; stratum 1: 2/4; stratum 2 (fall >= 1): 4/4
    pilot = [(-0.5, True), (-0.2, False), (-0.1, False), (-0.3, False),
             (0.2, True), (0.5, True), (0.7, False), (0.9, False),
             (1.2, True), (1.5, True), (2.0, True), (1.1, True)]
    band = [(-0.3, 2, 10), (0.5, 5, 10), (1.4, 9, 10)]
    found = compare((6, 10), pilot, band, edges, truth_fall=0.85)
    assert [(s["pilot"]["detected"], s["pilot"]["sims"]) for s in found["strata"]] == [
        (1, 4), (2, 4), (4, 4)]
    assert [s["band"]["rate"] for s in found["strata"]] == [0.2, 0.5, 0.9]
    assert found["strata"][2]["difference"][0] == pytest.approx(1.0 - 0.9)
    assert found["band_range"] == [0.2, 0.9]
    assert found["mixture"]["three_point"] == pytest.approx((0.2 + 0.5 + 0.9) / 3)
    gap, lo, hi = found["mixture"]["pilot_minus_three_point"]
    assert gap == pytest.approx(7 / 12 - 1.6 / 3) and lo < gap < hi
    assert found["truth"]["stratum"] == 1 and found["truth"]["rate"] == 0.6
    assert found["pilot_minus_truth"][0] == pytest.approx(7 / 12 - 0.6)
    with pytest.raises(ValueError, match="three tercile"):
        compare((6, 10), pilot, band[:2], edges, 0.85)


def test_band_protocols_change_only_the_fall(tmp_path):
    lo, hi = 0.11, 9.44
    protocol = load_protocol(EXAMPLE)
    effect = parse_effect("action.distance", protocol_effects(protocol))
    true = truth(protocol, effect)
    quantiles = {"0.1667": -0.6, "0.5000": 0.42, "0.8333": 1.3}
    files = script.band_protocols(EXAMPLE, "action", quantiles, lo, hi, true["scale"],
                                  tmp_path)
    assert [f.name for f in files] == ["band-1.yaml", "band-2.yaml", "band-3.yaml"]
    base = protocol.simulation.behaviour().ratings
    for path, fall in zip(files, quantiles.values(), strict=True):
        band = load_protocol(path)
        assert band.model_copy(update={"simulation": protocol.simulation}).fingerprint() == \
            protocol.fingerprint()  # the design is the truth's
        got = truth(band, effect)
        assert got["scale"] == pytest.approx(true["scale"])
        assert curve_fall(got["drop"], got["scale"], lo, hi) == pytest.approx(fall)
        ratings = band.simulation.behaviour().ratings
        assert ratings.action.intercept == pytest.approx(base.action.intercept)
        assert ratings.action.sd_slope == base.action.sd_slope
        assert ratings.acceptance == base.acceptance


def _run(folder: Path, records: list[dict], sims: int) -> None:
    folder.mkdir(parents=True)
    (folder / "power.json").write_text(json.dumps({"sims": sims}))
    (folder / "results.jsonl").write_text(
        "".join(json.dumps({"fingerprint": "f", "null": False, **r}) + "\n" for r in records))


def _studies(n: int, detected: list[bool], draws: list[int] | None = None) -> list[dict]:
    return [{"key": f"effect-{n}-{s}", "participants": n, "sim": s, "detected": d,
             **({} if draws is None else {"draw": draws[s]})}
            for s, d in enumerate(detected)]


def test_table_reads_each_studys_draw_and_the_runs(tmp_path):
    falls = [-1.0, 0.5, 2.0, -0.8, 0.6]  # per posterior draw
    band = tmp_path / "band"
    band.mkdir()
    (band / "band.json").write_text(json.dumps({
        "falls": falls, "quantiles": {"0.1667": -0.9, "0.5000": 0.55, "0.8333": 1.8},
        "tercile_edges": [0.0, 1.0], "truth_fall": 0.85, "lo": 0.1, "hi": 9.0, "median": 0.5,
        "interval_95": [-1.0, 2.0], "share_steeper_than_truth": 0.2}))
    # the pilot's studies 0..3 used draws 2, 0, 1, 4; study 4 is beyond sims and at another N
    pilot = _studies(240, [True, False, True, True], draws=[2, 0, 1, 4])
    pilot += _studies(60, [True], draws=[3]) + [
        {**_studies(240, [True] * 5, draws=[3] * 5)[4]}]
    _run(tmp_path / "pilot", pilot, sims=4)
    _run(tmp_path / "truth", _studies(240, [True, False, False]), sims=3)
    for k, det in enumerate(([False, False], [True, False], [True, True]), start=1):
        _run(band / str(k), _studies(240, det), sims=2)
    found = script.table(tmp_path / "truth", tmp_path / "pilot", band, 240)
    assert (found["pilot"]["detected"], found["pilot"]["sims"]) == (3, 4)
    assert [(s["pilot"]["detected"], s["pilot"]["sims"]) for s in found["strata"]] == [
        (0, 1), (2, 2), (1, 1)]  # draw 0 (-1.0): missed; draws 1, 4 (0.5, 0.6); draw 2 (2.0)
    assert [s["band"]["detected"] for s in found["strata"]] == [0, 1, 2]
    assert (found["truth"]["detected"], found["truth"]["sims"]) == (1, 3)
    # a folder that mixes two runs' studies is refused
    with open(tmp_path / "truth" / "results.jsonl", "a") as f:
        f.write(json.dumps({**_studies(240, [True])[0], "fingerprint": "g", "null": False})
                + "\n")
    with pytest.raises(SystemExit, match="2 runs"):
        script.table(tmp_path / "truth", tmp_path / "pilot", band, 240)
