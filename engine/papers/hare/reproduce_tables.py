"""HARE on its own data sets: Tables 1-4 (targets ``hare-table1`` ..
``hare-table4``), the paper's numbers beside ours.

**Grid.** The paper's three data sets (columns ``adult``, ``compas``, ``credit``) as our
scenarios (``PAPER_DATASETS``; the credit column is GiveMeSomeCredit, the ``gmsc`` scenario,
whose file ``make install`` fetches: absent, its cells are *missing* and say which command
fetches it), its two classifiers (``ann``, ``lr``: the
scenario's trained models of those names) and its six base generators, each a catalogue
method of the same name. A data set, classifier or base this installation does not have is
a *missing* cell (``missing`` in the result: what and why), never a silent drop; a scenario
other than the reproductions' default runs as the only data set (its column: the paper's
whose scenario it is, else none), with the paper's classifiers if it is a tabular world and
its ``trained`` decision model otherwise (tests, smoke runs).

**Runs.** engine.papers.hare.benchmark per (data set, classifier): the paper's configuration
(gamma = 1 every iteration, the accept question after every tournament, BoundaryPointSearch
on every candidate, n = 100 Adam steps, lambda 10), far-scale simulated people, every
mutable feature actionable (the paper's only constraint is immutability), the same 150 fixed
rejected test people (engine.decision.fixed_test_people) in every seed, 5 seeds; ``fast``:
``FAST_RUN``.

**Cells.** Per classifier, base, data set, level and metric: the paper's value and ours
(mean and sd over seeds), judged against that value with the metric's tolerance
(``tolerances.hare``); and the table's *ratios* (e.g. HARE's GTD over the base's), judged
against the paper's ratio of the same classifier, base and data set with
``tolerances.hare.ratio`` (engine.papers.cell_judging), the range of the paper's ratios
over its data sets and bases shown beside. ``checks`` are the paper's claims (table1:
HARE's GTD at most the base's in every cell, Multi-HARE's at most HARE's in >= 80% of the
cells), each passed only on the figures it states; ``misses`` lists every judged cell
outside its tolerance. An interrupted run resumes (engine.papers.run_checkpoint).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import numpy as np

from engine.artifact_builders import decision_artifact
from engine.artifacts import build_artifacts, load_classifier
from engine.papers.cell_judging import miss_text
from engine.papers.hare.benchmark import HareBenchmarkConfig, run_hare_benchmark
from engine.papers.hare.table_checks import CHECKS
from engine.papers.hare.table_specs import (
    FAR,
    FAST_RUN,
    PAPER_DATASETS,
    PAPER_RUN,
    SPECS,
    SUBSTITUTE,
    B,
    TableSpec,
    find_row,
    paper_table,
)
from engine.papers.paper_values import paper_source, target_values, tolerance
from engine.papers.reproduce_choices import REPRODUCE_SCENARIO
from engine.papers.reproduce_core import (
    Cell,
    Progress,
    ReproduceConfig,
    TargetResult,
    recorded_options,
    seed_stats,
)
from engine.papers.run_checkpoint import Checkpoint, checkpoint_path
from engine.recourse import METHODS, capabilities
from engine.recourse.base import RecourseContext
from engine.scenarios import get_scenario
from engine.scenarios.fetched import DatasetMissingError


def grid(config: ReproduceConfig) -> tuple[dict[str, str | None], dict[str, str]]:
    """({scenario: paper column or None}, {what is missing: why})."""
    missing: dict[str, str] = {}
    if config.scenario != REPRODUCE_SCENARIO:
        column = {v: k for k, v in PAPER_DATASETS.items()}.get(config.scenario)
        return {config.scenario: column}, missing
    datasets: dict[str, str | None] = {}
    for column, name in PAPER_DATASETS.items():
        try:
            get_scenario(name)
        except (KeyError, ValueError, FileNotFoundError) as e:  # not fetched: says how
            missing[f"data set {name} ({column})"] = str(e) if isinstance(
                e, DatasetMissingError) else f"no scenario {name!r} here ({e})"
            continue
        datasets[name] = column
    return datasets, missing


def classifiers_of(config: ReproduceConfig, spec: TableSpec) -> tuple[str, ...]:
    """The paper's classifiers on its data sets (tabular worlds); a world of our own: its
    trained decision model."""
    if config.scenario == REPRODUCE_SCENARIO:
        return spec.classifiers
    tabular = get_scenario(config.scenario).world_kind == "tabular"
    return spec.classifiers if tabular else ("trained",)


def _context(scenario: str, classifier: str, bases: tuple[str, ...], quick: bool
             ) -> RecourseContext:
    """The data set's world with its classifier, and the trained models the bases need."""
    sc = get_scenario(scenario)
    needs = {a for b in bases for a in capabilities(b).artifacts}
    build_artifacts(scenario, quick=quick, only=(decision_artifact(sc, classifier), *needs))
    return RecourseContext(sc, load_classifier(sc, classifier))


