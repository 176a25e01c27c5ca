"""Run N synthetic participants through a protocol: the second driver of the study session.

Synthetic participants (engine.synthetic) answer the very pages a person would see
(protocols.running.session): each page kind gives its synthetic answer (``PageKind.synthetic_answer``,
as jsPsych plugins simulate themselves), so simulated data has exactly the shape of real
data. For speed,
participants move through the study in chunks, in lockstep: at every step the current page of
every active participant of the chunk is answered and all answers are submitted with one
``Study.submit_many`` call (one transaction; plans for the whole chunk come from one method
call per arm, and the interactive searches of the chunk's HARE participants run as one
batched search: protocols.running.interactive). Each participant's hidden parameters are written to ``sim_participants`` in
the transaction that creates them, each rating's latent values to ``sim_ratings`` in the
transaction that stores the rating.

Participants have sequence numbers 0..N-1. Running again on the same database continues:
complete participants are skipped, started ones resume at their current page (after a crash
or a kill, every participant is either complete or resumable), missing ones are started.

Time is simulated (``SimulatedClock``): the study's clock starts at the real time and moves
on by each lockstep step's longest simulated page time, and by ``arrival_seconds`` before
each chunk arrives, so answers are stored at simulated times and a protocol's
``time_limit`` is measured on them. ``dropout`` {arm: P}: a
participant of that arm leaves with probability P, at a page drawn uniformly among those
still ahead of them after consent (like closing the tab: their status stays ``active``
until the time limit passes and a later visit times them out). Under ``quotas`` every
quota decision depends on the outcomes before it, so participants arrive one after
another (a chunk of one) instead of in lockstep chunks.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from data import dashboard_queries, records, study_progress
from data import quality as quality_flags
from data.columns import SIM_PARTICIPANTS, SIM_RATINGS
from data.store import Store
from engine.synthetic.participants import Population
from protocols.definition.schema import Protocol, load_protocol
from protocols.definition.translation import shipped_dir, translations_dir, translators
from protocols.running import pages as pg
from protocols.running.context import SyntheticContext, after_every_pause, now
from protocols.running.resources import StudyResources
from protocols.running.session import Study, SubmitItem, UnknownLanguageError
from study_app.extensions import load_page_kinds

Progress = Callable[[int, int], None]
_STREAM_DROPOUT = 31  # the simulation seed's stream of who drops out, and where


class SimulatedClock:
    """The simulated time (module docstring): starts at ``start``, moves by ``advance``."""

    def __init__(self, start: datetime) -> None:
        self.t = start

    def __call__(self) -> datetime:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += timedelta(seconds=seconds)


class SyntheticDriver:
    """Answers a study's pages for synthetic participants (the module docstring)."""

    def __init__(self, study: Study, population: Population,
                 clock: SimulatedClock | None = None,
                 dropout: Mapping[str, float] | None = None) -> None:
        self.study = study
        self.population = population
        self.clock = clock
        self.dropout = dict(dropout or {})
        self.leaves_at: dict[str, int | None] = {}  # participant -> the step they leave at
        self.dropped = 0

    def _leaves(self, pid: str) -> bool:
        """Whether the participant leaves now, before answering their current page (drawn
        once, when they first have an arm: module docstring). The page is drawn by its
        place among the pages ahead; one whose study turns out shorter (fewer plans) leaves
        at its last page instead."""
        p = self.study.participant(pid)
        if p.arm is None or p.arm not in self.dropout:
            return False
        if pid not in self.leaves_at:
            rng = np.random.default_rng([self.population.seed, _STREAM_DROPOUT, p.seq])
            ahead = [page for page in self.study.flow.page_ids(p)
                     if page not in p.answered and page != "debrief"]
            leaves = bool(ahead) and rng.random() < self.dropout[p.arm]
            self.leaves_at[pid] = p.step + int(rng.integers(len(ahead))) if leaves else None
        at = self.leaves_at[pid]
        if at is None or not p.active:
            return False
        ids = self.study.flow.page_ids(p)
        current = self.study.flow.current_id(p)
        last = current in ids and ids[ids.index(current) + 1:] == ["debrief"]
        if p.step >= at or last:
            self.dropped += 1
            return True
        return False

    def truth_rows(self, participants: list[Any]) -> dict[str, list[dict[str, Any]]]:
        """The hidden parameters of new participants (written with their creation)."""
        return {SIM_PARTICIPANTS.name: [SIM_PARTICIPANTS.row(
            study_id=self.study.study_id, participant_id=p.participant_id,
            sim_seed=self.population.seed,
            params_json=json.dumps({"seq": p.seq, **self.population.person(p.seq).truth()}),
        ) for p in participants]}

    def _seconds(self, pid: str, page: pg.Page) -> float:
        """The simulated time on the page (engine.synthetic: page times)."""
        p = self.study.participant(pid)
        return self.population.page_seconds(p.seq, p.step, page.kind)

    def run(self, participant_ids: list[str]) -> None:
        """Drive these participants until none is active: at every step, each page kind
        answers all its pages of the step at once (a plan page's ratings are one draw)."""
        study = self.study
        active = list(participant_ids)
        while active:
            sim = SyntheticContext(study.study_id, study.protocol, study.scenario,
                                   self.population)
            pages = [(pid, study.current_page(pid)) for pid in active
                     if not (self.dropout and self._leaves(pid))]
            pages = [(pid, page) for pid, page in pages if not page.terminal]
            if not pages:
                break
            answers: dict[str, Any] = {}
            for kind in dict.fromkeys(page.kind for _, page in pages):
                mine = [(pid, page) for pid, page in pages if page.kind == kind]
                items = [(study.participant(pid), page) for pid, page in mine]
                for (pid, _), answer in zip(
                        mine, pg.PAGE_KINDS[kind].synthetic_answers(sim, items), strict=True):
                    answers[pid] = answer
            submits = [SubmitItem(pid, page.id, answers[pid], self._seconds(pid, page))
                       for pid, page in pages]
            if self.clock is not None:  # the step's pages are read side by side
                self.clock.advance(max(it.seconds or 0.0 for it in submits))
            study.submit_many(submits, {SIM_RATINGS.name: sim.extra[SIM_RATINGS.name]})
            active = [pid for pid, _ in pages if study.participant(pid).active]


