"""iCARMA and CARMA: amortized recourse networks trained per scenario.

``method`` (the two catalogue methods), ``config`` (the training configuration and its
named choices), ``networks`` (the mask and action networks), ``training`` (one model's
training loop), ``ensemble`` and ``stacked`` (several seeds trained as one batched model),
``log`` (a run's per-epoch record) and ``paper_names`` (the names of the paper's models in
the artifact store).
"""

from __future__ import annotations

from engine.exports import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), {
    "engine.recourse.icarma.method": ("Carma", "ICarma"),
    "engine.recourse.icarma.config": ("CARMA_SHIFT_BOUNDS", "TRAININGS", "ICarmaConfig"),
    "engine.recourse.icarma.networks": ("AmortizedRecourse",),
    "engine.recourse.icarma.training": ("train_amortized",),
    "engine.recourse.icarma.ensemble": ("train_ensemble",),
    "engine.recourse.icarma.log": ("TrainingLog",),
    "engine.recourse.icarma.paper_names": ("PAPER_ELICITATIONS", "paper_model_name"),
})
