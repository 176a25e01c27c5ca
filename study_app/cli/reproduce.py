"""`recourse-study reproduce TARGET`: a paper's table, ours beside theirs."""

from __future__ import annotations

import math
import shlex
import time
from pathlib import Path
from typing import Any

import typer
from rich import box
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from engine.icarma_choices import (
    CALIBRATED_VALIDITY_WEIGHT,
    DEFAULT_MASK_HEAD,
    PAPER_ACTION_SPACE,
    PAPER_SEEDS,
    PAPER_VALIDITY_MULTIPLIER,
)
from engine.papers.reproduce_choices import CARMAS_CLAMP, REPRODUCE_SCENARIO
from study_app.cli.apps import GROUND_TRUTH_HELP, ITERATIONS_READING_HELP, app, scenario_or_fail
from study_app.cli.choices import FinalAccept, GammaSchedule, GroundTruth, IterationsReading
from study_app.cli.output import emit, err, fail, json_file_option, json_option, result_console
from study_app.cli.paper_needs import offer_training, train_option
from study_app.cli.run_provenance import RunClock, provenance

TABLE_WIDTH = 150  # the cell table: never squeeze it


def _num(v: float | None, digits: int = 3) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def result_table(doc: dict[str, Any]) -> Table:
    """One line per cell: table and row, method, metric, paper, ours, seeds, diff, within."""
    table = Table(
        title=f"{doc['target']}: {doc['title']} — {doc['table']} "
        f"({doc['config'].get('seeds')} seed(s), {doc['seconds']:.0f} s)",
        box=box.SIMPLE_HEAD,
    )
    for col in ("row", "method", "metric"):
        table.add_column(col)
    for col in ("paper", "ours", "mean ± sd (seeds)", "diff", "tolerance", "within"):
        table.add_column(col, justify="right", no_wrap=True)
    for c in doc["cells"]:
        paper = _num(c["paper"])
        if c.get("paper_range"):
            paper += f" [{c['paper_range'][0]:.2f}, {c['paper_range'][1]:.2f}]"
        spread = "-" if c["ours_mean"] is None else (
            f"{c['ours_mean']:.3f} ± {_num(c['ours_sd'])} ({c['seeds']})"
        )
        within = {True: "[green]yes[/green]", False: "[red]no[/red]", None: "-"}[c["within"]]
        diff = "-" if c["diff"] is None else f"{c['diff']:+.3f}"
        table.add_row(c["row"], c["method"], c["metric"], paper, _num(c["ours"]), spread, diff,
                      _num(c["tolerance"], 2), within)
    return table


def print_result(out: Console, doc: dict[str, Any]) -> None:
    """The cell table on ``out``; the checks, notes and summary line on stderr."""
    out.print(result_table(doc))
    for c in doc["checks"]:
        mark = "[green]PASS[/green]" if c["passed"] else "[red]FAIL[/red]"
        err.print(f"{mark} {c['claim']}: {c['detail']}")
    for n in doc["notes"]:
        err.print(f"[dim]note: {n}[/dim]")
    s = doc["summary"]
    err.print(f"{s['within']}/{s['judged']} cells within tolerance, "
              f"{s['checks_passed']}/{s['checks']} checks passed, {doc['seconds']:.1f} s\n")


def given_command(ctx: typer.Context) -> str:
    """The command line as given: the arguments and every option set on the command line
    (not the defaults), so a stored result says how to make it again; the output options
    (--json, --json-file), which change no figure, are left out."""
    words = ["recourse-study", ctx.info_name or "reproduce"]
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name) if param.name else None
        if param.name in (None, "json_out", "json_file") or source is None or (
                source.name == "DEFAULT"):
            continue
        value = ctx.params[param.name]
        if param.param_type_name == "argument":
            words.append(str(value))
        elif getattr(param, "is_flag", False):
            words.append(param.opts[0] if value or not param.secondary_opts
                         else param.secondary_opts[0])
        else:
            words += [param.opts[0], str(value)]
    return shlex.join(words)


def _paper_models_of(config: Any, train: bool, json_out: bool) -> None:
    """The paper's models an iCARMA target evaluates (engine.papers.icarma.variants.
    needed_models): missing ones stop the run with the estimate (``--train``: train them
    first)."""
    from engine.papers.icarma.variants import needed_models

    setups, changes = needed_models(config)
    if setups:
        offer_training(config.scenario, setups, train=train, json_out=json_out,
                       seeds=config.seeds or PAPER_SEEDS, changes=changes,
                       selection_only=False)


