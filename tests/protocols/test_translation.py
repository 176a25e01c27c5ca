"""Translations: the shipped Japanese texts of tominaga-replication are complete, a broken
translation file is a clear validate error, the translator shows Japanese with JPY
amounts, and every answer is stored with its language."""

from __future__ import annotations

import datetime
import shutil
from pathlib import Path

import pytest
import yaml

from data.store import Store
from protocols.definition.interface_text import INTERFACE
from protocols.definition.review import review
from protocols.definition.schema import PROTOCOL_DIR, load_protocol, shipped_protocols
from protocols.definition.translation import TRANSLATION_DIR, check, translation_files, translators
from protocols.definition.translation_source import source
from protocols.running.session import Study, UnknownLanguageError
from study_app.simulator import simulate

JA = TRANSLATION_DIR / "tominaga-replication.ja.yaml"


@pytest.fixture(scope="module")
def tominaga():
    return load_protocol("tominaga-replication")


def _ja() -> dict:
    return yaml.safe_load(JA.read_text(encoding="utf-8"))


def test_shipped_languages(tominaga) -> None:
    assert list(translation_files("tominaga-replication", TRANSLATION_DIR)) == ["ja"]
    assert check(tominaga, _ja(), "ja") == []
    in_japanese = ("tominaga-replication", "hare-interactive")  # a HARE study too
    for pid in shipped_protocols():  # the others in English only, and valid
        if pid not in in_japanese:
            assert translation_files(pid, TRANSLATION_DIR) == {}
    for pid in in_japanese:
        result = review(pid)
        assert result.valid and result.resolved["languages"] == ["en", "ja"], pid
    # every text of the HARE and ranking pages has its translation (no English left)
    hare = load_protocol("hare-interactive")
    ja = translators(hare, TRANSLATION_DIR)["ja"]
    for key in INTERFACE:
        if key.startswith(("hare.", "elicitation.", "title.hare", "title.elicitation")):
            assert ja.ui(key) != INTERFACE[key], key
    assert ja.text("Which of these two plans would you rather carry out?") == \
        "この2つのプランのうち、どちらを実行したいと思いますか。"


def test_every_participant_text_has_a_key(tominaga) -> None:
    texts = source(tominaga)["texts"]
    for q in tominaga.screening:
        assert texts.get(f"screening.{q.id}.options", []) == list(q.options)
    assert texts["screening.age.unit"] == "years old" and "sessions.text" in texts
    for key in ("consent", "scenario_text", "plan_view.text", "plan_view.decision_text",
                "questions.impossible_text", "debrief.text", "attention_checks.careful.options"):
        assert key in texts
    scenario = source(tominaga)["scenario"]
    assert scenario["income.unit"] == "million JPY" and len(scenario["toeic.levels"]) == 8


def test_broken_translation_is_a_validate_error(tmp_path: Path, tominaga) -> None:
    data = _ja()
    del data["texts"]["screening.gender.question"]
    data["texts"]["profile.txt"] = data["texts"].pop("profile.text")
    data["texts"]["plan_view.text"] = "AIが作成したプランです。"  # lost its {ordinal}
    data["scenario"]["toeic.levels"] = data["scenario"]["toeic.levels"][:-1]
    problems = dict(check(tominaga, data, "ja"))
    assert problems["texts.screening.gender.question"].startswith("missing")
    assert problems["texts.profile.text"].startswith("missing")
    assert "did you mean profile.text" in problems["texts.profile.txt"]
    assert "{ordinal}" not in problems["texts.plan_view.text"]
    assert "fields" in problems["texts.plan_view.text"]
    assert problems["scenario.toeic.levels"] == "7 texts for 8 English ones"
    assert len(problems) == 5
    assert "unknown language" in dict(check(tominaga, {**_ja(), "language": "xx"}))["language"]
    # validate: the protocol file next to its translations, exit status from `valid`
    shutil.copy(PROTOCOL_DIR / "tominaga-replication.yaml", tmp_path)
    (tmp_path / "translations").mkdir()
    (tmp_path / "translations" / JA.name).write_text(yaml.safe_dump(data, allow_unicode=True),
                                                    encoding="utf-8")
    result = review(tmp_path / "tominaga-replication.yaml")
    assert not result.valid and result.protocol is not None
    where = {f.path for f in result.errors}
    assert f"translations/{JA.name}.texts.screening.gender.question" in where
    assert len(result.errors) == 5


def test_translator_shows_japanese_and_yen(tominaga) -> None:
    ja = translators(tominaga, TRANSLATION_DIR)["ja"]
    assert ja.name == "日本語"
    consent = ja.text(tominaga.consent_text())
    assert "最大5件のプラン" in consent and consent.endswith("同意いただけますか。")
    assert ja.text(tominaga.plan_view.plan_text(2, 5)).startswith("AIが作成した2つ目のプラン")
    assert ja.text("Plan 2 of 5") == "プラン 2 / 5"
    # an item's "Yes" and a rating's "Yes" are different words in Japanese
    assert (ja.level("Yes"), ja.text("Yes"), ja.ui("yes")) == ("あり", "そう思う", "はい")
    assert ja.level("Graduate school (master)") == "大学院（修士）"
    assert ja.number(4.5, "million JPY", 1, "4.5 million JPY") == "￥4,500,000"
    assert ja.date(datetime.date(2026, 11, 27)) == "2026年11月27日"
    en = translators(tominaga, TRANSLATION_DIR)["en"]
    assert en.text("Plan 2 of 5") == "Plan 2 of 5"
    assert en.number(4.5, "million JPY", 1, "4.5 million JPY") == "4.5 million JPY"


def test_language_is_stored_with_every_answer(tmp_path: Path, tominaga) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        simulate(tominaga, store, 6, decision_model="bayes", languages=["en", "ja"])
        rows = store.query("SELECT p.seq, r.language FROM responses r JOIN participants p "
                           "USING (study_id, participant_id)")
        assert rows and {(r["seq"] % 2, r["language"]) for r in rows} == {(0, "en"), (1, "ja")}
        long = store.ratings_long()
        assert len(long) and set(long["language"]) == {"en", "ja"}
        with pytest.raises(UnknownLanguageError, match="not offered in xx"):
            simulate(tominaga, store, 8, decision_model="bayes", languages=["xx"])
        assert store.query("SELECT count(*) AS n FROM participants")[0]["n"] == 6


def test_start_and_choose_language(tmp_path: Path, tominaga) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        study = Study(tominaga, store, decision_model="bayes")
        with pytest.raises(UnknownLanguageError):
            study.start(language="fr")
        assert store.query("SELECT count(*) AS n FROM participants")[0]["n"] == 0
        s = study.start(language="ja")
        assert s.language == "ja"
        other = study.start()
        other.choose_language("ja")  # on the first page
        study.forget()
        assert study.resume(other.token).language == "ja"
        first = other.current_page()
        assert first.id == "screening"  # the paper screened before consent
        other.submit("screening", {"answers": {q.id: q.example_answer()
                                               for q in tominaga.screening}})
        other.choose_language("en")  # too late: the study goes on in its language
        assert other.language == "ja"
        row = store.query("SELECT language FROM responses WHERE page_id = 'screening'")
        assert row == [{"language": "ja"}]


def test_a_changed_protocol_has_no_shipped_translation(tominaga) -> None:
    from protocols.definition.translation import shipped_dir

    assert shipped_dir(tominaga) == TRANSLATION_DIR
    changed = tominaga.model_copy(update={"consent": "Do you agree?"})
    assert shipped_dir(changed) is None  # the shipped texts would not fit it
    assert list(translators(changed, shipped_dir(changed))) == ["en"]
