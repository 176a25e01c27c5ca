"""Power and simulation from a pilot study (``power --from``, ``simulate --like``).

The pilot's stored protocol gives the design (arms, assignment, plans, questions) and its
ratings, kept by the protocol's exclusions as ``analyze`` keeps them, give the truth: the
analysis model fitted to them (analysis.pilot.fit_pilot) and each posterior draw turned into
the synthetic participants' rating model (analysis.pilot). study_app.power.pilot_protocol
is the protocol with one draw as its ``simulation.ratings`` block, so a study simulated
from it is an ordinary simulated study (study_app.simulator) whose stored truth is that
draw.

The fitted draws are kept in ``$RECOURSE_STUDY_HOME/pilots/<fingerprint>.json`` (the pilot's
model data, model, sampler and code: analysis.pilot.pilot_fingerprint), so a rerun, a
resumed ``power`` run and ``simulate --like`` of the same pilot reuse one fit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.models import AnalysisDataError
from analysis.pilot import PilotPosterior, fit_pilot, pilot_fingerprint, pilot_inputs
from analysis.pipeline import sampler_settings
from analysis.power import PowerInputError
from data.jsonio import write_json
from engine.artifacts import home
from protocols.definition.schema import Protocol
from study_app.exclusion_rules import study_rules
from study_app.prereg_analysis import plan_distance
from study_app.study_reader import StudyReadError, read_study


@dataclass
class Pilot:
    """A pilot study: where it is, its design and the ratings its analysis keeps."""

    db: str
    study_id: str
    protocol: Protocol
    ratings: pd.DataFrame

    def describe(self) -> dict[str, Any]:
        return {"db": self.db, "study_id": self.study_id, "protocol": self.protocol.id,
                "protocol_sha256": self.protocol.fingerprint(),
                "participants": int(self.ratings["participant_id"].nunique()),
                "ratings": int(len(self.ratings))}


def read_pilot(db: str, study: str | None = None, protocol: Protocol | None = None) -> Pilot:
    """The pilot in ``db``; PowerInputError saying what is wrong: no database, no study or
    no ratings, an imported study (no stored protocol) without ``protocol``, or a
    ``protocol`` whose design differs from the one the pilot ran (the ``simulation`` block
    may differ: the pilot's posterior replaces it)."""
    try:
        study_id, ratings, _plans, row = read_study(
            db, study, needs="a pilot needs rated plans to fit the analysis model to")
    except StudyReadError as e:
        raise PowerInputError(str(e)) from None
    stored = None
    if row.get("protocol_json"):
        try:
            stored = Protocol.model_validate_json(row["protocol_json"])
        except ValueError as e:
            raise PowerInputError(f"study {study_id!r} in {db}: its stored protocol cannot be "
                                  f"read by this version ({type(e).__name__})") from None
    if stored is None and protocol is None:
        raise PowerInputError(f"study {study_id!r} in {db} has no stored protocol (imported "
                              "ratings): give --protocol for the design to simulate")
    if stored is not None and protocol is not None:
        same = protocol.model_copy(update={"simulation": stored.simulation})
        if same.fingerprint() != stored.fingerprint():
            raise PowerInputError(
                f"{db} is a pilot of protocol {stored.id!r} (SHA-256 "
                f"{stored.fingerprint()[:12]}), and --protocol {protocol.id!r} differs from it "
                f"beyond its simulation block: leave out --protocol to use the pilot's")
    kept, _record, _truth = study_rules(ratings, row)
    return Pilot(db, study_id, stored or protocol, kept)  # type: ignore[arg-type]


def pilot_posterior(pilot: Pilot, sampler: dict[str, Any], distance: str | None = None,
                    on_log: Callable[[str], None] | None = None) -> PilotPosterior:
    """The pilot's posterior as synthetic participants (module docstring), fitted once:
    a stored fit with the same fingerprint is reused. ``sampler``: {backend, draws, tune,
    chains, target_accept, ess_target} (resolved: analysis.fit.resolve); ``distance``:
    default the protocol's plan distance (``analyze``'s default)."""
    say = on_log or (lambda _m: None)
    settings = sampler_settings(sampler["backend"], sampler["draws"], sampler["tune"],
                                sampler["chains"], 0, sampler["target_accept"],
                                sampler.get("ess_target"))
    try:
        inputs = pilot_inputs(pilot.ratings, distance or plan_distance(pilot.protocol))
    except AnalysisDataError as e:
        raise PowerInputError(f"pilot {pilot.study_id!r} in {pilot.db}: {e}") from None
    fp = pilot_fingerprint(inputs, settings)
    cache = pilot_cache() / f"{fp}.json"
    if cache.is_file():
        say(f"reused the pilot's fit ({cache})")
        return PilotPosterior.from_json(json.loads(cache.read_text(encoding="utf-8")))
    posterior = fit_pilot(inputs, settings, on_log=say)
    write_json(cache, posterior.to_json())
    return posterior


def pilot_cache() -> Path:
    return home() / "pilots"
