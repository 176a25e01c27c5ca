"""iCARMA's named choices and the paper configuration's picks among them: plain Python.

The networks and the training configuration (engine.recourse.icarma.networks,
engine.recourse.icarma.config, whose docstrings say what each choice means) import torch;
this module does not, so a command line can offer the choices and show the defaults
without loading torch.
"""

from __future__ import annotations

# The mask network's output and deployment rule; "carma" is a named variant
# (engine.recourse.icarma.networks).
MASK_HEADS: tuple[str, ...] = ("log-odds", "carma")
DEFAULT_MASK_HEAD = MASK_HEADS[0]
# What the action network's output is: do-values in range units, or shifts of the flow's noise.
ACTION_SPACES: tuple[str, ...] = ("intervention", "latent-shift")
INTERVENTION = ACTION_SPACES[0]  # the do-operator; our fast models' space
# the action of the paper's configuration: CARMA's latent shift (engine.recourse.icarma.config)
PAPER_ACTION_SPACE = "latent-shift"
# How the hinge is weighted (engine.recourse.icarma.config).
VALIDITY_MULTIPLIERS: tuple[str, ...] = ("lagrangian", "lagrangian-acting", "fixed")
# the hinge weight of the paper's configuration: CARMA's reference rule
PAPER_VALIDITY_MULTIPLIER = "lagrangian"
# A fixed hinge weight calibrated on Table 1's plausibility column: the weight of the
# ``fixed`` variant of the paper's configuration (engine.recourse.icarma.config; README
# "Reproducing the papers").
CALIBRATED_VALIDITY_WEIGHT = 8.0
# The paper's models per setup: seeds 1000, 2000, ..., 10000.
PAPER_SEEDS = 10
