"""The paper's models of several setups trained one setup after another, with progress.

``prepare_setups`` builds what the models train on (the decision model and the flow) and
plans each setup (engine.papers.icarma.plan); ``train_setups`` trains the planned setups
(engine.papers.icarma.models.ensure_paper_models), reporting every model's epochs and the
estimated seconds done of the whole.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from engine.artifacts import Progress, build_artifacts
from engine.papers.icarma.models import PaperModels, ensure_paper_models, paper_seeds
from engine.papers.icarma.plan import SetupPlan, plan_paper_models


def prepare_setups(
    scenario: str, setups: list[tuple[str, str]], seeds: int, *, quick: bool, force: bool,
    changes: dict[str, Any] | None, progress: Progress | None = None,
) -> list[SetupPlan]:
    """The decision model and flow built (the models train on them), then each setup's plan
    (``force``: every seed counts as missing, as everything is retrained)."""
    build_artifacts(scenario, quick=quick, only=("decision", "flow"), progress=progress)
    plans = plan_paper_models(scenario, setups, seeds, quick=quick, changes=changes)
    if force:
        plans = [replace(p, missing=paper_seeds(seeds)) for p in plans]
    return plans


def train_setups(
    scenario: str, plans: list[SetupPlan], seeds: int, *, quick: bool, force: bool,
    ensemble: bool, changes: dict[str, Any] | None, progress: Progress,
    advance: Callable[[float], None],
) -> list[PaperModels]:
    """Every planned setup's seeds and selection, one setup after another. ``progress``
    hears every model's epochs; ``advance(seconds)`` the estimated seconds done of all plans:
    the finished setups' and a setup's own times the share done (``ensemble``: of the seeds'
    common epochs; else of its missing seeds, one after another)."""
    out = []
    before = 0.0
    for plan in plans:
        def setup_report(name: str, done: int, total: int, note: str, plan: SetupPlan = plan,
                         before: float = before) -> None:
            progress(name, done, total, note)
            if not name.startswith("icarma-paper") or not total or not plan.missing:
                return
            share = done / total
            if not ensemble:  # one seed's run: "...-s<seed>"
                seed = int(name.rsplit("-s", 1)[1])
                k = plan.missing.index(seed) if seed in plan.missing else 0
                share = (k + share) / len(plan.missing)
            advance(before + share * plan.seconds(ensemble))

        out.append(ensure_paper_models(
            scenario, plan.elicitation, plan.cost_profile, seeds, quick=quick, force=force,
            progress=setup_report, ensemble=ensemble, changes=changes,
        ))
        before += plan.seconds(ensemble)
        advance(before)
    return out



__all__ = ["prepare_setups", "train_setups"]
