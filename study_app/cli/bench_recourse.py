"""`recourse-study benchmark recourse`: the iCARMA paper's recourse tables (Tables 1-3, 5, 6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich import box
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from study_app.cli.apps import benchmark_app, benchmark_classifier, scenario_or_fail
from study_app.cli.apps import split_list as _split
from study_app.cli.choices import (
    BenchmarkDecisionModel,
    Elicitation,
    IcarmaTraining,
    OracleGrid,
    ScoreSampling,
)
from study_app.cli.output import emit, err, fail, json_file_option, json_option, result_console
from study_app.cli.paper_needs import benchmark_setups, offer_training, train_option


def _fmt(v: float | None, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def variant_label(row: dict[str, Any]) -> str:
    """Which switches a row ran with, e.g. "grid factual, rejected range" or "paper, repair
    off" (a row without ``oracle_range`` predates it: the training range)."""
    if row.get("oracle_grid"):
        return f"grid {row['oracle_grid']}, {row.get('oracle_range') or 'training'} range"
    if row.get("repair") is not None:
        training = f"{row['icarma_training']}, " if row.get("icarma_training") else ""
        return f"{training}repair {'on' if row['repair'] else 'off'}"
    return "-"


def _table(rows: list[dict[str, Any]], title: str) -> Table:
    """The paper's layout: one line per (constraint, cost profile, method).

    ``hap x'`` is ``hap_profile``: the least-preferred feature changes in the counterfactual.
    """
    table = Table(title=title, box=box.SIMPLE_HEAD)
    for col in ("constraint", "cost profile", "method", "variant"):
        table.add_column(col, no_wrap=True)
    judged = any(r.get("validity_exact") is not None for r in rows)  # a learned world
    if judged:
        table.add_column("world", no_wrap=True)
    for col in (
        "validity",
        *(("validity (true SCM)", "plausibility (true SCM)") if judged else ()),
        "plausibility",
        "cost ± sd",
        "hap",
        "hap x'",
        "violations",
        "seconds",
        "speedup",
    ):
        table.add_column(col, justify="right", no_wrap=True)
    for r in rows:
        # the exact method's speedup over its per-person search, an amortized one's over it
        speedup = r["oracle_speedup"] if r["oracle_speedup"] is not None else r["icarma_speedup"]
        cost = "-" if r["cost_mean"] is None else f"{r['cost_mean']:.3f}±{_fmt(r['cost_sd'])}"
        table.add_row(
            r["constraint"],
            r["cost_profile"],
            r["method"],
            variant_label(r),
            *((r["world"],) if judged else ()),
            _fmt(r["validity"]),
            *((_fmt(r["validity_exact"]), _fmt(r["plausibility_exact"])) if judged else ()),
            _fmt(r["plausibility"]),
            cost,
            _fmt(r["hap"]),
            _fmt(r["hap_profile"]),
            str(r["violations"]),
            f"{r['seconds']:.2f}",
            "-" if speedup is None else f"{speedup:,.0f}x",
        )
    return table


def _run_with_progress(
    world: Any, classifier: Any, config: Any, threads: int
) -> list[dict[str, Any]]:
    """The benchmark's rows on ``threads`` torch threads, with a progress bar on stderr
    (exit 2: a method is missing)."""
    from engine.artifacts import torch_threads
    from engine.papers.learned_world import truth_of
    from engine.papers.recourse_benchmark import run_benchmark
    from engine.recourse import MethodUnavailableError, capabilities

    per_setting = len(config.methods) + (  # + the exact-world twins on a learned world
        sum(capabilities(m).exact_world for m in config.methods) if truth_of(world) else 0)
    total = len(config.constraints) * len(config.cost_profiles) * per_setting
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                  TextColumn("{task.completed}/{task.total} rows"), TimeElapsedColumn(),
                  console=err) as progress:
        task = progress.add_task("recourse benchmark", total=total)

        def done(row: dict[str, Any]) -> None:
            progress.update(task, advance=1, description=(
                f"{row['method']} {row['constraint']} {row['cost_profile']}"))

        try:
            with torch_threads(threads):
                return run_benchmark(world, classifier, config, on_row=done)
        except MethodUnavailableError as e:
            fail(e, 2)


