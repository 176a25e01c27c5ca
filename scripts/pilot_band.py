"""Power from a pilot against power from the truth, with the posterior's spread measured
(analysis.pilot_band; docs/power.md, "Power from a pilot against power from the truth").

    python scripts/pilot_band.py protocols --pilot PILOT_OUT --protocol TRUTH.yaml --out BAND
    recourse-study power --protocol BAND/band-1.yaml --participants N ... --out BAND/1/
    (the same for band-2.yaml and band-3.yaml)
    python scripts/pilot_band.py table --truth TRUTH_OUT --pilot PILOT_OUT --band BAND \\
        --participants N [--json]

``protocols`` reads the pilot's fitted posterior (the fit ``power --from`` stored under
$RECOURSE_STUDY_HOME/pilots, named in PILOT_OUT/power.json) and writes BAND/band.json (the
posterior of the effect's curve fall over the pilot's observed distances, per draw, its
terciles and the truth's fall) and three protocols: TRUTH.yaml with the effect's fall set at
the posterior's tercile midpoints (quantiles 1/6, 1/2, 5/6), its scale and everything else
the truth's. ``table`` prints the comparison at N: truth, pilot, the pilot's studies by the
tercile their draw falls in against the band run at that tercile's midpoint, and the
pilot's power against the three-point mixture of the band runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from analysis.pilot import PilotPosterior, pilot_inputs
from analysis.pilot_band import (
    TERCILE_MIDPOINTS,
    compare,
    curve_fall,
    drop_for_fall,
    posterior_falls,
)
from analysis.power import parse_effect
from data.jsonio import write_json
from protocols.definition.schema import load_protocol
from study_app.power import protocol_effects, truth
from study_app.power_pilot import pilot_cache, read_pilot


def _power(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "power.json").read_text(encoding="utf-8"))


def _effect_outcome(doc: dict[str, Any]) -> str:
    name = doc["effect"]
    if not name.endswith(".distance"):
        raise SystemExit(f"the effect is {name!r}: the band is about a distance curve's fall")
    return name.split(".")[0]


def write_protocols(pilot_out: Path, protocol_path: Path, out: Path) -> dict[str, Any]:
    """BAND/band.json and BAND/band-{1,2,3}.yaml (module docstring)."""
    doc = _power(pilot_out)
    if doc.get("pilot") is None:
        raise SystemExit(f"{pilot_out}/power.json is not a run of power --from")
    outcome = _effect_outcome(doc)
    cache = pilot_cache() / f"{doc['pilot']['fingerprint']}.json"
    if not cache.is_file():
        raise SystemExit(f"the pilot's fit {cache} is missing: rerun the power --from command "
                         "with this RECOURSE_STUDY_HOME")
    posterior = PilotPosterior.from_json(json.loads(cache.read_text(encoding="utf-8")))
    pilot = read_pilot(doc["pilot"]["db"], doc["pilot"]["study_id"])
    d = pilot_inputs(pilot.ratings, posterior.distance)[outcome].d
    lo, hi = float(d.min()), float(d.max())
    draws = posterior.draws[outcome]
    falls = posterior_falls(draws["drop"], draws["scale"], lo, hi)
    protocol = load_protocol(protocol_path)
    true = truth(protocol, parse_effect(doc["effect"], protocol_effects(protocol)))
    files = band_protocols(protocol_path, outcome, falls["quantiles"], lo, hi,
                           true["scale"], out)
    truth_fall = float(curve_fall(true["drop"], true["scale"], lo, hi))
    summary = {"outcome": outcome, "pilot": str(pilot_out), "protocol": str(protocol_path),
               "lo": lo, "hi": hi, "truth": true, "truth_fall": truth_fall,
               "median": falls["median"], "interval_95": falls["interval_95"],
               "quantiles": falls["quantiles"], "tercile_edges": falls["tercile_edges"],
               "share_steeper_than_truth": float((falls["falls"] >= truth_fall).mean()),
               "falls": falls["falls"].tolist(), "protocols": [str(f) for f in files]}
    write_json(out / "band.json", summary)
    return summary


def band_protocols(protocol_path: Path, outcome: str, quantiles: dict[str, float], lo: float,
                   hi: float, scale: float, out: Path) -> list[Path]:
    """OUT/band-{1,2,3}.yaml: the protocol with ``outcome``'s curve falling by the fall
    at each tercile midpoint (``quantiles``, keyed as posterior_falls keys them) over
    [lo, hi], at ``scale`` (the truth's); everything else as the protocol states it."""
    raw = yaml.safe_load(protocol_path.read_text(encoding="utf-8"))
    curve = raw["simulation"]["ratings"][outcome]
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for k, q in enumerate(TERCILE_MIDPOINTS, start=1):
        fall = quantiles[f"{q:.4f}"]
        # the truth's curve with only its fall changed: latent drop at the truth's scale
        changed = {key: v for key, v in curve.items() if key not in ("at_far", "half_distance")}
        changed.update(drop=drop_for_fall(fall, scale, lo, hi), scale=scale)
        raw["simulation"]["ratings"][outcome] = changed
        path = out / f"band-{k}.yaml"
        path.write_text(f"# {protocol_path.name} with the {outcome} curve's fall over "
                        f"[{lo:.3f}, {hi:.3f}] at the pilot posterior's {q:.3f} quantile "
                        f"({fall:.4f}); written by scripts/pilot_band.py\n"
                        + yaml.safe_dump(raw, sort_keys=False, allow_unicode=True),
                        encoding="utf-8")
        load_protocol(path)  # refuses a protocol the band could not run
        files.append(path)
    return files


def _records(folder: Path, n: int) -> list[dict[str, Any]]:
    """The finished effect studies at N of one power run's results.jsonl (its power.json's
    sims), refusing a file that mixes runs of different settings."""
    sims = _power(folder)["sims"]
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()
            if line.strip()]
    prints = {r["fingerprint"] for r in rows}
    if len(prints) != 1:
        raise SystemExit(f"{folder}/results.jsonl holds {len(prints)} runs' studies; give a "
                         "folder of one run")
    latest = {r["key"]: r for r in rows}
    return [r for r in latest.values() if r["participants"] == n and not r["null"]
            and r["sim"] < sims and "error" not in r]