def run_grid(config: ReproduceConfig, spec: TableSpec, note: Progress) -> dict[str, Any]:
    """Every (data set, classifier)'s benchmark rows, and what could not run."""
    run = FAST_RUN if config.fast else PAPER_RUN
    seeds = config.seeds if config.seeds is not None else run["seeds"]
    datasets, missing = grid(config)
    bases = tuple(b for b in spec.bases if b in METHODS)
    for b in spec.bases:
        if b not in METHODS:
            missing[f"base {b}"] = f"{b!r} is not in this installation's method catalogue"
    settings = tuple((FAR, b, t, "all") for b, t in spec.levels.values() if t)
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for scenario in datasets:
        for clf in classifiers_of(config, spec):
            note(f"{scenario}: {clf} classifier")
            try:
                context = _context(scenario, clf, bases, config.quick)
            except (FileNotFoundError, ValueError, KeyError) as e:
                missing[f"{scenario} {clf}"] = f"no {clf} classifier ({e})"
                continue
            hb = HareBenchmarkConfig(
                bases=bases, scales=(FAR,), budget=B, iterations=(1,),
                ablation_budgets=(B,), ablation_scale=FAR, calibration_ablation=False,
                constraint="all", fixed_people=True, n=config.n or run["n"], seeds=seeds,
                steps=run["steps"],
                settings=settings, step_timing=False, gamma_schedule=config.gamma_schedule,
                final_accept=config.final_accept, ground_truth=config.ground_truth,
                keep_incumbent=config.keep_incumbent, iterations_reading=config.iterations_reading,
                failed_plans=config.failed_plans,
            )
            checkpoint = Checkpoint(
                checkpoint_path(config.target, f"{scenario}-{clf}"),
                {"scenario": scenario, "classifier": clf, "quick": config.quick,
                 "benchmark": asdict(hb)})
            results[(scenario, clf)] = run_hare_benchmark(
                context, hb, on_step=lambda m, s=scenario, c=clf: note(f"{s} {c}: {m}"),
                checkpoint=checkpoint)["rows"]
            if checkpoint.reused:
                note(f"{scenario} {clf}: reused {checkpoint.reused} finished seed x base "
                     f"unit(s) of an interrupted run ({checkpoint.path})")
    return {"results": results, "datasets": datasets, "missing": missing, "bases": bases,
            "run": {**run, "seeds": seeds, "n": config.n or run["n"]}}


def _seeds(row: dict[str, Any], metric: str) -> list[float]:
    return list(row[f"{metric}_seeds"]) if f"{metric}_seeds" in row else [row[metric]]


def _paper(paper: dict[str, Any], clf: str, base: str, column: str | None
           ) -> dict[str, list[float]] | None:
    if column is None:
        return None
    return (paper.get(clf, {}).get(base) or {}).get(column)


def _paper_range(paper: dict[str, Any], spec: TableSpec, clf: str, metric: str, level: str,
                 ref: str) -> tuple[float, float] | None:
    levels = list(spec.levels)
    i, j = levels.index(level), levels.index(ref)
    ratios = [d[metric][i] / d[metric][j] for per_base in paper.get(clf, {}).values()
              for d in per_base.values() if d and metric in d and d[metric][j]]
    return (min(ratios), max(ratios)) if ratios else None


