"""Training the paper's seeds one after another against together, in one run.

For one setup (elicitation, cost profile) and K seeds: train every seed by its own run
(``train_amortized``, the per-seed loop) and time it, keep those models' weights and
validation scores, then train the same seeds as one batched ensemble
(engine.recourse.icarma.ensemble) and time it. The ensemble's models are the ones left in
the artifact cache. Reported: both wall times and their ratio, both processor times (this
process's; on a shared machine the wall time also counts the other processes' share) and
their ratio, the load average before, between and after, and per seed whether the two runs'
weights are bitwise equal (the ensemble reproduces each seed's run bit for bit:
engine.recourse.icarma.ensemble), their largest absolute difference and both validation
scores.
"""

from __future__ import annotations

import io
import os
import time
from typing import Any

import torch

from engine.artifacts import Progress, build_artifacts, weights_path
from engine.papers.icarma.models import PaperModels, ensure_paper_models


def _load_average() -> list[float]:
    return [round(v, 2) for v in os.getloadavg()]


def _weights(scenario: str, models: PaperModels) -> dict[int, dict[str, torch.Tensor]]:
    return {s: torch.load(io.BytesIO(weights_path(scenario, models.member_name(s)).read_bytes()),
                          weights_only=True) for s in models.seeds}


def _scores(models: PaperModels) -> dict[int, float]:
    return {int(r.metadata["config"]["seed"]): float(r.metadata["metrics"]["val_score"])
            for r in models.members}


def compare_training(
    scenario: str,
    elicitation: str,
    cost_profile: str,
    seeds: int,
    *,
    quick: bool = False,
    changes: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Both ways of training one setup's seeds, timed (module docstring)."""
    build_artifacts(scenario, quick=quick, only=("decision", "flow"), progress=progress)
    # torch's first optimizer imports its compiler (seconds): not part of either way's time
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])
    loads = {"start": _load_average()}
    runs: dict[str, PaperModels] = {}
    seconds: dict[str, float] = {}
    cpu: dict[str, float] = {}
    weights: dict[str, dict[int, dict[str, torch.Tensor]]] = {}
    for way, ensemble in (("per_seed_loop", False), ("ensemble", True)):
        start, cpu_start = time.perf_counter(), time.process_time()
        runs[way] = ensure_paper_models(scenario, elicitation, cost_profile, seeds, quick=quick,
                                        changes=changes, force=True, progress=progress,
                                        ensemble=ensemble)
        seconds[way] = time.perf_counter() - start
        cpu[way] = time.process_time() - cpu_start
        weights[way] = _weights(scenario, runs[way])
        loads["after_" + way] = _load_average()
    loop, together = (_scores(runs[w]) for w in ("per_seed_loop", "ensemble"))
    members = []
    for s in runs["ensemble"].seeds:
        a, b = weights["per_seed_loop"][s], weights["ensemble"][s]
        diff = max(float((a[k].double() - b[k].double()).abs().max()) for k in a)
        members.append({"seed": s, "bitwise_equal": all(torch.equal(a[k], b[k]) for k in a),
                        "max_weight_difference": diff,
                        "val_score_per_seed_loop": loop[s], "val_score_ensemble": together[s]})
    return {
        "scenario": scenario,
        "setup": f"{elicitation}/{cost_profile}",
        "seeds": seeds,
        "epochs": runs["ensemble"].selected.metadata["config"]["epochs"],
        "torch_threads": 1,
        "seconds": seconds,
        "speedup": seconds["per_seed_loop"] / seconds["ensemble"],
        "cpu_seconds": cpu,
        "cpu_speedup": cpu["per_seed_loop"] / cpu["ensemble"],
        "load_average": loads,
        "selected_seed": {w: runs[w].selected_seed for w in runs},
        "members": members,
    }


__all__ = ["compare_training"]