def table(truth_out: Path, pilot_out: Path, band: Path, n: int) -> dict[str, Any]:
    """The comparison at N (analysis.pilot_band.compare) from the runs' results."""
    summary = json.loads((band / "band.json").read_text(encoding="utf-8"))
    falls = summary["falls"]
    t = _records(truth_out, n)
    pilot = [(falls[r["draw"]], bool(r["detected"])) for r in _records(pilot_out, n)]
    runs = []
    for k, q in enumerate(TERCILE_MIDPOINTS, start=1):
        rs = _records(band / str(k), n)
        runs.append((summary["quantiles"][f"{q:.4f}"], sum(bool(r["detected"]) for r in rs),
                     len(rs)))
    found = compare((sum(bool(r["detected"]) for r in t), len(t)), pilot, runs,
                    summary["tercile_edges"], summary["truth_fall"])
    return {"participants": n, **found,
            "posterior": {k: summary[k] for k in ("lo", "hi", "median", "interval_95",
                                                  "tercile_edges", "truth_fall",
                                                  "share_steeper_than_truth")}}


def _cell(c: dict[str, Any]) -> str:
    if not c["sims"]:
        return "- (0/0)"
    return f"{c['rate']:.2f} [{c['lo']:.2f}, {c['hi']:.2f}] ({c['detected']}/{c['sims']})"


def _print(found: dict[str, Any]) -> None:
    p = found["posterior"]
    e = p["tercile_edges"]
    print(f"N = {found['participants']}; fall over [{p['lo']:.2f}, {p['hi']:.2f}]: posterior "
          f"median {p['median']:.2f}, 95% [{p['interval_95'][0]:.2f}, "
          f"{p['interval_95'][1]:.2f}], terciles cut at {e[0]:.2f} and {e[1]:.2f}; truth "
          f"{p['truth_fall']:.2f} (tercile {found['truth']['stratum'] + 1}; "
          f"{p['share_steeper_than_truth']:.0%} of draws as steep)")
    print(f"truth: {_cell(found['truth'])}; pilot: {_cell(found['pilot'])}; pilot - truth "
          "{:+.2f} [{:+.2f}, {:+.2f}]".format(*found["pilot_minus_truth"]))
    print("| posterior tercile of the fall | band: truth with the fall at its midpoint | "
          "pilot's studies whose draw is in it | pilot - band [95%] |")
    print("|---|---|---|---|")
    names = (f"below {e[0]:.2f}", f"{e[0]:.2f} to {e[1]:.2f}", f"above {e[1]:.2f}")
    for s, name in zip(found["strata"], names, strict=True):
        diff = "-" if s["difference"] is None else "{:+.2f} [{:+.2f}, {:+.2f}]".format(
            *s["difference"])
        print(f"| {name} (midpoint {s['fall']:.2f}) | {_cell(s['band'])} | {_cell(s['pilot'])} "
              f"| {diff} |")
    m = found["mixture"]
    print("band range {:.2f} to {:.2f}; three-point mixture {:.2f}; pilot - mixture {:+.2f} "
          "[{:+.2f}, {:+.2f}]".format(*found["band_range"], m["three_point"],
                                      *m["pilot_minus_three_point"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("protocols", help="band.json and the three band protocols")
    p.add_argument("--pilot", type=Path, required=True, help="the power --from run's folder")
    p.add_argument("--protocol", type=Path, required=True, help="the truth's protocol")
    p.add_argument("--out", type=Path, required=True)
    t = sub.add_parser("table", help="the comparison at one N")
    t.add_argument("--truth", type=Path, required=True, help="power --protocol's folder")
    t.add_argument("--pilot", type=Path, required=True, help="power --from's folder")
    t.add_argument("--band", type=Path, required=True, help="protocols' --out; runs in 1/ 2/ 3/")
    t.add_argument("--participants", type=int, required=True)
    t.add_argument("--json", action="store_true", help="print the comparison as JSON")
    args = parser.parse_args(argv)
    if args.command == "protocols":
        s = write_protocols(args.pilot, args.protocol, args.out)
        print(json.dumps({k: v for k, v in s.items() if k != "falls"}))
        return 0
    found = table(args.truth, args.pilot, args.band, args.participants)
    if args.json:
        print(json.dumps(found))
    else:
        _print(found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
