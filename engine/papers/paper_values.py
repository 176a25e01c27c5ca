"""The papers' published figures (``paper_values.yaml``, next to this module), as data.

Each target of ``recourse-study reproduce`` reads its table here: the iCARMA tables as rows
(setting, method and the values of validity, plausibility, hap), the fairness case study as
its stated findings, the HARE tables as values per base generator and dataset in the order
of the table's ``levels``. Every entry names its paper, table and row.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

PATH = Path(__file__).with_name("paper_values.yaml")


@cache
def paper_values() -> dict[str, Any]:
    """The whole file (cached; read-only by convention)."""
    with PATH.open() as fh:
        return yaml.safe_load(fh)


def target_values(target: str) -> dict[str, Any]:
    """One target's table (KeyError naming the known targets)."""
    values = paper_values()
    if target not in values or target in ("papers", "tolerances"):
        known = [k for k in values if k not in ("papers", "tolerances")]
        raise KeyError(f"no paper values for {target!r}; known: {', '.join(known)}")
    return values[target]


def tolerance(method: str, metric: str) -> float:
    """The absolute tolerance of a cell (``tolerances`` in the file)."""
    return float(paper_values()["tolerances"][method][metric])


def paper_source(paper: str) -> dict[str, str]:
    """Title, file and setting of ``icarma`` or ``hare``."""
    return dict(paper_values()["papers"][paper])