def simulate(
    protocol: Protocol | str | Path,
    store: Store | str | Path,
    participants: int,
    *,
    seed: int | None = None,
    study_id: str | None = None,
    decision_model: str | None = None,
    resources: StudyResources | None = None,
    chunk: int = 100,
    progress: Progress | None = None,
    speeders: float = 0.0,
    straightliners: float = 0.0,
    languages: Sequence[str] | None = None,
    dropout: Mapping[str, float] | None = None,
    arrival_seconds: float = 60.0,
) -> dict[str, Any]:
    """Simulate ``participants`` synthetic participants into ``store`` (module docstring).

    ``protocol`` may be a shipped protocol's id or a file, ``store`` a DuckDB file (opened and
    closed here); ``speeders`` / ``straightliners``: the shares of careless participants
    (engine.synthetic.participants; their kind is simulation truth); ``languages``: the
    languages participants take part in, in turn by sequence number (default English; each
    one the protocol's, protocols.running.session.UnknownLanguageError otherwise); ``dropout``:
    {arm id: probability of leaving mid-study} (ValueError for an arm the protocol does not
    have or a probability outside 0..1, before anything is written); ``arrival_seconds``: the
    simulated time between the arrivals of two chunks (module docstring). Returns the summary
    documented by ``recourse-study simulate --json``.
    """
    load_page_kinds()  # kinds added through $RECOURSE_STUDY_PAGE_KINDS
    if isinstance(protocol, Protocol):
        folder = shipped_dir(protocol)
    else:
        folder = translations_dir(protocol)
        protocol = load_protocol(protocol)
    offered = translators(protocol, folder)
    unknown = sorted(set(languages or ()) - set(offered))
    if unknown:  # before anything is written
        raise UnknownLanguageError(f"this study is not offered in {', '.join(unknown)} (it is "
                                   f"in {', '.join(offered)})")
    check_dropout(protocol, dropout)
    if not isinstance(store, Store):
        with Store(store) as opened:
            return simulate(protocol, opened, participants, seed=seed, study_id=study_id,
                            decision_model=decision_model, resources=resources, chunk=chunk,
                            progress=progress, speeders=speeders,
                            straightliners=straightliners, languages=languages,
                            dropout=dropout, arrival_seconds=arrival_seconds)
    _check_sizes(participants, chunk, arrival_seconds)
    if protocol.quotas is not None:
        chunk = 1  # one after another: each quota decision sees the outcomes before it
    start = time.perf_counter()
    sim_seed = protocol.simulation.seed if seed is None else int(seed)
    behaviour = dataclasses.replace(
        protocol.simulation.behaviour(protocol.elicitation.min_changeable),
        speeder_share=speeders, straightliner_share=straightliners)
    clock = SimulatedClock(_last_time(store, study_id or protocol.id) or now())
    study = Study(protocol, store, study_id=study_id, resources=resources,
                  decision_model=decision_model, translations=folder, clock=after_every_pause,
                  timer=clock,
                  simulation={"seed": sim_seed, "behaviour": behaviour.to_dict()})
    population = Population(study.scenario, behaviour, sim_seed,
                            study.rejected_population)
    driver = SyntheticDriver(study, population, clock, dropout)
    runs = _run_chunks(study, driver, clock, participants, chunk, arrival_seconds, languages,
                       progress)
    standing = study.standing()
    return summary(store, study.study_id, time.perf_counter() - start,
                   started=runs.started, resumed=runs.resumed, seed=sim_seed, protocol=protocol.id,
                   dropped_out=driver.dropped,
                   quota=standing.detail() if standing is not None else None)


