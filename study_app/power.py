"""Power analysis of a protocol: its simulated studies, run on Ray (analysis.power).

Any protocol works: its simulation block is the truth, or, from a pilot (``PowerRun.pilot``:
study_app.power_pilot), a draw of the pilot's posterior, a different one per simulated study
(study s uses draw ``pilot.draw_for(s, seed)`` at every N and in the null run). A simulated
study of N participants
runs the protocol with the simulator (study_app.simulator: the same pages, plans and
ratings as a real study) into a throw-away DuckDB file and hands the ratings to the
analysis (analysis.power.evaluate). A ``null`` study runs the protocol with the effect's
synthetic parameter set to 0 (``null_protocol``). Each worker process loads the study's
decision model and methods once (``_resources``) and compiles the model once per sample
size (analysis.power.worker_refitter).

``run_power`` plans the tasks, reuses the finished ones in OUT/results.jsonl, runs the rest
on Ray and writes OUT/power.json, OUT/power.html and OUT/power.png; its result is the
``recourse-study power --json`` document.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.pilot import PilotPosterior
from analysis.power import (
    Effect,
    PowerInputError,
    PowerSpec,
    PowerTask,
    curve,
    effects,
    evaluate,
    parse_effect,
    plan_tasks,
    rhat_high,
    worker_refitter,
)
from analysis.power_report import write_outputs
from analysis.power_run import (
    ResultsLog,
    check_reachable,
    ray_cluster,
    run_fingerprint,
    run_tasks,
)
from data.store import Store
from protocols.definition.schema import Protocol
from protocols.definition.simulation import RatingOverrides
from protocols.running.resources import StudyResources, study_resources
from study_app.simulator import simulate

_RESOURCES: dict[tuple[str, str | None], StudyResources] = {}


def protocol_effects(protocol: Protocol) -> dict[str, Effect]:
    """The effects the analysis model of this protocol's data estimates: satisfaction and
    violation exist when participants state their constraints (an elicitation)."""
    terms = ("satisfaction", "violation") if protocol.elicitation.scheme != "none" else ()
    return effects([a.id for a in protocol.arms], terms)


def min_participants(protocol: Protocol) -> int:
    """The fewest participants a study needs: 2 for the model, one per arm when each
    participant sees one arm."""
    return max(2, len(protocol.arms)) if protocol.assignment == "between" else 2


def analysis_distance(protocol: Protocol) -> str:
    """The distance the synthetic participants' ratings depend on (the model's default)."""
    return protocol.simulation.behaviour().ratings.distance


def truth(protocol: Protocol, effect: Effect) -> dict[str, Any]:
    """The synthetic participants' value of the effect's parameter (what power detects)."""
    model = getattr(protocol.simulation.behaviour().ratings, effect.outcome)
    if effect.term == "distance":
        return {"drop": model.curve.drop, "scale": model.curve.scale}
    if effect.term == "arm":
        return {"arm_effect": 0.0}
    return {effect.term: getattr(model, effect.term)}


def pilot_protocol(protocol: Protocol, posterior: PilotPosterior, index: int) -> Protocol:
    """``protocol`` whose synthetic participants rate as posterior draw ``index`` of a pilot
    (study_app.power_pilot) says."""
    ratings = RatingOverrides.model_validate(posterior.overrides(index))
    simulation = protocol.simulation.model_copy(update={"ratings": ratings})
    return protocol.model_copy(update={"simulation": simulation})


def pilot_truth(pilot: PilotPosterior, effect: Effect, drawn: list[int]) -> dict[str, Any]:
    """The posterior mean, over the draws the simulated studies used, of the effect's
    parameter (what ``truth`` is for a protocol's own simulation block)."""
    if effect.term == "arm":
        return {"arm_effect": 0.0}
    q = pilot.quantities(drawn)[effect.outcome]
    names = ("drop", "scale") if effect.term == "distance" else (effect.term,)
    return {name: q[name]["mean"] for name in names}


def null_protocol(protocol: Protocol, effect: Effect) -> Protocol:
    """``protocol`` with the effect's synthetic parameter set to 0."""
    if effect.null_parameter is None:
        raise PowerInputError(f"--null: synthetic participants have no term for {effect.name} "
                              "to set to 0; its own run already counts false positives")
    sim = protocol.simulation
    update: dict[str, Any] = {effect.null_parameter: 0.0}
    if effect.null_parameter == "drop":  # at_far is the same setting in mean ratings
        update["at_far"] = None
    over = getattr(sim.ratings, effect.outcome).model_copy(update=update)
    ratings = sim.ratings.model_copy(update={effect.outcome: over})
    return protocol.model_copy(update={"simulation": sim.model_copy(update={"ratings": ratings})})


def _resources(protocol: Protocol, decision_model: str | None) -> StudyResources:
    """The study's decision model and methods, built once per worker process."""
    key = (protocol.fingerprint(), decision_model)
    if key not in _RESOURCES:
        _RESOURCES[key] = study_resources(protocol, decision_model=decision_model)
    return _RESOURCES[key]


@dataclass(frozen=True)
class StudyWork:
    """One task's work in a Ray worker: simulate the study, fit it, decide."""

    protocol: Protocol
    spec: PowerSpec
    decision_model: str | None = None
    pilot: PilotPosterior | None = None
    seed: int = 0  # of the order the pilot's draws are used in

    def __call__(self, task: PowerTask) -> dict[str, Any]:
        import torch

        torch.set_num_threads(1)  # a worker is one core
        start = time.perf_counter()
        ratings = self.simulate(task)
        seconds = time.perf_counter() - start
        refitter = worker_refitter(tuple(sorted(self.spec.sampler.items())))
        record = evaluate(ratings, self.spec, task, refitter)
        if self.pilot is not None:
            record["draw"] = self.pilot.draw_for(task.sim, self.seed)
        return {**record, "simulate_seconds": round(seconds, 3)}

    def truth_of(self, task: PowerTask) -> Protocol:
        """The protocol task's study is simulated from: the pilot's draw for it, the
        effect set to 0 in a null task."""
        protocol = self.protocol if self.pilot is None else pilot_protocol(
            self.protocol, self.pilot, self.pilot.draw_for(task.sim, self.seed))
        return null_protocol(protocol, self.spec.effect) if task.null else protocol

    def simulate(self, task: PowerTask) -> pd.DataFrame:
        protocol = self.truth_of(task)
        resources = _resources(self.protocol, self.decision_model)
        with tempfile.TemporaryDirectory(prefix="power-") as tmp, \
                Store(Path(tmp) / "study.duckdb") as store:
            simulate(protocol, store, task.participants, seed=task.seed,
                     decision_model=self.decision_model, resources=resources)
            return store.ratings_long()


Plan = tuple[PowerSpec, list[PowerTask], dict[str, Any]]


@dataclass
class PowerRun:
    """The settings of one ``power`` run (``recourse-study power --help``)."""

    protocol: Protocol
    participants: Sequence[int]
    sims: int
    effect: str
    out: Path
    null: bool = False
    target: float = 0.8
    rule: str = "band"
    distance: str | None = None
    distance_range: tuple[float, float] | None = None
    seed: int | None = None
    decision_model: str | None = None
    sampler: dict[str, Any] = field(default_factory=dict)
    address: str | None = None
    workers: int | None = None
    pilot: PilotPosterior | None = None  # simulate from this posterior (study_app.power_pilot)
    pilot_source: dict[str, Any] | None = None  # the pilot's Pilot.describe()


def prepare_run(run: PowerRun) -> Plan:
    """Check the settings (PowerInputError names what is wrong) and plan the tasks; also
    the settings that make the run's fingerprint."""
    protocol = run.protocol
    effect = parse_effect(run.effect, protocol_effects(protocol))
    if run.null:
        null_protocol(protocol, effect)  # refuses an effect without a null
    fewest = min_participants(protocol)
    small = [n for n in run.participants if n < fewest]
    if small:
        raise PowerInputError(
            f"--participants {small[0]} is smaller than {fewest}: protocol {protocol.id!r} has "
            f"{len(protocol.arms)} arm(s) and each needs participants (and the model at least 2)")
    if not 0 < run.target < 1:
        raise PowerInputError(f"--target must lie between 0 and 1, got {run.target}")
    if run.address is not None:
        check_reachable(run.address)
    _resources(protocol, run.decision_model)  # a missing artifact is found here, once
    default = analysis_distance(protocol) if run.pilot is None else run.pilot.distance
    spec = PowerSpec(effect, run.distance or default, run.rule, run.distance_range,
                     dict(run.sampler))
    seed = protocol.simulation.seed if run.seed is None else run.seed
    tasks = plan_tasks(run.participants, run.sims, null=run.null, seed=seed)
    settings = {"protocol": protocol.fingerprint(), "protocol_id": protocol.id,
                "decision_model": run.decision_model or protocol.decision_model,
                "seed": seed, **spec.describe()}
    if run.pilot is not None:  # the posterior's draws are the truth
        settings["pilot"] = run.pilot.fingerprint
    return spec, tasks, settings


def run_power(run: PowerRun, *, plan: Plan | None = None,
              on_start: Callable[[int, int], None] | None = None,
              on_result: Callable[[dict[str, Any]], None] | None = None,
              on_log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run (or resume) a power analysis and write its outputs; returns the --json document.
    ``plan``: ``prepare_run(run)`` when already checked; ``on_start(total, reused)`` once
    the plan is known, ``on_result`` per finished task."""
    log_line = on_log or (lambda _m: None)
    spec, tasks, settings = plan or prepare_run(run)
    fingerprint = run_fingerprint(settings)
    log = ResultsLog(run.out / "results.jsonl")
    finished = log.finished(fingerprint)
    todo = [t for t in tasks if t.key not in finished]
    reused = len(tasks) - len(todo)
    if reused:
        log_line(f"reused {reused} finished simulated studies from {log.path}")
    if on_start:
        on_start(len(tasks), reused)
    start = time.perf_counter()
    fresh: list[dict[str, Any]] = []
    cluster: dict[str, Any] = {"address": run.address or "local", "cpus": 0}
    if todo:
        work = StudyWork(run.protocol, spec, run.decision_model, run.pilot, settings["seed"])
        with ray_cluster(run.address, run.workers) as cluster:
            log_line(f"Ray: {cluster['cpus']} CPU(s) at {cluster['address']}; "
                     f"{len(todo)} simulated studies to fit")

            def done(record: dict[str, Any]) -> None:
                fresh.append(record)
                if on_result:
                    on_result(record)

            run_tasks(todo, work, log, fingerprint, done, in_flight=2 * max(1, cluster["cpus"]))
    wall = time.perf_counter() - start
    keys = {t.key for t in tasks}
    this_run = {**finished, **{r["key"]: r for r in fresh}}
    records = [r for k, r in this_run.items() if k in keys]
    everything = [r for r in log.finished(fingerprint).values()]  # both variants, for the page
    doc = _document(run, spec, settings, records, everything, fresh, reused, wall, cluster)
    write_outputs(run.out, doc)
    return doc


def _document(run: PowerRun, spec: PowerSpec, settings: dict[str, Any],
              records: list[dict[str, Any]], everything: list[dict[str, Any]],
              fresh: list[dict[str, Any]], reused: int, wall: float,
              cluster: dict[str, Any]) -> dict[str, Any]:
    """The power.json / --json document."""
    ok = [r for r in records if "error" not in r]
    fitted = [r for r in fresh if "error" not in r]
    other = [r for r in everything if r["null"] != run.null
             and r["participants"] in set(run.participants) and r["sim"] < run.sims]
    drawn = sorted({run.pilot.draw_for(s, settings["seed"]) for s in range(run.sims)}
                   ) if run.pilot else []
    summary = curve(ok + other, run.participants, run.target)
    return {
        "protocol": run.protocol.id, "effect": spec.effect.name, "null": run.null,
        "truth": truth(run.protocol, spec.effect) if run.pilot is None else
        pilot_truth(run.pilot, spec.effect, drawn),
        "pilot": None if run.pilot is None else {
            **(run.pilot_source or {}), "distance": run.pilot.distance,
            "fingerprint": run.pilot.fingerprint, "draws": run.pilot.size,
            "draws_used": len(set(drawn)), "fit": run.pilot.diagnostics,
            "quantities": run.pilot.quantities(drawn)},
        "distance": spec.distance,
        "rule": spec.rule if spec.effect.smooth else "interval",
        "distance_range": spec.distance_range, "participants": sorted(set(run.participants)),
        "sims": run.sims, "seed": settings["seed"], "target": run.target,
        "decision_model": settings["decision_model"], "sampler": spec.sampler,
        **summary,
        "fits": {
            "planned": run.sims * len(set(run.participants)),
            "finished": len(ok), "fitted_now": len(fitted), "reused": reused,
            "failed": [{"key": r["key"], "error": r["error"]} for r in records if "error" in r],
            "rhat_above_1_05": sum(1 for r in ok if rhat_high(r)),
            "max_rhat": max((r["max_rhat"] for r in ok if r["max_rhat"] is not None),
                            default=None),
            "min_ess_bulk": min((r["min_ess_bulk"] for r in ok), default=None),
            "divergent_fits": sum(1 for r in ok if r["divergences"]),
            "seconds_per_fit": _mean([r["fit_seconds"] for r in fitted]),
            "compile_seconds": sum(r["compile_seconds"] for r in fitted),
            "compiles": sum(1 for r in fitted if r["compile_seconds"] > 0),
            "simulate_seconds_per_study": _mean([r["simulate_seconds"] for r in fitted]),
        },
        "ray": {"address": cluster["address"], "cpus": cluster["cpus"]},
        "wall_seconds": round(wall, 1),
        "out": str(run.out),
    }


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None
