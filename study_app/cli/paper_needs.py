"""Commands that use the iCARMA paper's trained models (`benchmark recourse`, `benchmark
fairness`, the `reproduce` iCARMA targets): when some are missing, say which and how long
training them takes (engine.papers.icarma.plan) and stop (exit 2), or with --train train
them first (the seeds of a setup together, progress and time left on stderr)."""

from __future__ import annotations

from typing import Any

import typer

from engine.icarma_choices import PAPER_SEEDS
from study_app.cli.output import fail


def train_option() -> Any:
    return typer.Option(
        False, "--train",
        help="Train the iCARMA paper's models this needs when they are missing (the command "
        "states the estimate first; without --train it stops and says how long it would take).",
    )


def benchmark_setups(
    methods: tuple[str, ...], training: str, elicitation: str, cost_profiles: tuple[str, ...]
) -> list[tuple[str, str]]:
    """The paper-model setups a benchmark of ``methods`` loads
    (engine.papers.icarma.models.benchmark_setups); exit 2 when a method is not installed."""
    from engine.papers.icarma.models import benchmark_setups as setups_of
    from engine.recourse import MethodUnavailableError

    try:
        return setups_of(methods, training, elicitation, cost_profiles)
    except MethodUnavailableError as e:  # a method not installed: before any work
        fail(e, 2)


def offer_training(
    scenario: str,
    setups: list[tuple[str, str]],
    *,
    train: bool,
    json_out: bool,
    seeds: int = PAPER_SEEDS,
    quick: bool = False,
    changes: dict[str, Any] | None = None,
    selection_only: bool = True,
) -> None:
    """Make sure the paper's models of ``setups`` (elicitation, cost profile) exist
    (engine.papers.icarma.plan.missing_plans says which are missing, ``selection_only`` how
    they count). Missing without ``train``: exit 2 with the estimate."""
    from engine.papers.icarma.plan import describe_plan, missing_plans

    plans = missing_plans(scenario, setups, seeds, quick=quick, changes=changes,
                          selection_only=selection_only)
    if not plans:
        return
    if not train:
        wanted = [p.label for p in plans]
        es = ",".join(dict.fromkeys(w.split("/")[0] for w in wanted))
        cs = ",".join(dict.fromkeys(w.split("/")[1] for w in wanted))
        fail(f"{describe_plan(plans)}. Rerun with --train to train them first, or run "
             f"`recourse-study train --scenario {scenario} --icarma-training paper "
             f"--elicitations {es} --cost-profiles {cs} --seeds {seeds}`", 2,
             json_out=json_out, details={
                 "missing": {p.label: list(p.missing) for p in plans},
                 "estimate_seconds": sum(p.seconds() for p in plans)})
    from study_app.cli.train_paper import train_paper_models

    train_paper_models(scenario, [(p.elicitation, p.cost_profile) for p in plans], seeds,
                       quick=quick, force=False, ensemble=True, changes=changes,
                       json_out=json_out)


__all__ = ["benchmark_setups", "offer_training", "train_option"]
