"""The reproductions' world and the names of their latent-shift clamps: plain Python.

engine.papers.reproduce_core (numpy, and through the methods torch) uses them; the
``reproduce`` command shows them as its defaults without loading either.
"""

from __future__ import annotations

# ``shift_bounds`` by name: CARMA's clamp under CARMA's own flow, or its rule under ours
CARMAS_CLAMP, FLOW_CLAMP = "carma", "flow"

# The reproductions' world: CARMA's published Loan samples with the decision model trained by
# CARMA's classifier recipe (plain SGD, lr 1e-3, batch 256, 500 epochs; our own training, test
# accuracy 0.911 on the classifier split). The platform's default decision model (``loan-carma``,
# Adam + cosine: accuracy >= 0.99) is saturated on the rejections (logits -165 .. -6), where the
# paper's hinge on 2 h - 1 has no gradient; README "Reproducing the papers".
REPRODUCE_SCENARIO = "loan-carma-reference"
