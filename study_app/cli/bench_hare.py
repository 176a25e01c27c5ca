"""`recourse-study benchmark hare`: HARE and Multi-HARE with simulated people (the HARE paper)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich import box
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from study_app.cli.apps import (
    GROUND_TRUTH_HELP,
    ITERATIONS_READING_HELP,
    benchmark_app,
    benchmark_classifier,
    scenario_or_fail,
    split_list,
)
from study_app.cli.choices import (
    BenchmarkDecisionModel,
    FinalAccept,
    GammaSchedule,
    GroundTruth,
    IcarmaTraining,
    IterationsReading,
    OracleGrid,
)
from study_app.cli.output import emit, err, fail, json_file_option, json_option, result_console

TABLE_WIDTH = 170  # the table has 15 columns: never squeeze it


def _ints(value: str, option: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in split_list(value, option))
    except ValueError as e:
        raise typer.BadParameter(f"{option} takes comma-separated integers, got {value!r}") from e


def _table(rows: list[dict[str, Any]]) -> Table:
    table = Table(title="HARE benchmark (mean ± sd over seeds)", box=box.SIMPLE_HEAD)
    for col in ("base", "variant", "scale", "B", "T", "calibrate"):
        table.add_column(col, no_wrap=True)
    for col in ("GTP", "GTD", "success", "violations", "proximity", "sparsity", "redundancy",
                "queries", "max q", "seconds"):
        table.add_column(col, justify="right", no_wrap=True)
    for r in rows:
        table.add_row(
            r["base"], r["variant"], r["scale"], str(r["budget"] or "-"),
            str(r["iterations"] or "-"), r["calibrate"],
            f"{r['gtp_mean']:.3f}±{r['gtp_sd']:.3f}", f"{r['gtd_mean']:.3f}±{r['gtd_sd']:.3f}",
            f"{r['success_rate']:.3f}", f"{r['violations']:.2f}", f"{r['proximity']:.3f}",
            f"{r['sparsity']:.2f}", f"{r['redundancy']:.2f}", f"{r['queries']:.1f}",
            str(r["queries_max"]), f"{r['seconds']:.2f}",
        )
    return table


def base_options(bases: tuple[str, ...], switches: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per base, the switches its constructor takes (an unknown base is left to the
    benchmark's validation)."""
    from engine.recourse import METHODS, option_names

    return {b: {k: v for k, v in switches.items() if k in option_names(b)}
            for b in bases if b in METHODS}


_SCENARIO = typer.Option("loan", help="Scenario name.")
_BASES = typer.Option("wachter,gs,oracle,icarma",
                          help="Base methods: wachter, gs, oracle, icarma, carma.")
_SCALES = typer.Option("near,intermediate,far", help="Ideal-plan scales.")
_BUDGET = typer.Option(30, min=1, help="Query budget B of the main rows.")
_ITERATIONS = typer.Option("1,5", help="T values: 1 = HARE, more = Multi-HARE.")
_BUDGETS = typer.Option("10,30,70", help="Budget ablation (at --ablation-scale).")
_ABLATION_SCALE = typer.Option("far", help="Scale of the ablations.")
_CALIBRATION_ABLATION = typer.Option(
    True, help="Add the 'calibrate only the winner' row (paper Table 5).")
_CONSTRAINT = typer.Option(
    "random", help="Actionable features per person: all | 1..4 | random.")
_N = typer.Option(150, "--n", min=1, help="Rejected applicants per seed.")
_SEEDS = typer.Option(5, min=1, help="Seeds (people, profiles, ideals, search).")
_STEPS = typer.Option(100, min=0, help="ActionableSampling gradient steps.")
_DECISION_MODEL = typer.Option(
    "trained", help="trained (the artifact), bayes (the exact Bayes rule) or a tabular "
    "world's lr / ann.")
_KEEP_INCUMBENT = typer.Option(
    True, "--keep-incumbent/--drop-incumbent",
    help="The previous iteration's plan joins each tournament, as the paper's released "
    "code runs (the default); --drop-incumbent: new candidates only, as the paper's "
    "Algorithm 4 is written. The question count is the same.")
_GAMMA = typer.Option(
    1.0,
    help="The candidates' step gamma (the paper: 1; shifts in range units).")
_GAMMA_SCHEDULE = typer.Option(
    "paper", help="Candidate step size: paper (gamma = 1 in every iteration) | halve "
    "(ours before: gamma x max(|base shift|, 0.25), halved every iteration).")
_FINAL_ACCEPT = typer.Option(
    "ask", help="The accept question after the last tournament: ask (the paper's "
    "Algorithm 4; it counts against the budget) | skip (ours before).")
_ITERATIONS_READING = typer.Option(
    "text", help=ITERATIONS_READING_HELP)
_GROUND_TRUTH = typer.Option("perturbation", help=GROUND_TRUTH_HELP)
_ICARMA_TRAINING = typer.Option(
    "paper", help="iCARMA base: paper (the paper's models) | fast (ours).")