def table_cells(target: str, spec: TableSpec, out: dict[str, Any]) -> list[Cell]:
    """Value cells (not judged) and ratio cells (judged against the paper's range)."""
    paper = paper_table(target)
    table = target_values(target)["table"]
    tol = tolerance("hare", "ratio")
    cells: list[Cell] = []
    judging = "judged against the paper's value of this cell"
    for (scenario, clf), rows in out["results"].items():
        column = out["datasets"][scenario]
        note = SUBSTITUTE.get(column or "", "")
        for base in out["bases"]:
            ours = {lv: find_row(rows, base, lv_key) for lv, lv_key in spec.levels.items()}
            theirs = _paper(paper, clf, base, column)
            why = note or ("" if column else "no paper column for this scenario")
            if column and theirs is None:
                why = "the paper reports no number here (CLUE on Adult: success rate too low)"
            label = f"{clf.upper()} {base} {column or scenario}"
            for li, (lv, row) in enumerate(ours.items()):
                for m in spec.metrics:
                    mean, sd = seed_stats(_seeds(row, m))
                    cells.append(Cell(
                        table=table, row=label, method=lv, metric=m.upper(),
                        paper=theirs[m][li] if theirs and m in theirs else None,
                        ours=mean, ours_mean=mean, ours_sd=sd, seeds=row["seeds"], note=why,
                        tolerance=tolerance("hare", m),
                        setting={"scenario": scenario, "classifier": clf, "base": base,
                                 "column": column, "level": lv}).judge())
            for m, lv, ref in spec.ratios:
                per_seed = (np.array(_seeds(ours[lv], m)) / np.array(_seeds(ours[ref], m)))
                mean, sd = seed_stats([float(v) for v in per_seed])
                i, j = list(spec.levels).index(lv), list(spec.levels).index(ref)
                cells.append(Cell(
                    table=table, row=label, method=f"{lv} / {ref}", metric=f"{m.upper()} ratio",
                    paper=theirs[m][i] / theirs[m][j] if theirs and m in theirs else None,
                    ours=mean, ours_mean=mean, ours_sd=sd, seeds=ours[lv]["seeds"],
                    tolerance=tol, paper_range=_paper_range(paper, spec, clf, m, lv, ref),
                    note="; ".join(x for x in (why, judging + " (its range over the data "
                                               "sets and bases: beside it)") if x),
                    setting={"scenario": scenario, "classifier": clf, "base": base,
                             "column": column, "level": lv, "reference": ref}).judge())
    return cells


def misses(cells: list[Cell]) -> list[str]:
    """Every judged cell outside its tolerance, with the figures it was decided on."""
    return [miss_text(c.to_dict()) + (" (German Credit)" if c.note.startswith("German") else "")
            for c in cells if c.within is False]


def table_target(target: str) -> Callable[[ReproduceConfig, Progress], TargetResult]:
    def run(config: ReproduceConfig, note: Progress) -> TargetResult:
        spec = SPECS[target]
        values = target_values(target)
        out = run_grid(config, spec, note)
        cells = table_cells(target, spec, out)
        checks = CHECKS[target](spec, out) if out["results"] else []
        missed = misses(cells)
        notes = [f"missing: {k}: {v}" for k, v in out["missing"].items()]
        if any(c in SUBSTITUTE for c in out["datasets"].values()):
            notes.append("credit column: " + SUBSTITUTE["credit"] + "; marked * in checks "
                         "and noted in its cells")
        if config.fast:
            notes.append("fast: fewer people, seeds and sampling steps than the paper")
        return TargetResult(
            target=target, title=values["title"], table=values["table"],
            paper=paper_source("hare"),
            config={"datasets": out["datasets"],
                    **({"scenario": config.scenario}  # one scenario's run: --scenario
                       if config.scenario != REPRODUCE_SCENARIO else {}),
                    "classifiers": list(classifiers_of(config, spec)),
                    "bases": list(out["bases"]), **out["run"], "fast": config.fast,
                    "constraint": "immutables only", **recorded_options(config)},
            cells=cells, checks=checks, notes=notes,
            extras={"missing": out["missing"], "misses": missed,
                    "rows": {f"{s} {c}": [{k: v for k, v in r.items()
                                           if not k.endswith("_seeds")} for r in rows]
                             for (s, c), rows in out["results"].items()}},
        )

    return run


TARGETS = {name: table_target(name) for name in SPECS}
