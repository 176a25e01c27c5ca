"""`recourse-study train --icarma-training paper`: the iCARMA paper's models per setup, with
overall progress and an estimate of the time left, or (``--compare``) both ways of training
timed side by side."""

from __future__ import annotations

from typing import Any

import typer
from rich.progress import (
    BarColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from study_app.cli.output import err
from study_app.cli.training_progress import task_reporter

OVERALL = "all paper models"


def check_setups(elicitations: tuple[str, ...], cost_profiles: tuple[str, ...]) -> None:
    """Exit 2 (BadParameter) on an unknown elicitation or cost profile."""
    from engine.papers.icarma.models import PAPER_ELICITATIONS
    from engine.preferences import COST_PROFILE_EXPONENTS

    for e in elicitations:
        if e not in PAPER_ELICITATIONS:
            raise typer.BadParameter(
                f"unknown elicitation {e!r}; expected {', '.join(PAPER_ELICITATIONS)}",
                param_hint="--elicitations",
            )
    for c in cost_profiles:
        if c not in COST_PROFILE_EXPONENTS:
            raise typer.BadParameter(
                f"unknown cost profile {c!r}; expected {', '.join(COST_PROFILE_EXPONENTS)}",
                param_hint="--cost-profiles",
            )


def paper_progress(json_out: bool) -> Progress:
    """Bars on stderr: one per artifact, and the overall one with the time left."""
    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[note]}"),
        TimeElapsedColumn(), TimeRemainingColumn(), console=err, transient=json_out,
    )


def train_paper_models(
    scenario: str, setups: list[tuple[str, str]], seeds: int, *, quick: bool, force: bool,
    ensemble: bool, changes: dict[str, Any] | None, json_out: bool,
) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
    """Every setup's seeds and selection (engine.papers.icarma.setups) with a bar per model
    and an overall one: the records, the selected seeds, the plan (estimate before training)."""
    from engine.artifact_plan import format_duration
    from engine.papers.icarma.plan import describe_plan
    from engine.papers.icarma.setups import prepare_setups, train_setups

    with paper_progress(json_out) as progress:
        report = task_reporter(progress)
        plans = prepare_setups(scenario, setups, seeds, quick=quick, force=force,
                               changes=changes, progress=report)
        estimate = sum(p.seconds(ensemble) for p in plans)
        if estimate:
            err.print(f"{describe_plan(plans, ensemble)}.")
        overall = progress.add_task(OVERALL, total=max(estimate, 1e-9),
                                    note=f"estimate {format_duration(estimate)}")
        trained = train_setups(
            scenario, plans, seeds, quick=quick, force=force, ensemble=ensemble,
            changes=changes, progress=report,
            advance=lambda seconds: progress.update(overall, completed=seconds))
    records = [r for models in trained for r in (*models.members, models.selected)]
    selected = {m.selected.name: {"seed": m.selected.metadata["metrics"]["selected_seed"],
                                  "val_scores": m.selected.metadata["metrics"]["val_scores"]}
                for m in trained}
    plan_doc = {"estimate_seconds": estimate, "ensemble": ensemble,
                "missing": {p.label: list(p.missing) for p in plans if p.missing}}
    return records, selected, plan_doc


def compare_paper_training(
    scenario: str, setups: list[tuple[str, str]], seeds: int, *, quick: bool,
    changes: dict[str, Any] | None, json_out: bool,
) -> list[dict[str, Any]]:
    """Per setup both ways of training its seeds, timed (engine.papers.icarma.training)."""
    from engine.papers.icarma.training import compare_training

    results = []
    with paper_progress(json_out) as progress:
        report = task_reporter(progress)

        for elicitation, cost_profile in setups:
            results.append(compare_training(scenario, elicitation, cost_profile, seeds,
                                            quick=quick, changes=changes, progress=report))
    return results


def compare_table(results: list[dict[str, Any]]) -> Table:
    table = Table(title="The paper's seeds trained one after another vs together")
    for col in ("setup", "seeds", "epochs", "per-seed loop", "ensemble", "speedup",
                "processor time (loop / ensemble)", "speedup (processor)",
                "bitwise equal", "max weight diff", "selected seed", "load average (start / between / end)"):
        table.add_column(col)
    for r in results:
        la = r["load_average"]
        diff = max(m["max_weight_difference"] for m in r["members"])
        equal = sum(m["bitwise_equal"] for m in r["members"])
        sel = r["selected_seed"]
        table.add_row(
            r["setup"], str(r["seeds"]), str(r["epochs"]),
            f"{r['seconds']['per_seed_loop']:.1f} s", f"{r['seconds']['ensemble']:.1f} s",
            f"{r['speedup']:.2f}x",
            f"{r['cpu_seconds']['per_seed_loop']:.1f} s / {r['cpu_seconds']['ensemble']:.1f} s",
            f"{r['cpu_speedup']:.2f}x", f"{equal} of {len(r['members'])}", f"{diff:.2g}",
            f"{sel['per_seed_loop']} / {sel['ensemble']}",
            " / ".join(f"{la[k][0]:.1f}" for k in ("start", "after_per_seed_loop",
                                                   "after_ensemble")),
        )
    return table


__all__ = ["check_setups", "compare_paper_training", "compare_table", "train_paper_models"]
