"""Numbers as a participant reads them. A number that is a code carries its meaning:
"Repayment burden 4" reads "4 (the largest share of income)"; a code without a declared
meaning stays a number; codes name whole numbers only; a translation translates the meaning
beside the number. Amounts the data states in another currency are shown in the study's at
the declared factor (German Credit's Deutsche Mark in euro)."""

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


def test_deutsche_mark_amounts_are_shown_in_euro_at_the_declared_rate() -> None:
    import pandas as pd

    sc = get_scenario("german-credit")
    j = sc.feature_names.index("credit_amount")
    amount = sc.features[j].display
    raw = pd.read_csv(Path(sc.source).parent / "data" / "real" / "german.csv")["credit_amount"]
    assert amount.unit == "€"
    # model units 0 and 1 are the data's least and largest amounts (DM), times the factor
    assert amount.to_display(0.0) == pytest.approx(raw.min() * 0.511292)
    assert amount.to_display(1.0) == pytest.approx(raw.max() * 0.511292)
    assert amount.format(0.0) == f"€{raw.min() * 0.511292:,.0f}"
    assert not [level for f in sc.features for level in f.levels if "DM" in level]
