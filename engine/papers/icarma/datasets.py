"""Which of the iCARMA paper's two data sets a scenario stands for, and that data set's rows of
a table and training hyper-parameters.

The paper runs Loan (semi-synthetic, its SCM known) and GiveMeSomeCredit (real, the causal
graph of its Figure 6 learned as a flow: scenario ``gmsc-causal``). Its tables list Loan rows
(``rows`` in paper_values.yaml) and, in Tables 1 and 2, GMSC rows for iCARMA (``gmsc_rows``);
GMSC has its own hyper-parameters (App. C.3.3,
engine.recourse.icarma.config.ICarmaConfig.paper). Every other scenario runs as Loan does.
"""

from __future__ import annotations

from typing import Any

PAPER_DATASETS: tuple[str, ...] = ("loan", "gmsc")
# scenarios that stand for the paper's GMSC (the same rows and graph)
GMSC_SCENARIOS: tuple[str, ...] = ("gmsc-causal",)


def paper_dataset(scenario_name: str) -> str:
    """``gmsc`` for a scenario of the paper's GMSC, else ``loan``."""
    return "gmsc" if scenario_name in GMSC_SCENARIOS else "loan"


def table_rows(spec: dict[str, Any], scenario_name: str) -> list[dict[str, Any]]:
    """A table's paper rows for the scenario's data set; ValueError when the paper reports
    none for it (Table 3 and the fairness study are Loan only)."""
    dataset = paper_dataset(scenario_name)
    key = "rows" if dataset == "loan" else f"{dataset}_rows"
    if key not in spec:
        raise ValueError(f"{spec['table']} of the iCARMA paper has no {dataset.upper()} rows "
                         f"(scenario {scenario_name!r}); it reports Loan only")
    return list(spec[key])
