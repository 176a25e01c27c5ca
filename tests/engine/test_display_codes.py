"""A number that is a code carries its meaning wherever it is read: "Repayment burden 4"
reads "4 (the largest share of income)"; a code without a declared meaning stays a number;
codes name whole numbers only; a translation translates the meaning beside the number."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.scenarios import get_scenario
from engine.scenarios.loader import ScenarioFileError, load_scenario_file
from protocols.definition.translation import Translator


def test_german_credit_codes_read_with_their_meaning() -> None:
    sc = get_scenario("german-credit")
    burden = next(f for f in sc.features if f.name == "installment_rate").display
    shown = [burden.format(x) for x in (0.0, 1 / 3, 2 / 3, 1.0)]  # codes 1..4 (min-max)
    assert shown == ["1 (the smallest share of income)", "2", "3",
                     "4 (the largest share of income)"]


def test_codes_name_whole_numbers(tmp_path: Path) -> None:
    (tmp_path / "coded.yaml").write_text(
        "extends: loan\nname: coded\nfeatures:\n"
        "  - {name: gender, kind: binary, levels: [female, male], role: immutable}\n"
        "  - {name: age, kind: continuous, role: immutable, display: {offset: 35, "
        "decimals: 1, codes: {40: forty}}}\n", encoding="utf-8")
    with pytest.raises(ScenarioFileError) as e:
        load_scenario_file(tmp_path / "coded.yaml")
    assert any("codes" in str(path) and "decimals: 0" in message
               for path, message in e.value.problems)


def test_a_translation_translates_a_codes_meaning() -> None:
    ja = Translator("ja", by_text={"the largest share of income": "収入に占める割合が最大"})
    assert ja.number(4.0, "", 0, "4 (the largest share of income)") == "4 (収入に占める割合が最大)"
    assert ja.number(3.0, "", 0, "3") == "3"
    assert Translator("en").number(4.0, "", 0, "4 (x)") == "4 (x)"