_TARGET = typer.Argument(
    ..., help="icarma-table1 | icarma-table2 | icarma-table3 | icarma-fairness | "
    "hare-budget | hare-iterations | hare-calibration | hare-scale (HARE on Loan, as "
    "ratios) | hare-table1 | hare-table2 | hare-table3 | hare-table4 (HARE on Adult, "
    "COMPAS and GiveMeSomeCredit, the paper's data sets) | all | tominaga (the reference "
    "user study's Table S2 from mgcv on a simulated study; not part of all)."
)
_SEEDS = typer.Option(
    None, min=1,
    help="iCARMA: models per setup (seeds 1000, 2000, ...; the paper: 10); HARE: seeds "
    "(the paper: 5). Default: the paper's (1 / 2 with --fast).",
)
_FAST = typer.Option(
    False, "--fast",
    help="Minutes instead of hours: one seed and 20 training epochs for iCARMA, the Oracle "
    "over 3 profile draws, 40 people x 2 seeds and 30 sampling steps for HARE (the "
    "hare-table targets: see engine/papers/hare/table_specs.py FAST_RUN). Not "
    "the paper's configuration.",
)
_N = typer.Option(
    None, "--n", min=1, help="Only the first N rejected applicants (HARE: people per "
    "seed; tominaga: simulated participants, default the paper's 362)."
)
_SCENARIO = typer.Option(
    REPRODUCE_SCENARIO,
    help="Scenario (default: CARMA's published Loan samples with the decision model trained "
    "by CARMA's classifier recipe; `loan-carma` has the platform's accurate Adam model). "
    "The hare-table targets run the paper's data sets by default; another scenario runs "
    "alone, with its trained decision model.",
)
_VALIDITY_MULTIPLIER = typer.Option(
    PAPER_VALIDITY_MULTIPLIER,
    help="iCARMA's hinge weight: lagrangian (CARMA's multiplier, the paper's pipeline) | "
    "lagrangian-acting (the multiplier updated on the draws whose sampled mask acts; a "
    "variant) | fixed (--validity-weight; a variant). Models are cached per choice.",
)
_VALIDITY_WEIGHT = typer.Option(
    None, help="The hinge's weight with --validity-multiplier fixed (> 0; default: "
    f"{CALIBRATED_VALIDITY_WEIGHT:g}, calibrated on Table 1's plausibility).",
)
_KEEP = typer.Option(
    "last",
    help="iCARMA: each training run's last state (the paper's pipeline, as CARMA's code) "
    "| best (its lowest validation-loss epoch; not the paper's). Models are cached per "
    "choice.",
)
_MASK_HEAD = typer.Option(
    DEFAULT_MASK_HEAD,
    help="iCARMA's mask network: log-odds (one output per feature, deployed as "
    "1[log-odds > 0]) | carma (CARMA's code: two logits per feature, deployed as "
    "1[on-logit > 0]). Models are cached per choice.",
)
_ACTION_SPACE = typer.Option(
    PAPER_ACTION_SPACE,
    help="iCARMA's action network: latent-shift (clamped shifts of the flow's noise, as "
    "CARMA's code acts; the paper's pipeline) | intervention (do-values in range units; "
    "a variant). Models are cached per choice.",
)
_SHIFT_BOUNDS = typer.Option(
    CARMAS_CLAMP,
    help="With --action-space latent-shift, the shifts' clamp: carma ((-4, 5), CARMA's "
    "rule under its own published flow) | flow (the rule under ours: floor / ceil of the "
    "noise of the rejected training people) | LO,HI.",
)
_GAMMA_SCHEDULE = typer.Option(
    "paper", help="HARE's candidate step: paper (gamma = 1 in every iteration) | halve "
    "(a variant: gamma x max(|base shift|, 0.25), halved every iteration).")
_FINAL_ACCEPT = typer.Option(
    "ask", help="HARE's accept question after the last tournament: ask (the paper's "
    "Algorithm 4, counted against the budget) | skip (a variant).")