_REPAIR = typer.Option(
    False, "--repair/--no-repair",
    help="iCARMA/CARMA bases: our final validity check (off: the paper).")
_ORACLE_GRID = typer.Option(
    "factual", help="Oracle base grid: factual (the paper's) | carma | shared (ours).")


@benchmark_app.command("hare")
def hare(
    scenario: str = _SCENARIO,
    bases: str = _BASES,
    scales: str = _SCALES,
    budget: int = _BUDGET,
    iterations: str = _ITERATIONS,
    budgets: str = _BUDGETS,
    ablation_scale: str = _ABLATION_SCALE,
    calibration_ablation: bool = _CALIBRATION_ABLATION,
    constraint: str = _CONSTRAINT,
    n: int = _N,
    seeds: int = _SEEDS,
    steps: int = _STEPS,
    decision_model: BenchmarkDecisionModel = _DECISION_MODEL,
    keep_incumbent: bool = _KEEP_INCUMBENT,
    gamma: float = _GAMMA,
    gamma_schedule: GammaSchedule = _GAMMA_SCHEDULE,
    final_accept: FinalAccept = _FINAL_ACCEPT,
    iterations_reading: IterationsReading = _ITERATIONS_READING,
    ground_truth: GroundTruth = _GROUND_TRUTH,
    icarma_training: IcarmaTraining = _ICARMA_TRAINING,
    repair: bool = _REPAIR,
    oracle_grid: OracleGrid = _ORACLE_GRID,
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Base generators vs HARE vs Multi-HARE.

    Base generators vs HARE vs Multi-HARE with simulated people (hidden ideal plans).

    JSON: {config, rows, checks, step_ms}: rows [{base, variant (base | hare |
    multi-hare), scale, budget, iterations, calibrate (all | winner | none), n, seeds,
    gtp_mean, gtp_sd, gtd_mean, gtd_sd, success_rate, violations (mean per person),
    violations_total, proximity (L2, the paper's), proximity_l1, sparsity, redundancy, queries
    (mean per person), queries_max (the most any person was asked: comparisons + accept
    questions, never above the budget), keep_incumbent, gamma, gamma_schedule, final_accept,
    iterations_reading, ground_truth, seconds}] (means
    over seeds, sd across seeds; definitions in engine/papers/hare/benchmark.py); checks [{check,
    passed, detail}] (the acceptance criteria);
    step_ms {steps, p50, p95, max}: one interactive HareSession step (restore, answer, next
    query, save).
    """
    from engine.papers.hare.benchmark import HareBenchmarkConfig
    from engine.recourse.base import RecourseContext

    sc = scenario_or_fail(scenario, json_out)
    classifier = benchmark_classifier(sc, decision_model)
    config = HareBenchmarkConfig(
        bases=split_list(bases, "--bases"), scales=split_list(scales, "--scales"),
        budget=budget, iterations=_ints(iterations, "--iterations"),
        ablation_budgets=_ints(budgets, "--budgets"), ablation_scale=ablation_scale,
        calibration_ablation=calibration_ablation, constraint=constraint, n=n, seeds=seeds,
        steps=steps, keep_incumbent=keep_incumbent, gamma=gamma, gamma_schedule=gamma_schedule,
        final_accept=final_accept, ground_truth=ground_truth,
        iterations_reading=iterations_reading,
        base_options=base_options(split_list(bases, "--bases"), {
            "training": icarma_training, "repair": repair, "grid": oracle_grid}),
    )
    context = RecourseContext(sc, classifier)
    try:
        config.validate(sc)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from e
    result = _run(context, config)
    emit({"config": vars(config), **result}, json_out=json_out, json_file=json_file,
         human=lambda: _print(result, json_out))


def _run(context: Any, config: Any) -> dict[str, Any]:
    """The benchmark with a progress line; exit 2 when an amortized base's artifact is
    missing."""
    from engine.papers.hare.benchmark import run_hare_benchmark

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=err) as progress:
        task = progress.add_task("starting", total=None)
        try:
            return run_hare_benchmark(
                context, config, on_step=lambda m: progress.update(task, description=m))
        except FileNotFoundError as e:  # an amortized base whose artifact is missing
            fail(e, 2)


def _print(result: dict[str, Any], json_out: bool) -> None:
    result_console(json_out, min_width=TABLE_WIDTH).print(_table(result["rows"]))
    for c in result["checks"]:
        mark = "[green]PASS[/green]" if c["passed"] else "[red]FAIL[/red]"
        err.print(f"{mark} {c['check']}: {c['detail']}")
    s = result["step_ms"]
    err.print(f"interactive step: p50 {s['p50']:.0f} ms, p95 {s['p95']:.0f} ms, "
              f"max {s['max']:.0f} ms over {s['steps']} steps")
