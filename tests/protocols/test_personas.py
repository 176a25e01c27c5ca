"""Personas are adults: a scenario's ``personas`` limits (display units) keep the profiles a
study may show as personas, and the synthetic participants drawn from them, within the
stated range (the Loan world's data holds applicants as young as 7: its age is
35 + Gamma(10, 3.5) - 35 years); training and benchmarks keep every row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from engine import BayesDecision, rejected_rows
from engine.scenarios import get_scenario
from engine.scenarios.loader import ScenarioFileError, shipped_files
from engine.scenarios.personas import persona_mask
from protocols.running.session import Study

LOAN_FILE = Path(__file__).resolve().parents[2] / "engine" / "scenarios" / "loan.yaml"


def _ages(scenario, x: np.ndarray | torch.Tensor) -> np.ndarray:
    j = scenario.feature_names.index("age")
    col = torch.as_tensor(x)[:, j].double().numpy()
    return np.asarray(scenario.features[j].display.to_display(col), dtype=float)


def test_a_loan_study_shows_only_adult_personas(store, small_protocol) -> None:
    study = Study(small_protocol, store)
    loan = study.scenario
    pool = study.rejected_population
    everyone = loan.dataset["test"][0][rejected_rows(loan, BayesDecision(loan), "test")]
    assert _ages(loan, everyone).min() < 16  # the data holds minors the model rejects ...
    assert _ages(loan, pool).min() >= 18.0  # ... no persona is one
    assert len(pool) > 0.9 * len(everyone)  # and few adults are lost (the training range)
    assert loan.persona_limits == {"age": (18.0, None)}


@pytest.mark.parametrize("name", sorted(shipped_files()))
def test_every_shipped_scenario_with_an_age_keeps_personas_adult(name: str) -> None:
    sc = get_scenario(name)
    if "age" not in sc.feature_names:
        return
    assert sc.persona_limits.get("age", (None, None))[0] == 18.0, name


def test_the_limits_keep_rows_inside_both_sides(tmp_path) -> None:
    text = LOAN_FILE.read_text().replace("name: loan\n", "name: adults-loan\n", 1)
    assert "personas:\n  min: {age: 18}\n" in text
    own = tmp_path / "adults.yaml"
    own.write_text(text.replace("personas:\n  min: {age: 18}\n",
                                "personas:\n  min: {age: 25}\n  max: {age: 40}\n"))
    sc = get_scenario(str(own))
    x = sc.dataset["test"][0]
    keep = persona_mask(sc, x)
    ages = _ages(sc, x)
    assert torch.equal(keep, torch.as_tensor((ages >= 25) & (ages <= 40)))
    assert 0 < int(keep.sum()) < len(x)
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(text.replace("name: adults-loan", "name: wrong-loan", 1).replace(
        "min: {age: 18}", "min: {height: 150}"))
    with pytest.raises(ScenarioFileError, match="personas.min.height: no feature 'height'"):
        get_scenario(str(wrong))
