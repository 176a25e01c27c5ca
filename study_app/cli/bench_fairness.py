"""`recourse-study benchmark fairness`: the iCARMA paper's fairness case study (section 5.5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from study_app.cli.apps import benchmark_app, benchmark_classifier, scenario_or_fail
from study_app.cli.choices import BenchmarkDecisionModel, IcarmaTraining
from study_app.cli.output import emit, err, fail, json_file_option, json_option, result_console
from study_app.cli.paper_needs import benchmark_setups, offer_training, train_option

TABLE_WIDTH = 140  # the gap table needs about 130 columns: never squeeze it


def _build_method(
    scenario_name: str, method_name: str, decision_model: str, options: dict[str, Any]
) -> Any:
    """The decision model, the method on it, with the scenario's exact SCM for densities."""
    from engine.recourse import METHODS, MethodUnavailableError, RecourseContext, build_method
    scenario = scenario_or_fail(scenario_name)
    if method_name not in METHODS:
        raise typer.BadParameter(
            f"unknown method {method_name!r}; expected one of {', '.join(sorted(METHODS))}"
        )
    classifier = benchmark_classifier(scenario, decision_model)
    try:
        return build_method(method_name, RecourseContext(scenario, classifier), **options)
    except (MethodUnavailableError, ValueError) as e:
        fail(f"method {method_name!r} cannot be built: {e}", 2)


def _interval(r: dict[str, float | None], digits: int) -> str:
    if r is None or r.get("estimate") is None:
        return "n/a"
    lo = "n/a" if r["lo"] is None else f"{r['lo']:+.{digits}f}"
    hi = "n/a" if r["hi"] is None else f"{r['hi']:+.{digits}f}"
    return f"{r['estimate']:+.{digits}f} [{lo}, {hi}]"


def _gap_table(doc: dict[str, Any]) -> Table:
    table = Table(
        title=f"Group gaps ({doc['method']}, {doc['population']['n']} rejected applicants; "
        f"{int(doc['level'] * 100)}% bootstrap intervals; change = gap - baseline gap)"
    )
    for col in ("assignment", "metric", "contrast", "gap", "change vs none", "worst-off cell"):
        table.add_column(col)
    worst = {(w["assignment"], w["metric"]): w for w in doc["worst_cell"]}
    for g in doc["gaps"]:
        if g["metric"] == "validity" or g["axis"] == "intersection":
            continue
        digits = 3 if g["metric"] == "cost" else 2
        w = worst[(g["assignment"], g["metric"])]
        table.add_row(
            g["assignment"],
            g["metric"],
            g["contrast"],
            _interval(g, digits),
            _interval(g["change_vs_none"], digits) if g["change_vs_none"] else "-",
            f"{w['cell']} (margin {_interval(w['margin'], digits)})" if g["axis"] == "race" else "",
        )
    return table


_SCENARIO = typer.Option("loan", help="Scenario name (needs gender and income).")
_N = typer.Option(
    None, "--n", min=1, help="First N rejected test applicants (default: all of them)."
)
_SEED = typer.Option(0, help="Seed of race, sampling, profiles and bootstrap.")
_METHOD = typer.Option(
    "icarma", help="Recourse method from the catalogue (the paper uses iCARMA)."
)
_DECISION_MODEL = typer.Option(
    "trained",
    help="trained (the scenario's artifact) | bayes (the exact Bayes rule, a reference).",
)
_ICARMA_TRAINING = typer.Option(
    "paper", help="iCARMA: paper (the paper's models) | fast (ours)."
)
_REPAIR = typer.Option(
    False, "--repair/--no-repair", help="iCARMA/CARMA: our final validity check (off: the "
    "paper)."
)
_N_BOOT = typer.Option(1000, "--bootstrap", min=1, help="Bootstrap resamples.")
_LEVEL = typer.Option(0.95, help="Interval level, in (0, 1).")
_PLOT = typer.Option(None, "--plot", help="Write the figure here (PNG).")