_KEEP_INCUMBENT = typer.Option(
    True, "--keep-incumbent/--drop-incumbent", help="HARE's current plan competes in "
    "every tournament beside the new candidates, as the paper's released code runs its "
    "tables (the default); --drop-incumbent: new candidates only, Algorithm 4 as the "
    "paper's text writes it.")
_ITERATIONS_READING = typer.Option(
    "text", help=ITERATIONS_READING_HELP)
_GROUND_TRUTH = typer.Option("perturbation", help=GROUND_TRUTH_HELP)
_FAILED_PLANS = typer.Option(
    "no-plan", help="HARE: a person whose plan failed is scored as shown no change "
    "(no-plan: GTP of the ideal, GTD 1) | dropped from GTP and GTD (as the paper's released "
    "code's gt_cost does).")
_AS_RELEASED = typer.Option(
    False, "--as-released", help="HARE as the paper's released code runs its tables "
    "(rahulvigneswaran/HARE at 6719b0e): the incumbent kept, rounds of T new candidates, "
    "no accept question, failed plans dropped (sets --keep-incumbent, "
    "--iterations-reading code, --failed-plans dropped).")
_AS_WRITTEN = typer.Option(
    False, "--as-written", help="HARE as Algorithm 4 of the paper's text writes it: new "
    "candidates only, T rounds of B // T questions with the accept question, a failed "
    "plan shown as no change (sets --drop-incumbent, --iterations-reading text, "
    "--failed-plans no-plan).")
_TRUTH = typer.Option(
    "shipped", help="tominaga only: the synthetic truth the ratings are simulated from: "
    "shipped (the protocol's, built from the paper's findings) | sloped (a negative "
    "control: acceptance falls with distance, so finding 1 must fail).")
_QUICK = typer.Option(
    False, "--quick", help="Reduced ('quick') artifacts, as `train --quick` builds them "
    "(smoke runs and tests; far from the paper)."
)


