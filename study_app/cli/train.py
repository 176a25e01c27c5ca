"""`recourse-study train`: build (or find cached) a scenario's trained artifacts."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from study_app.cli.apps import app, scenario_or_fail, split_list
from study_app.cli.choices import IcarmaTraining, Switch
from study_app.cli.output import emit, err, json_file_option, json_option, result_console


def _summary(scenario: str, records: list[Any], seconds: float) -> dict[str, Any]:
    by = {r.name: r for r in records}
    out: dict[str, Any] = {"scenario": scenario}
    if "decision" in by:
        m = by["decision"].metadata["metrics"]
        out["decision_accuracy"] = m["decision_accuracy"]
        out["bayes_accuracy"] = m["bayes_accuracy"]
    classifiers = {k: by[k].metadata["metrics"]["decision_accuracy"] for k in ("lr", "ann")
                   if k in by}
    if classifiers:  # a tabular world: the HARE paper's logistic regression and network
        out["test_accuracy"] = classifiers
    if "flow" in by:
        m = by["flow"].metadata["metrics"]
        out["flow_test_nll"] = m["flow_test_nll"]
        out["exact_test_nll"] = m["exact_test_nll"]
        out["flow_cf_rmse"] = m["flow_cf_rmse"]
    out["seconds"] = seconds
    out["cache_hit"] = all(r.cache_hit for r in records)
    out["artifacts"] = {
        r.name: {
            "cache_hit": r.cache_hit,
            "shipped": r.shipped,
            "seconds": r.seconds,
            "training_seconds": r.metadata["seconds"],
            "quick": r.metadata["quick"],
            "metrics": r.metadata["metrics"],
            "created": r.metadata["created"],
        }
        for r in records
    }
    return out


def _table(summary: dict[str, Any]) -> Table:
    table = Table(title=f"Artifacts of scenario {summary['scenario']!r}")
    for col in ("artifact", "status", "trained in", "figures"):
        table.add_column(col)
    for name, a in summary["artifacts"].items():
        figures = ", ".join(
            f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in a["metrics"].items()
        )
        status = "cached" if a["cache_hit"] else "built"
        if a["quick"]:
            status += " (quick)"
        table.add_row(name, status, f"{a['training_seconds']:.1f} s", figures)
    return table


_SCENARIO = typer.Option(
    "loan", help="Scenario: a shipped name (`recourse-study scenarios`) or a scenario file."
)
_FORCE = typer.Option(False, "--force", help="Rebuild even when the cache is fresh.")
_QUICK = typer.Option(
    False, "--quick", help="Reduced training (for tests and smoke runs; lower quality)."
)
_ONLY = typer.Option(
    "",
    help="Comma-separated artifacts to build (plus what they depend on): decision, flow, "
    "icarma, icarma-likert, carma, vae, csvae; a tabular world's: lr, ann, vae, csvae. "
    "Default: all.",
)
_ICARMA_TRAINING = typer.Option(
    "fast",
    help="fast: the artifacts above (our fast iCARMA, what the shipped studies use); "
    "paper: the iCARMA paper's models instead, one per elicitation and cost profile "
    "and seed (450 / 900 epochs each), plus the best seed on validation.",
)
_SEEDS = typer.Option(
    10, min=1, help="--icarma-training paper: seeds 1000, 2000, ... (the paper: 10)."
)
_ELICITATIONS = typer.Option(
    "ranking,likert", help="--icarma-training paper: ranking and/or likert."
)
_COST_PROFILES = typer.Option(
    "constant,concave,linear,convex", help="--icarma-training paper: cost profiles."
)
_ENSEMBLE = typer.Option(
    "on",
    help="--icarma-training paper: on (a setup's missing seeds train together as one "
    "batched ensemble, faster, each seed's model bit for bit its own run's: "
    "docs/benchmarks.md) or off (one seed after another, each by its own run).",
)
_COMPARE = typer.Option(
    False, "--compare",
    help="--icarma-training paper: train every setup's seeds both ways (off, then on), "
    "timed side by side; the ensemble's models stay in the cache.",
)
_EPOCHS = typer.Option(
    None, min=1,
    help="--icarma-training paper: a shortened training of N epochs (the paper: 450 "
    "ranking / 900 Likert), cached under its own names (tag e<N>), never the paper's.",
)


@app.command()
def train(
    scenario: str = _SCENARIO,
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
    force: bool = _FORCE,
    quick: bool = _QUICK,
    only: str = _ONLY,
    icarma_training: IcarmaTraining = _ICARMA_TRAINING,
    seeds: int = _SEEDS,
    elicitations: str = _ELICITATIONS,
    cost_profiles: str = _COST_PROFILES,
    ensemble: Switch = _ENSEMBLE,
    compare: bool = _COMPARE,
    epochs: int | None = _EPOCHS,
) -> None:
    """Train a scenario's decision model, flow, iCARMA and CARMA.

    Build the scenario's data splits, decision model, causal flow, iCARMA and CARMA (a
    tabular world: its logistic regression `lr` and network `ann`, the HARE paper's two
    classifiers).

    With --icarma-training paper: the decision model, the flow and the iCARMA paper's models
    (engine/papers/icarma/models.py). A setup's missing seeds train together as one batched ensemble
    (--ensemble on; ten seeds in about the time three take one after another; the times:
    docs/benchmarks.md). The command states its estimate first and shows overall progress
    with the time left. --ensemble off trains one seed after another; different setups may
    be trained by several processes at once. --compare trains
    each setup both ways and reports both times (docs/benchmarks.md).

    Artifacts are cached under $RECOURSE_STUDY_HOME/artifacts/<scenario> (default home:
    ./.recourse-study); a second run with nothing changed is a cache hit. An artifact shipped
    with the code (engine/shipped_artifacts: the loan scenario's) is copied into the home
    instead of trained when its fingerprint is the one needed; --force trains it anyway. The
    command states what it will train and an estimate first.

    --json prints one object: scenario, decision_accuracy (test split), bayes_accuracy (test
    accuracy of "favourable iff the true P(Y=1|x) > 0.5"), flow_test_nll and exact_test_nll
    (mean negative log-likelihood per test sample of the six non-gender features given gender,
    flow vs exact SCM, nats), flow_cf_rmse (RMSE of flow vs exact counterfactuals for random
    actions, over the features the action does not set, in feature standard deviations),
    seconds (this run), cache_hit (nothing was rebuilt), artifacts {name: {cache_hit,
    shipped (copied from the artifacts shipped with the code, engine/shipped_artifacts),
    seconds, training_seconds, quick, metrics, created}}; with --icarma-training paper also
    selected {<artifact>: {seed, val_scores}} (the best seed on validation per setup) and
    plan {estimate_seconds, ensemble, missing {setup: [seeds]}} (what was missing and the
    estimate stated before training); with --compare instead compare [{scenario, setup,
    seeds, epochs, torch_threads, seconds {per_seed_loop, ensemble}, speedup, cpu_seconds
    {per_seed_loop, ensemble} (processor time), cpu_speedup, load_average
    {start, after_per_seed_loop, after_ensemble}, selected_seed {per_seed_loop, ensemble},
    members [{seed, bitwise_equal, max_weight_difference, val_score_per_seed_loop,
    val_score_ensemble}]}]; a tabular world: test_accuracy {lr, ann} (test split) instead of
    decision_accuracy.
    """
    scenario = scenario_or_fail(scenario, json_out).name  # a file path: known by its name now
    wanted = _wanted(scenario, only, icarma_training, ensemble, compare, epochs)
    start = time.perf_counter()
    if icarma_training == "paper":
        setups = _paper_setups(elicitations, cost_profiles)
        changes = None if epochs is None else {"epochs": epochs}
        if compare:
            _compare(scenario, setups, seeds, quick, changes, start, json_out, json_file)
            return
        from study_app.cli.train_paper import train_paper_models

        records, selected, plan = train_paper_models(
            scenario, setups, seeds, quick=quick, force=force, ensemble=ensemble == "on",
            changes=changes, json_out=json_out)
    else:
        records, selected, plan = _train_fast(scenario, quick, force, wanted, json_out), {}, {}
    summary = _summary(scenario, records, time.perf_counter() - start)
    if not records:
        summary["note"] = "a pool world decides by its fixed rule: nothing to train"
    if selected:
        summary["selected"] = selected
    if plan:
        summary["plan"] = plan
    _emit(scenario, summary, json_out, json_file)


def _wanted(scenario: str, only: str, icarma_training: str, ensemble: str, compare: bool,
            epochs: int | None) -> tuple[str, ...] | None:
    """The artifacts ``--only`` names (None: all), the options checked together (exit 2)."""
    from engine.artifact_builders import scenario_artifacts
    from engine.artifacts import ARTIFACTS
    from engine.scenarios import get_scenario

    if icarma_training == "paper" and only:
        raise typer.BadParameter(
            "--only selects among the fast artifacts; leave it out with --icarma-training paper",
            param_hint="--only",
        )
    wanted = tuple(a.strip() for a in only.split(",") if a.strip()) or None
    names = scenario_artifacts(get_scenario(scenario), ARTIFACTS)
    if wanted is not None:
        bad = [a for a in wanted if a not in names]
        if bad:
            raise typer.BadParameter(
                f"unknown artifact(s) {', '.join(bad)} for scenario {scenario!r}; expected "
                f"some of {', '.join(names)}", param_hint="--only",
            )
    if icarma_training != "paper" and (compare or epochs is not None or ensemble != "on"):
        raise typer.BadParameter("--compare, --epochs and --ensemble apply to "
                                 "--icarma-training paper only")
    return wanted


def _paper_setups(elicitations: str, cost_profiles: str) -> list[tuple[str, str]]:
    """The (elicitation, cost profile) setups of ``--icarma-training paper``, checked."""
    from study_app.cli.train_paper import check_setups

    es = split_list(elicitations, "--elicitations")
    cs = split_list(cost_profiles, "--cost-profiles")
    check_setups(es, cs)
    return [(e, c) for e in es for c in cs]


def _compare(scenario: str, setups: list[tuple[str, str]], seeds: int, quick: bool,
             changes: dict[str, Any] | None, start: float, json_out: bool,
             json_file: Path | None) -> None:
    """``--compare``: every setup's seeds trained both ways, the result emitted."""
    from study_app.cli.train_paper import compare_paper_training, compare_table

    results = compare_paper_training(scenario, setups, seeds, quick=quick,
                                     changes=changes, json_out=json_out)
    doc = {"scenario": scenario, "compare": results, "seconds": time.perf_counter() - start}
    emit(doc, json_out=json_out, json_file=json_file,
         human=lambda: result_console(json_out).print(compare_table(results)))


def _train_fast(scenario: str, quick: bool, force: bool, wanted: tuple[str, ...] | None,
                json_out: bool) -> list[Any]:
    """The fast artifacts (``--only``'s, or all), announced and with progress."""
    from engine.artifacts import build_artifacts
    from study_app.cli.training_progress import announce_training, training_progress

    announce_training(err, scenario, quick, wanted, force=force)
    with training_progress(err, transient=json_out) as report:
        return build_artifacts(scenario, quick=quick, force=force, only=wanted, progress=report)


def _emit(scenario: str, summary: dict[str, Any], json_out: bool,
          json_file: Path | None) -> None:
    def human() -> None:
        if "note" in summary:
            err.print(f"scenario {scenario!r}: {summary['note']}")
            return
        result_console(json_out).print(_table(summary))
        err.print(f"done in {summary['seconds']:.1f} s")

    emit(summary, json_out=json_out, json_file=json_file, human=human)
