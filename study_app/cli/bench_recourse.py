"""`recourse-study benchmark recourse`: the iCARMA paper's recourse tables (Tables 1-3, 5, 6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich import box
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from study_app.cli.apps import benchmark_app, benchmark_classifier
from study_app.cli.apps import split_list as _split

_console = Console(stderr=True)  # progress and notes


def _fmt(v: float | None, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def variant_label(row: dict[str, Any]) -> str:
    """Which switches a row ran with, e.g. "grid factual" or "paper, repair off"."""
    if row.get("oracle_grid"):
        return f"grid {row['oracle_grid']}"
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
    for col in (
        "validity",
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
        speedup = r["oracle_speedup"] if r["method"] == "oracle" else r["icarma_speedup"]
        cost = "-" if r["cost_mean"] is None else f"{r['cost_mean']:.3f}±{_fmt(r['cost_sd'])}"
        table.add_row(
            r["constraint"],
            r["cost_profile"],
            r["method"],
            variant_label(r),
            _fmt(r["validity"]),
            _fmt(r["plausibility"]),
            cost,
            _fmt(r["hap"]),
            _fmt(r["hap_profile"]),
            str(r["violations"]),
            f"{r['seconds']:.2f}",
            "-" if speedup is None else f"{speedup:,.0f}x",
        )
    return table


@benchmark_app.command("recourse")
def recourse(
    scenario: str = typer.Option("loan", help="Scenario name."),
    methods: str = typer.Option(
        "oracle", help="Comma-separated methods from the catalogue (oracle, icarma, carma, ...)."
    ),
    constraints: str = typer.Option(
        "all,3,2,1,random",
        help="Comma-separated hard-constraint settings: all, a number k of individually "
        "actionable features, random (how many and which uniform).",
    ),
    elicitation: str = typer.Option("ranking", help="ranking | likert | binary."),
    cost_profiles: str = typer.Option(
        "constant", help="Comma-separated cost profiles: constant, concave, linear, convex."
    ),
    preferences: str = typer.Option(
        "uniform", help="Preference distribution: uniform | co | rco (| privileged ...)."
    ),
    n: int | None = typer.Option(
        None, "--n", help="Use the first N rejected test applicants (default: all)."
    ),
    seed: int = typer.Option(0, help="Seed of the sampled actionability profiles."),
    no_plausibility: bool = typer.Option(
        False, "--no-plausibility", help="Drop the Oracle's plausibility constraint."
    ),
    bins: int = typer.Option(25, min=1, help="Oracle grid values per actionable feature."),
    oracle_grid: str = typer.Option(
        "factual",
        help="Oracle grid: factual (the paper's: bins around each person's value, clipped to "
        "the training range) | shared (ours: one grid over the range for everybody).",
    ),
    repair: bool = typer.Option(
        False,
        "--repair/--no-repair",
        help="iCARMA/CARMA: our final validity check (off in the paper; every row says).",
    ),
    icarma_training: str = typer.Option(
        "paper",
        help="iCARMA's trained models: paper (one per cost profile, best of the seeds on "
        "validation; `train --icarma-training paper`) | fast (ours; `train`).",
    ),
    score_sampling: str = typer.Option(
        "iid",
        help="Likert scores: iid (the paper's: uniform, with a 'cannot change' level when "
        "the actionable set is random) | sorted (ours).",
    ),
    speedup_sample: int = typer.Option(
        8,
        min=0,
        help="People timed with the straightforward per-person grid loop (0: skip).",
    ),
    decision_model: str = typer.Option(
        "trained",
        help="trained (the scenario's artifact) | bayes (the exact Bayes rule, a reference).",
    ),
    threads: int = typer.Option(
        1, min=1, help="Torch threads (one is fastest on a shared 2-core machine: the Oracle "
        "took 8.5 s for everyone on one thread, 60 s on two, under load)."
    ),
    json_file: Path | None = typer.Option(None, "--json", help="Write the rows here."),
) -> None:
    """Validity, plausibility, cost and hap of recourse methods under individual constraints.

    The population is the deployment-test applicants the decision model rejects (or the first
    --n). Each constraint setting draws one set of actionability profiles (seeded by --seed
    and the setting) that every method and cost profile shares. Densities are exact (the
    scenario's SCM). Methods that are not implemented or not trained fail the command before
    any work.

    --json writes a list of rows, one per (constraint, cost profile, method): scenario,
    method, constraint ("all" | "k" | "random"), n_actionable (int, null for random),
    preferences, elicitation, cost_profile, oracle_grid (Oracle rows), repair and
    icarma_training (iCARMA/CARMA rows), score_sampling (Likert), n, validity, plausibility,
    cost_mean, cost_sd
    (unweighted cost over valid recourses), hap, violations (actions outside the person's
    actionable set, summed), hap_profile (hap counting the least-preferred feature's change in
    the counterfactual profile, consequences included), found (share with an action), seconds (wall time of the
    method's recourse call), density_source, seed, oracle_plausibility and bins (Oracle rows;
    null otherwise), oracle_speedup (per-person grid loop seconds per person / Oracle seconds
    per person, measured on --speedup-sample people in the same run), oracle_agreement (share
    of that sample with the same optimum), icarma_speedup (iCARMA/CARMA rows: Oracle seconds
    per person / the method's; artifact loading excluded), seconds_5000 (iCARMA/CARMA rows:
    one recourse call for 5,000 people, evaluation included). Undefined values are null.
    """
    from engine.artifacts import torch_threads
    from engine.recourse_benchmark import (
        BenchmarkConfig,
        MethodUnavailableError,
        run_benchmark,
    )
    from engine.scenarios import UnknownScenarioError, get_scenario

    try:
        world = get_scenario(scenario)
    except UnknownScenarioError as e:
        raise typer.BadParameter(str(e)) from e
    config = BenchmarkConfig(
        methods=_split(methods, "--methods"),
        constraints=_split(constraints, "--constraints"),
        elicitation=elicitation,
        cost_profiles=_split(cost_profiles, "--cost-profiles"),
        preferences=preferences,
        n=n,
        seed=seed,
        plausibility=not no_plausibility,
        bins=bins,
        speedup_sample=speedup_sample,
        oracle_grid=oracle_grid,
        repair=repair,
        icarma_training=icarma_training,
        score_sampling=score_sampling,
    )
    try:
        config.validate(world)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from e
    classifier = benchmark_classifier(world, decision_model)
    total = len(config.constraints) * len(config.cost_profiles) * len(config.methods)
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} rows"),
        TimeElapsedColumn(),
        console=_console,
    ) as progress:
        task = progress.add_task("recourse benchmark", total=total)

        def done(row: dict[str, Any]) -> None:
            progress.update(
                task,
                advance=1,
                description=f"{row['method']} {row['constraint']} {row['cost_profile']}",
            )

        try:
            with torch_threads(threads):
                rows = run_benchmark(world, classifier, config, on_row=done)
        except MethodUnavailableError as e:
            _console.print(f"[red]error:[/red] {e}")
            raise typer.Exit(2) from e
    title = (
        f"Recourse on {world.name} ({rows[0]['n']} rejected applicants; preferences "
        f"{config.preferences}, {config.elicitation}; plausibility "
        f"{'on' if config.plausibility else 'off'} for the Oracle; decision model "
        f"{decision_model})"
    )
    # The table needs about 145 columns; never squeeze it below that.
    out = Console()
    out.width = max(out.width, 160)
    out.print(_table(rows, title))
    if json_file is not None:
        json_file.parent.mkdir(parents=True, exist_ok=True)
        json_file.write_text(json.dumps(rows, indent=2))
        _console.print(f"rows written to {json_file}")
