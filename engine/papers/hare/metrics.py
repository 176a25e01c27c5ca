"""One seed's metrics of a batch of recourse plans shown to simulated people (the HARE
benchmark's rows, engine.papers.hare.benchmark).

GTP and GTD (engine.synthetic.hare_people) compare the plan shown with the person's hidden
ideal, over the people who have one. A person whose plan failed (not found or not
favourable) is scored by ``failed_plans``:

- ``no-plan`` (ours, the default): the person is shown no change, x' = x, so the failure
  counts (GTP = |v(x_gt)|, GTD = 1);
- ``dropped`` (the paper's released code): the person leaves the GTP and GTD means, as its
  ``gt_cost`` (src/utils.py, nan_sensitive=False) drops every row whose plan is NaN, which
  CARLA's methods return for a plan that does not flip the decision.

The classical metrics (``success_rate``, ``violations``, ``proximity``, ``sparsity``,
``redundancy``) are as section 4.1 of the HARE paper defines them (engine.papers.hare.benchmark).
"""

from __future__ import annotations

import torch
from torch import Tensor

from engine import metrics
from engine.recourse.base import RecourseContext
from engine.recourse.batch import RecourseBatch
from engine.synthetic.hare_people import SimulatedPeople

FAILED_PLANS: tuple[str, ...] = ("no-plan", "dropped")


def redundancy(context: RecourseContext, batch: RecourseBatch) -> Tensor:
    """(n,) acted features whose revert alone keeps the plan favourable."""
    count = torch.zeros(len(batch), dtype=torch.long)
    with torch.no_grad():
        for j in range(batch.x.shape[1]):
            on = batch.action_mask[:, j]
            if not bool(on.any()):
                continue
            m = batch.action_mask.clone()
            m[:, j] = False
            x_cf = context.world.counterfactual(batch.x, m, batch.action_values)
            still = context.classifier.decision(x_cf.float()).bool()
            count += (on & still).long()
    return count


def plan_metrics(
    context: RecourseContext, batch: RecourseBatch, people: SimulatedPeople,
    failed_plans: str = FAILED_PLANS[0],
) -> dict[str, float]:
    """One seed's metrics of a batch of plans (module docstring)."""
    ok = batch.valid & batch.found
    shown = torch.where(ok[:, None], batch.x_cf, batch.x)
    has = people.found
    valid = ok & has
    scored = valid if failed_plans == "dropped" else has

    def mean(t: Tensor, rows: Tensor) -> float:
        return float(t[rows].double().mean()) if bool(rows.any()) else float("nan")

    deltas = metrics.feature_deltas(batch.x, batch.x_cf, context.ranges, context.categorical)
    return {
        "gtp": mean(people.gtp(shown), scored),
        "gtd": mean(people.gtd(shown), scored),
        "success_rate": mean(ok.double(), has),
        "violations": mean(batch.violations, has),
        "violations_total": int(batch.violations[has].sum()),
        "proximity": mean(deltas.norm(dim=1), valid),
        "proximity_l1": mean(batch.l1_profile, valid),
        "sparsity": mean(batch.l0_actions, valid),
        "redundancy": mean(redundancy(context, batch), valid),
    }