_SCENARIO = typer.Option(
    "loan", help="Scenario: a shipped name (`recourse-study scenarios`) or a scenario file."
)
_METHODS = typer.Option(
    "oracle", help="Comma-separated methods from the catalogue (oracle, icarma, carma, ...)."
)
_CONSTRAINTS = typer.Option(
    "all,3,2,1,random",
    help="Comma-separated hard-constraint settings: all, a number k of individually "
    "actionable features, random (how many and which uniform).",
)
_ELICITATION = typer.Option("ranking", help="ranking | likert | binary.")
_COST_PROFILES = typer.Option(
    "constant", help="Comma-separated cost profiles: constant, concave, linear, convex."
)
_PREFERENCES = typer.Option(
    "uniform", help="Preference distribution: uniform | co | rco (| privileged ...)."
)
_N = typer.Option(
    None, "--n", help="Use the first N rejected test applicants (default: all)."
)
_SEED = typer.Option(0, help="Seed of the sampled actionability profiles.")
_NO_PLAUSIBILITY = typer.Option(
    False, "--no-plausibility", help="Drop the Oracle's plausibility constraint."
)
_BINS = typer.Option(25, min=1, help="Oracle grid values per actionable feature.")
_ORACLE_GRID = typer.Option(
    "factual",
    help="Oracle grid: factual (the paper's: bins around each person's value, clipped to "
    "the training range) | carma (CARMA's reference layout) | shared (ours: one grid "
    "over the range for everybody).",
)
_REPAIR = typer.Option(
    False,
    "--repair/--no-repair",
    help="iCARMA/CARMA: our final validity check (off in the paper; every row says).",
)
_ICARMA_TRAINING = typer.Option(
    "paper",
    help="iCARMA's trained models: paper (one per cost profile, best of the seeds on "
    "validation; `train --icarma-training paper`) | fast (ours; `train`).",
)
_SCORE_SAMPLING = typer.Option(
    "iid",
    help="Likert scores: iid (the paper's: uniform, with a 'cannot change' level when "
    "the actionable set is random) | sorted (ours).",
)
_SPEEDUP_SAMPLE = typer.Option(
    8,
    min=0,
    help="People timed with the straightforward per-person grid loop (0: skip).",
)
_DECISION_MODEL = typer.Option(
    "trained",
    help="trained (the scenario's artifact) | bayes (the exact Bayes rule, a reference).",
)
_THREADS = typer.Option(
    1, min=1, help="Torch threads (one is fastest on a small machine: docs/benchmarks.md, "
    "\"Findings behind the code\")."
)


