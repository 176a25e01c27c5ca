"""`recourse-study analyze`: Bayesian analysis of a study's ratings, report and summary."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from study_app.cli.apps import app

_console = Console(stderr=True)


@app.command("analyze")
def analyze(
    db: Path = typer.Option(..., help="The study database (DuckDB)."),
    out: Path = typer.Option(..., help="Folder for report.html, summary.json and traces/."),
    study: str | None = typer.Option(None, help="Study id (default: the only study in the DB)."),
    distance: str = typer.Option(
        "l1_profile", help="Main distance: l0_actions | l1_actions | l0_profile | l1_profile."),
    backend: str = typer.Option("nutpie", help="Sampler: nutpie (fastest here) | pymc."),
    draws: int = typer.Option(1000, min=50, help="Posterior draws per chain."),
    tune: int | None = typer.Option(
        None, min=50, help="Tuning steps per chain (default: the backend's own, nutpie 300, PyMC 1000)."),
    chains: int = typer.Option(4, min=1, help="Chains."),
    seed: int = typer.Option(0, help="Sampling seed."),
    target_accept: float | None = typer.Option(
        None, min=0.5, max=0.999,
        help="NUTS step-size target (default 0.95, analysis.fit); raise it "
             "(e.g. 0.99) if a model reports divergences."),
    gaussian: bool = typer.Option(True, help="Also fit the Gaussian variant."),
    json_out: bool = typer.Option(False, "--json", help="Print summary.json on stdout."),
) -> None:
    """Fit the hierarchical ordinal models of acceptance and action against L0 and L1 of the
    chosen family (plus the Gaussian variant), and write OUT/report.html (self-contained),
    OUT/summary.json and OUT/traces/*.nc.

    summary.json: {study_id, n_ratings, n_participants, models [{outcome, distance,
    likelihood, n, participants, smooth [{d, mean, lo, hi}] (95% band), coefficients [{name,
    group (effect | arm | variance), mean, lo, hi}] (central 94% interval), max_rhat, min_ess,
    min_ess_tail, divergences, seconds, backend, warnings}], loo {outcome: [{model, rank,
    elpd_loo, se, elpd_diff, dse, weight}]}, recourse_table [{arm, method, plans, validity,
    plausibility, cost, hap, l0_actions, l1_actions, l0_profile, l1_profile, satisfaction,
    violation}]}.
    """
    from analysis.models import AnalysisDataError
    from analysis.pipeline import distance_family, run_analysis
    from analysis.report import render
    from data.store import Store

    if not db.exists():
        raise typer.BadParameter(f"no database at {db}", param_hint="--db")
    if backend not in ("nutpie", "pymc"):
        raise typer.BadParameter(f"backend must be nutpie or pymc, got {backend!r}")
    try:
        distance_family(distance)
    except AnalysisDataError as e:
        raise typer.BadParameter(str(e), param_hint="--distance") from e
    try:
        with Store(db, read_only=True) as store:
            studies = list(store.studies()["study_id"])
            if study is None:
                if len(studies) != 1:
                    raise typer.BadParameter(
                        f"the database holds {len(studies)} studies ({', '.join(studies) or 'none'});"
                        " name one with --study", param_hint="--study")
                study = studies[0]
            elif study not in studies:
                raise typer.BadParameter(
                    f"no study {study!r} in {db} (it holds: {', '.join(studies) or 'none'})",
                    param_hint="--study")
            ratings = store.ratings_long(study)
            plans = store.plans(study)
    except typer.BadParameter:
        raise
    except Exception as e:  # not a DuckDB file, or not one of ours
        _console.print(f"[red]error:[/red] cannot read {db} as a study database: {e}")
        raise typer.Exit(2) from e
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=_console) as progress:
        task = progress.add_task("fitting", total=None)
        try:
            result = run_analysis(
                ratings, plans, study_id=study, distance=distance, backend=backend,
                draws=draws, tune=tune, chains=chains, seed=seed, target_accept=target_accept,
                gaussian=gaussian,
                traces=out / "traces",
                on_step=lambda m: progress.update(task, description=f"fitting {m}"))
        except AnalysisDataError as e:
            _console.print(f"[red]error:[/red] study {study!r}: {e}")
            raise typer.Exit(2) from e
    out.mkdir(parents=True, exist_ok=True)
    summary = result.summary()
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=float))
    (out / "report.html").write_text(render(result), encoding="utf-8")
    warned = False
    for m in summary["models"]:
        if m["warnings"]:
            warned = True
            _console.print(f"[yellow]warning:[/yellow] {m['outcome']} ~ s({m['distance']}) "
                           f"{m['likelihood']}: {'; '.join(m['warnings'])}")
    if warned:
        _console.print(f"  treat those models' intervals with care; more draws usually fix low "
                       f"ESS or R-hat (e.g. --draws {2 * draws} --tune 1000), a higher "
                       f"--target-accept (e.g. 0.99) divergences")
    _console.print(f"report written to {out / 'report.html'}")
    if json_out:
        print(json.dumps(summary, default=float))
