"""Ratings by language: the per-language summary and its bootstrap interval, the split
(``analyze --language``) and its clear error for a language without ratings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from analysis.languages import by_language, only
from analysis.models import AnalysisDataError
from data.store import Store
from study_app.cli import app
from study_app.simulator import simulate


def _ratings(shift: float, n: int = 40, seed: int = 1) -> pd.DataFrame:
    """n participants per language, 5 ratings each; Japanese rates ``shift`` higher."""
    rng = np.random.default_rng(seed)
    rows = []
    for lang, add in (("en", 0.0), ("ja", shift)):
        for i in range(n):
            person = rng.normal(0, 0.8)
            for _ in range(5):
                value = int(np.clip(round(4 + add + person + rng.normal(0, 1)), 1, 7))
                rows.append({"participant_id": f"{lang}-{i}", "language": lang,
                             "acceptance": value, "action": value})
    return pd.DataFrame(rows)


def test_difference_and_interval() -> None:
    block = by_language(_ratings(1.0))
    en, ja = block["by_language"]
    assert (en["participants"], ja["participants"], en["ratings"]) == (40, 40, 200)
    assert ja["name"] == "Japanese"
    d = next(x for x in block["differences"] if x["outcome"] == "acceptance")
    assert d["language"] == "ja" and d["versus"] == "en"
    assert d["difference"] == pytest.approx(ja["mean_acceptance"] - en["mean_acceptance"],
                                            abs=1e-3)
    assert d["lo"] > 0.3 and d["lo"] < d["difference"] < d["hi"]  # a real shift is found
    same = next(x for x in by_language(_ratings(0.0, seed=2))["differences"]
                if x["outcome"] == "action")
    assert same["lo"] < 0 < same["hi"]  # no shift: the interval covers 0
    assert "Japanese minus English, acceptance" in block["sentence"]


def test_split_and_unrecorded() -> None:
    ratings = _ratings(0.0)
    assert set(only(ratings, "ja")["language"]) == {"ja"}
    with pytest.raises(AnalysisDataError, match="no ratings in language 'fr'.*en, ja"):
        only(ratings, "fr")
    imported = ratings.assign(language=None)
    assert by_language(imported)["by_language"][0]["language"] == "not recorded"
    assert by_language(ratings, analysed="ja")["sentence"].startswith(
        "The models use only the ratings given in Japanese")


def test_analyze_refuses_a_language_without_ratings(tmp_path) -> None:
    db = tmp_path / "s.duckdb"
    with Store(db) as store:
        simulate("tominaga-replication", store, 4, decision_model="bayes",
                 languages=["en", "ja"])
    result = CliRunner().invoke(app, ["analyze", "--db", str(db), "--out",
                                      str(tmp_path / "out"), "--language", "fr"])
    assert result.exit_code == 2
    assert "--language: no ratings in language 'fr' (the study's: en, ja)" in result.output
    assert not (tmp_path / "out" / "summary.json").exists()