@benchmark_app.command("recourse")
def recourse(
    scenario: str = _SCENARIO,
    methods: str = _METHODS,
    constraints: str = _CONSTRAINTS,
    elicitation: Elicitation = _ELICITATION,
    cost_profiles: str = _COST_PROFILES,
    preferences: str = _PREFERENCES,
    n: int | None = _N,
    seed: int = _SEED,
    no_plausibility: bool = _NO_PLAUSIBILITY,
    bins: int = _BINS,
    oracle_grid: OracleGrid = _ORACLE_GRID,
    repair: bool = _REPAIR,
    icarma_training: IcarmaTraining = _ICARMA_TRAINING,
    score_sampling: ScoreSampling = _SCORE_SAMPLING,
    speedup_sample: int = _SPEEDUP_SAMPLE,
    decision_model: BenchmarkDecisionModel = _DECISION_MODEL,
    threads: int = _THREADS,
    train: bool = train_option(),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Validity, plausibility, cost and hap of the methods.

    The population is the deployment-test applicants the decision model rejects (or the first
    --n). Each constraint setting draws one set of actionability profiles (seeded by --seed and
    the setting) that every method and cost profile shares. Densities are exact (the scenario's
    SCM). Methods that are not implemented or not trained fail the command before any work.

    On a data scenario (`loan-data`: a world learned from samples) methods plan on the learned
    flow; when the scenario names the SCM that made its data, each row also reports its plans
    judged by that SCM (validity_exact, plausibility_exact) and each Oracle row gets a twin
    with world "exact" (the Oracle searching the true SCM for the same people): what not
    knowing the equations costs.

    JSON: {config {methods, constraints, elicitation, cost_profiles, preferences, n, seed,
    plausibility, bins, speedup_sample, oracle_grid, repair, icarma_training, score_sampling,
    decision_model, threads}, rows}; rows holds one row per (constraint, cost profile, method):
    scenario, method, constraint ("all" | "k" | "random"), n_actionable (int, null for random),
    preferences, elicitation, cost_profile, oracle_grid (Oracle rows), repair and
    icarma_training (iCARMA/CARMA rows), score_sampling (Likert), n, validity, plausibility,
    cost_mean, cost_sd (unweighted cost over valid recourses), hap, violations (actions outside
    the person's actionable set, summed), hap_profile (hap counting the least-preferred
    feature's change in the counterfactual profile, consequences included), found (share with
    an action), seconds (wall time of the method's recourse call), density_source, seed,
    oracle_plausibility and bins (Oracle rows; null otherwise), oracle_speedup (per-person grid
    loop seconds per person / Oracle seconds per person, measured on --speedup-sample people in
    the same run), oracle_agreement (share of that sample with the same optimum),
    icarma_speedup (iCARMA/CARMA rows: Oracle seconds per person / the method's; artifact
    loading excluded), seconds_5000 (iCARMA/CARMA rows: one recourse call for 5,000 people,
    evaluation included), world ("exact" | "learned": the world the method planned on),
    validity_exact and plausibility_exact (rows of a learned world whose true SCM is known: the
    plans applied in the true SCM, judged by the same decision model / the true density; else
    null). Undefined values are null.
    """
    from engine.papers.recourse_benchmark import BenchmarkConfig

    world = scenario_or_fail(scenario, json_out)
    config = BenchmarkConfig(
        methods=_split(methods, "--methods"), constraints=_split(constraints, "--constraints"),
        elicitation=elicitation, cost_profiles=_split(cost_profiles, "--cost-profiles"),
        preferences=preferences, n=n, seed=seed, plausibility=not no_plausibility, bins=bins,
        speedup_sample=speedup_sample, oracle_grid=oracle_grid, repair=repair,
        icarma_training=icarma_training, score_sampling=score_sampling,
    )
    try:
        config.validate(world)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from e
    offer_training(world.name, benchmark_setups(config.methods, icarma_training, elicitation,
                                                config.cost_profiles),
                   train=train, json_out=json_out)
    classifier = benchmark_classifier(world, decision_model)
    rows = _run_with_progress(world, classifier, config, threads)
    doc = {"config": {**vars(config), "decision_model": decision_model,
                      "threads": threads}, "rows": rows}
    emit(doc, json_out=json_out, json_file=json_file,
         human=lambda: _print(world.name, config, rows, decision_model, json_out))


def _print(world: str, config: Any, rows: list[dict[str, Any]], decision_model: str,
           json_out: bool) -> None:
    title = (f"Recourse on {world} ({rows[0]['n']} rejected applicants; preferences "
             f"{config.preferences}, {config.elicitation}; plausibility "
             f"{'on' if config.plausibility else 'off'} for the Oracle; decision model "
             f"{decision_model})")
    # The table needs about 145 columns (185 with a learned world's true-SCM columns); never
    # squeeze it below that.
    width = 210 if rows[0].get("validity_exact") is not None else 160
    result_console(json_out, min_width=width).print(_table(rows, title))