@app.command()
def reproduce(
    ctx: typer.Context,
    target: str = _TARGET,
    seeds: int | None = _SEEDS,
    fast: bool = _FAST,
    n: int | None = _N,
    scenario: str = _SCENARIO,
    validity_multiplier: str = _VALIDITY_MULTIPLIER,
    validity_weight: float | None = _VALIDITY_WEIGHT,
    keep: str = _KEEP,
    mask_head: str = _MASK_HEAD,
    action_space: str = _ACTION_SPACE,
    shift_bounds: str = _SHIFT_BOUNDS,
    gamma_schedule: GammaSchedule = _GAMMA_SCHEDULE,
    final_accept: FinalAccept = _FINAL_ACCEPT,
    keep_incumbent: bool = _KEEP_INCUMBENT,
    iterations_reading: IterationsReading = _ITERATIONS_READING,
    ground_truth: GroundTruth = _GROUND_TRUTH,
    failed_plans: str = _FAILED_PLANS,
    as_released: bool = _AS_RELEASED,
    as_written: bool = _AS_WRITTEN,
    truth: str = _TRUTH,
    quick: bool = _QUICK,
    train: bool = train_option(),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Reproduce a published table and check its claims.

    Per cell the paper's value, ours (mean ± sd over seeds), the difference and whether it
    is within the stated tolerance; then the paper's claims, checked on our figures.

    Methods run as published (the Oracle's grid around each factual, iCARMA without repair,
    one paper-configured model per cost profile, best seed on validation, HARE within its
    budget). The Oracle, which has no seed, reports the mean over 10 draws of the profiles
    (3 with --fast; `seeds` in its cells counts the draws). Paper values and tolerances:
    engine/papers/paper_values.yaml. Trained models are cached (a second run reuses
    them). An iCARMA target in the paper's configuration whose models are missing stops and
    says how long training them takes (the seeds of a setup train together); --train
    trains them first. --fast and --quick runs train their short models as they go.

    JSON: its fields in docs/reproductions/index.md ("reproduce's JSON").

    TARGET tominaga (docs/analysis-mgcv.md; needs R with mgcv, `make install`): a recovery
    check of the pipeline, not a replication (the authors' data is not public). Simulates
    tominaga-replication (N participants, default 362; seed 1) from a synthetic truth built
    from the paper's findings (--truth sloped: the negative control, acceptance falling with
    distance, on which finding 1 must fail), leaves out the paper's excluded ratings, fits
    the four GAMMs with mgcv and prints Table S2 beside the paper's and the paper's three
    findings; its JSON: docs/analysis-mgcv.md.
    """
    if target == "tominaga":
        _tominaga(n, truth, json_out, json_file, given_command(ctx))
        return
    if truth != "shipped":
        raise typer.BadParameter("--truth applies to the tominaga target only",
                                 param_hint="--truth")
    from engine.papers.reproduce import TARGET_NAMES, ReproduceConfig

    if target != "all" and target not in TARGET_NAMES:
        raise typer.BadParameter(
            f"unknown target {target!r}; expected one of {', '.join(TARGET_NAMES)} or all",
            param_hint="TARGET",
        )
    scenario = scenario_or_fail(scenario, json_out).name
    hare = {"keep_incumbent": keep_incumbent, "iterations_reading": iterations_reading,
            "final_accept": final_accept, "failed_plans": failed_plans}
    try:
        hare = _hare_configuration(ctx, hare, as_released, as_written)
        configs = [ReproduceConfig(
            name, scenario=scenario, seeds=seeds, fast=fast, n=n, quick=quick,
            validity_multiplier=validity_multiplier, validity_weight=validity_weight, keep=keep,
            mask_head=mask_head, action_space=action_space, shift_bounds=shift_bounds,
            gamma_schedule=gamma_schedule, ground_truth=ground_truth, **hare,
        ) for name in (TARGET_NAMES if target == "all" else (target,))]
    except ValueError as e:  # the message names the option
        raise typer.BadParameter(str(e)) from e
    docs = [_run_one(config, train, json_out, given_command(ctx)) for config in configs]
    payload = docs[0] if target != "all" else {"targets": docs}
    emit(payload, json_out=json_out, json_file=json_file)


def _hare_configuration(ctx: typer.Context, hare: dict[str, Any], as_released: bool,
                        as_written: bool) -> dict[str, Any]:
    """HARE's options, or a named configuration's (--as-released / --as-written) with the
    options given on the command line kept (ValueError for both names)."""
    if as_released and as_written:
        raise ValueError("--as-released and --as-written name two configurations; give one")
    if not (as_released or as_written):
        return hare
    from engine.papers.reproduce_core import preset

    given = {k: v for k, v in hare.items() if ctx.get_parameter_source(k).name != "DEFAULT"}
    return preset("as-released" if as_released else "as-written", **given)


def _tominaga(n: int | None, truth: str, json_out: bool, json_file: Path | None,
              command: str) -> None:
    """TARGET tominaga: the reference study's Table S2 on a simulated study (mgcv), from the
    shipped truth or the negative control's (``truth``)."""
    from study_app.cli import reproduce_tominaga

    if truth not in reproduce_tominaga.TRUTHS:
        raise typer.BadParameter(f"expected one of {', '.join(reproduce_tominaga.TRUTHS)}, "
                                 f"got {truth!r}", param_hint="--truth")
    clock = RunClock()
    doc = reproduce_tominaga.run(participants=n or 362, seed=1, truth=truth)
    doc["provenance"] = provenance(command, clock)
    reproduce_tominaga.print_doc(result_console(json_out, min_width=TABLE_WIDTH), doc)
    emit(doc, json_out=json_out, json_file=json_file)


def _run_one(config: Any, train: bool, json_out: bool, command: str) -> dict[str, Any]:
    """One target run with a progress line (and its models trained first when asked), its
    result printed as it finishes (stderr under --json); ``command``: the command line as
    given, recorded in the run's configuration."""
    from engine.papers.reproduce import run_target

    name = config.target
    clock = RunClock()
    _paper_models_of(config, train, json_out)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=err, transient=True) as progress:
        task = progress.add_task(f"{name}: starting", total=None)

        def note(msg: str) -> None:
            progress.update(task, description=f"{name}: {msg}")
            err.print(f"{time.strftime('%H:%M:%S')} {name}: {msg}", highlight=False)

        try:
            doc = run_target(config, note).to_dict()
        except (FileNotFoundError, ValueError) as e:
            fail(e, 2, json_out=json_out)
    doc["config"]["command"] = command
    doc["provenance"] = provenance(command, clock)
    print_result(result_console(json_out, min_width=TABLE_WIDTH), doc)
    return doc
