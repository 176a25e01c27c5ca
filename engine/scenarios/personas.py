"""The profiles a study may show people as personas: a scenario file's ``personas`` limits.

With d_j the display map of feature j and [lo_j, hi_j] the limits the file states (display
units, a side left out is unlimited), a profile x may be a persona when

    lo_j <= d_j(x_j) <= hi_j   for every feature j the limits name

(every shipped scenario with an age: ``min: {age: 18}``, an adult applicant). Training,
benchmarks and reproductions use every row; only a study's persona pool is limited
(protocols.running.session.Study.rejected_population).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from engine.scenarios.base import Scenario


def persona_mask(scenario: Scenario, x: Tensor) -> Tensor:
    """(n,) bool: the rows of x (model units) within the scenario's ``persona_limits``."""
    keep = torch.ones(len(x), dtype=torch.bool)
    for name, (low, high) in scenario.persona_limits.items():
        j = scenario.index(name)
        shown = torch.as_tensor(np.asarray(scenario.features[j].display.to_display(
            x[:, j].double().numpy()), dtype=float))
        if low is not None:
            keep &= shown >= low
        if high is not None:
            keep &= shown <= high
    return keep