@benchmark_app.command("fairness")
def fairness(
    scenario: str = _SCENARIO,
    n: int | None = _N,
    seed: int = _SEED,
    method: str = _METHOD,
    decision_model: BenchmarkDecisionModel = _DECISION_MODEL,
    icarma_training: IcarmaTraining = _ICARMA_TRAINING,
    repair: bool = _REPAIR,
    n_boot: int = _N_BOOT,
    level: float = _LEVEL,
    train: bool = train_option(),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
    plot: Path | None = _PLOT,
) -> None:
    """Recourse cost and plausibility by gender and race.

    Recourse cost and plausibility by gender, race and both, under four preference
    assignments (iCARMA paper, section 5.5 and Figure 4).

    A stylized race is drawn at random (half of each gender); ``--n`` rejected test applicants
    get recourse from the method under each assignment: none (all four actionable features
    usable), random, income-dependent (top 25% income privileged) and race-correlated (90% of
    white, 5% of non-white applicants privileged); outside the baseline everyone may act on
    exactly two features (privileged: biased toward income and savings; non-privileged:
    toward loan amount and duration). Densities are exact (the scenario's SCM).

    JSON: scenario, method, method_label, decision_model, repair and icarma_training (null
    for methods without the option), seed, n_boot, level, density_source;
    population {n, n_test, n_rejected, cells {cell: count}}; assignments [{name, label,
    privileged_share, n_actionable, validity, seconds}]; groups [{assignment, metric (cost |
    log_prob_cf | validity), axis (gender | race | intersection), group, estimate, lo, hi, n,
    n_used, privileged_share}]; gaps [{assignment, metric, axis, contrast ("female - male",
    "non-white - white", "<cell> - white male"), estimate, lo, hi, change_vs_none {estimate,
    lo, hi} or null}]; worst_cell [{assignment, metric, cell, runner_up, margin {estimate,
    lo, hi}}]. Cost and log_prob_cf are over valid recourses; a missing value is null.
    """
    from analysis.fairness_plot import save_fairness_figure
    from engine.papers.icarma import fairness as study

    if not 0 < level < 1:
        raise typer.BadParameter(f"--level must be in (0, 1), got {level}")
    if plot is not None and plot.suffix.lower() != ".png":
        raise typer.BadParameter(f"--plot must name a .png file, got {plot.name!r}")
    from engine.recourse import METHODS, option_names

    switches = {"repair": repair, "training": icarma_training}
    options = ({k: v for k, v in switches.items() if k in option_names(method)}
               if method in METHODS else {})
    # the fairness study's profiles are rankings, its cost profile the constant one
    offer_training(scenario_or_fail(scenario, json_out).name,
                   benchmark_setups((method,), icarma_training, "ranking", ("constant",)),
                   train=train, json_out=json_out)
    recourse = _build_method(scenario, method, decision_model, options)
    try:
        population = study.fairness_population(
            recourse.context.scenario, recourse.context.classifier, n, seed
        )
    except (KeyError, ValueError) as e:
        raise typer.BadParameter(str(e)) from e
    summary = _run(recourse, population, method, n_boot, level, seed)
    doc = {
        "scenario": scenario,
        "method": method,
        "method_label": recourse.name,
        "decision_model": decision_model,
        "repair": options.get("repair"),
        "icarma_training": getattr(recourse, "training", None),
        "seed": seed,
        **summary,
    }
    if plot is not None:
        save_fairness_figure(doc, plot)
        err.print(f"figure written to {plot}")
    emit(doc, json_out=json_out, json_file=json_file,
         human=lambda: result_console(json_out, min_width=TABLE_WIDTH).print(_gap_table(doc)))


def _run(recourse: Any, population: Any, method: str, n_boot: int, level: float,
         seed: int) -> dict[str, Any]:
    """The four assignments' recourse with a progress bar, then the bootstrap intervals of
    the disparities (exit 2: a model not trained, a group left empty)."""
    from engine.papers.icarma import disparities
    from engine.papers.icarma import fairness as study

    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} assignments"),
        TimeElapsedColumn(),
        console=err,
    ) as progress:
        task = progress.add_task(f"{method} recourse for {len(population)} applicants", total=4)
        try:
            outcomes = study.run_fairness(
                recourse, population, seed=seed, on_done=lambda a: progress.advance(task)
            )
        except FileNotFoundError as e:  # an amortized method whose model is not trained
            fail(e, 2)
        progress.update(task, description="bootstrap intervals")
        try:
            return disparities.fairness_summary(
                population, outcomes, n_boot=n_boot, level=level, seed=seed
            )
        except ValueError as e:  # an empty group: too few applicants
            fail(f"{e} (take more applicants with --n)", 2)
