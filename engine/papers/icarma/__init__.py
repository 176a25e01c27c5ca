"""The iCARMA paper's harness: its models, their training plan, its tables and the fairness
case study.

``models`` (one model per elicitation, cost profile and seed, and the best-on-validation
selection), ``plan`` (what training them would take, stated first), ``setups`` (several
setups trained with progress), ``training`` (a setup's seeds trained one by one against
together), ``reproduce`` (Tables 1-3), ``variants`` (named changes to the paper
configuration), ``fairness``, ``disparities`` and ``reproduce_fairness`` (section 5.5's case
study).
"""

from __future__ import annotations

from engine.exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "engine.papers.icarma.models": ("PaperModels", "ensure_paper_models", "paper_seeds"),
    "engine.papers.icarma.plan": ("describe_plan", "plan_paper_models"),
    "engine.papers.icarma.training": ("compare_training",),
    "engine.papers.icarma.setups": ("prepare_setups", "train_setups"),
    "engine.papers.icarma.fairness": ("fairness_population", "run_fairness"),
    "engine.papers.icarma.disparities": ("fairness_summary",),
})
