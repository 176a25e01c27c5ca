"""Which of the iCARMA paper's two data sets a scenario stands for, and that data set's rows of
a table and training hyper-parameters.

The paper runs Loan (semi-synthetic, its SCM known) and GiveMeSomeCredit (real, the causal
graph of its Figure 6 learned as a flow: scenario ``gmsc-causal``). Its tables list Loan rows
(``rows`` in paper_values.yaml) and, in Tables 1 and 2, GMSC rows for iCARMA (``gmsc_rows``);
GMSC has its own hyper-parameters (App. C.3.3,
engine.recourse.icarma.config.ICarmaConfig.paper). A scenario's file says which published data
set its rows are (``data_set``); a scenario of GMSC's trains with GMSC's configuration, every
other one with Loan's, and only a Loan or GMSC scenario is compared with the paper's rows.
"""

from __future__ import annotations

from typing import Any

PAPER_DATASETS: tuple[str, ...] = ("loan", "gmsc")


def data_set(scenario_name: str) -> str | None:
    """The published data set whose rows the scenario's are, as its file states it
    (``data_set``; the Loan variants: ``loan``, GiveMeSomeCredit's: ``gmsc``), or None."""
    from engine.scenarios import scenario_file
    from engine.scenarios.loader import parse_scenario_file

    return parse_scenario_file(scenario_file(scenario_name)).data_set


def paper_dataset(scenario_name: str) -> str:
    """The iCARMA data set whose configuration the scenario trains with: ``gmsc`` for a
    scenario of GiveMeSomeCredit's rows, else ``loan``."""
    return "gmsc" if data_set(scenario_name) == "gmsc" else "loan"


def table_rows(spec: dict[str, Any], scenario_name: str) -> list[dict[str, Any]]:
    """A table's paper rows for the scenario's data set; ValueError when the paper reports
    none for it (Table 3 and the fairness study are Loan only; a scenario of another data set
    or of none has no paper rows to be compared with)."""
    dataset = data_set(scenario_name)
    if dataset not in PAPER_DATASETS:
        what = f"the {dataset} data set" if dataset else "no published data set"
        raise ValueError(f"the iCARMA paper reports Loan and GMSC rows; scenario "
                         f"{scenario_name!r} is {what}")
    key = "rows" if dataset == "loan" else f"{dataset}_rows"
    if key not in spec:
        raise ValueError(f"{spec['table']} of the iCARMA paper has no {dataset.upper()} rows "
                         f"(scenario {scenario_name!r}); it reports Loan only")
    return list(spec[key])
