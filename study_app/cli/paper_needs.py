"""Commands that use the iCARMA paper's trained models (`benchmark recourse`, `benchmark
fairness`, the `reproduce` iCARMA targets): when some are missing, say which and how long
training them takes (engine.papers.icarma.plan) and stop (exit 2), or with --train train them first
(the seeds of a setup together, progress and time left on stderr)."""

from __future__ import annotations

from typing import Any

import typer

from study_app.cli.output import fail

PAPER_SEEDS = 10  # the paper's: 1000, 2000, ..., 10000


def train_option() -> Any:
    return typer.Option(
        False, "--train",
        help="Train the iCARMA paper's models this needs when they are missing (the command "
        "states the estimate first; without --train it stops and says how long it would take).",
    )


def benchmark_setups(
    methods: tuple[str, ...], training: str, elicitation: str, cost_profiles: tuple[str, ...]
) -> list[tuple[str, str]]:
    """The paper-model setups a benchmark of ``methods`` loads (none unless a method that
    loads iCARMA's models runs on the paper's; binary elicitation: the ranking model with the
    constant profile)."""
    from engine.recourse import METHODS, MethodUnavailableError, capabilities

    try:
        loads_icarma = any(a.startswith("icarma") for m in methods if m in METHODS
                           for a in capabilities(m).artifacts)
    except MethodUnavailableError as e:  # a method not installed: before any work
        fail(e, 2)
    if not loads_icarma or training != "paper":
        return []
    if elicitation == "binary":
        return [("ranking", "constant")]
    return [(elicitation, c) for c in cost_profiles]


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
    """Make sure the paper's models of ``setups`` (elicitation, cost profile) exist:
    ``selection_only`` (what the benchmarks load): the best-seed selection of each setup,
    trained with ``seeds`` seeds when missing; else every one of ``seeds`` seeds (what the
    reproduce targets evaluate). Missing without ``train``: exit 2 with the estimate."""
    from engine.artifact_store import read_metadata
    from engine.papers.icarma.models import paper_model_name, training_tag
    from engine.papers.icarma.plan import describe_plan, plan_paper_models

    tag = training_tag(changes)
    setups = list(dict.fromkeys(setups))
    if selection_only:
        setups = [(e, c) for e, c in setups
                  if read_metadata(scenario, paper_model_name(e, c, tag=tag)) is None]
        if not setups:
            return
    plans = [p for p in plan_paper_models(scenario, setups, seeds, quick=quick, changes=changes)
             if p.missing]
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


__all__ = ["PAPER_SEEDS", "benchmark_setups", "offer_training", "train_option"]