def _check_sizes(participants: int, chunk: int, arrival_seconds: float) -> None:
    if participants < 1:
        raise ValueError(f"participants must be >= 1, got {participants}")
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    if arrival_seconds < 0:
        raise ValueError(f"arrival_seconds must be >= 0, got {arrival_seconds}")


class _Runs(NamedTuple):
    """Participants this run started anew and resumed (where an earlier run stopped)."""

    started: int
    resumed: int


def _run_chunks(study: Study, driver: SyntheticDriver, clock: SimulatedClock,
                participants: int, chunk: int, arrival_seconds: float,
                languages: Sequence[str] | None, progress: Progress | None) -> _Runs:
    """Participants 0..participants-1 in chunks that arrive ``arrival_seconds`` apart: the
    stored ones that finished are skipped, the active ones resumed, the rest started."""
    store = study.store
    existing = {int(r["seq"]): r for r in records.participant_index(store, study.study_id)}
    started = resumed = 0
    done = sum(1 for s in range(participants)
               if s in existing and existing[s]["status"] != "active")
    if progress:
        progress(done, participants)
    for lo in range(0, participants, chunk):
        seqs = list(range(lo, min(lo + chunk, participants)))
        new = [s for s in seqs if s not in existing]
        todo = [existing[s]["participant_id"] for s in seqs
                if s in existing and existing[s]["status"] == "active"]
        resumed += len(todo)
        if new or todo:
            clock.advance(arrival_seconds)
        if new:
            todo += study.start_many(
                new, source="synthetic", extra_rows=driver.truth_rows,
                languages=[languages[s % len(languages)] for s in new] if languages else None)
            started += len(new)
        if not todo:
            continue
        driver.run(todo)
        study.forget(todo)
        done += len(todo)
        if progress:
            progress(done, participants)
    return _Runs(started, resumed)


def check_dropout(protocol: Protocol, dropout: Mapping[str, float] | None) -> None:
    """ValueError for a dropout of an arm the protocol does not have, or a probability
    outside 0..1."""
    arms = [a.id for a in protocol.arms]
    for arm, prob in (dropout or {}).items():
        if arm not in arms:
            raise ValueError(f"dropout names arm {arm!r}, but protocol {protocol.id!r} has "
                             f"the arms {', '.join(arms)}")
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f"the dropout of arm {arm!r} must be a probability from 0 to 1, "
                             f"got {prob:g}")


def _last_time(store: Store, study_id: str) -> datetime | None:
    """When the study's last answer or start happened (a continued simulation's clock goes
    on from there)."""
    rows = store.query("SELECT max(updated_at) AS t FROM participants WHERE study_id = ?",
                       [study_id])
    return rows[0]["t"] if rows else None


def summary(store: Store, study_id: str, seconds: float, **extra: Any) -> dict[str, Any]:
    """Counts, rating means and data quality of a study (the ``--json`` shape)."""
    row = records.study_counts(store, study_id)
    # the data-quality queries are DuckDB SQL: on PostgreSQL they read a snapshot
    view = store.snapshot()
    try:
        shortfalls = dashboard_queries.plan_shortfalls(view, study_id)
        failures = dashboard_queries.attention_failures(view, study_id)
        short = view.query(
            "SELECT count(*) AS n FROM events WHERE study_id = $1 AND event = 'plans' "
            "AND json_extract(detail_json, '$.short')::BOOLEAN", [study_id])[0]["n"]
    finally:
        if view is not store:
            view.close()
    quality = {
        "flag_recovery": quality_flags.flag_recovery(store, study_id),
        "plan_shortfalls": shortfalls.to_dict(orient="records"),
        "participants_short": int(short),
        "attention_failed": int(failures["participants"].sum()) if len(failures) else 0,
    }
    statuses = {r["status"]: int(r["n"]) for r in store.query(
        "SELECT status, count(*) AS n FROM participants WHERE study_id = ? GROUP BY status "
        "ORDER BY status", [study_id])}
    arms = {r["arm"]: {k: int(v) for k, v in r.items() if k != "arm"}
            for r in study_progress.arm_counts(store, study_id).to_dict(orient="records")}
    return {"study_id": study_id, **extra, **row, **quality, "statuses": statuses,
            "arms": arms, "seconds": round(seconds, 3)}
