"""export --format psych-ds: the package meets the Psych-DS rules (data.psych_ds_check,
written from the specification: the official validator is not on a package registry
here), names every column with its value labels, and refuses an existing folder, a study
without ratings and a database of several studies, writing nothing."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from typer.testing import CliRunner

from data.export import export
from data.imports import import_ratings
from data.psych_ds import PackageError, write_package
from data.psych_ds_check import problems
from data.store import Store
from data.value_labels import ProfileItem
from protocols import Study
from protocols.definition.schema import load_protocol
from study_app.cli import app
from study_app.simulator import simulate

ITEMS = [ProfileItem("housing", "Type of residence", ("Owned house", "Rental housing"))]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("pds") / "tom.duckdb"
    protocol = load_protocol("tominaga-replication")
    q = protocol.questions  # a two-label action scale
    q = q.model_copy(update={"action": q.action.model_copy(
        update={"labels": ["Never", "Certainly"]})})
    protocol = protocol.model_copy(update={"questions": q})
    with Store(path) as store:
        simulate(protocol, store, 6, decision_model="bayes")
    return path


@pytest.fixture(scope="module")
def package(db, tmp_path_factory):
    out = tmp_path_factory.mktemp("pkg") / "package"
    with Store(db, read_only=True) as store:
        manifest = write_package(store, out, ITEMS, "l1_actions")
    return out, manifest


def _variables(out) -> dict:
    meta = json.loads((out / "dataset_description.json").read_text())
    return {v["name"]: v for v in meta["variableMeasured"]}


def test_the_package_meets_the_specification_rules(package) -> None:
    out, manifest = package
    assert problems(out) == []
    meta = json.loads((out / "dataset_description.json").read_text())
    assert meta["@context"] == "https://schema.org/" and meta["@type"] == "Dataset"
    assert sorted(p.name for p in (out / "data").iterdir()) == [
        "study-tominagareplication_description-participants_data.csv",
        "study-tominagareplication_description-ratings_data.csv"]
    names = set(_variables(out))
    for path in (out / "data").iterdir():  # every column of every file, described
        assert set(pd.read_csv(path).columns) <= names
    assert manifest["primary_model"]["distance"] == "l1_actions"
    script = (out / "analysis" / "primary.R").read_text()
    assert '"@' not in script and 'distance <- "l1_actions"' in script
    assert "exclude_impossible <- TRUE" in script  # the protocol's rule


def test_scales_and_profile_codes_carry_their_labels(package) -> None:
    out, _ = package
    v = _variables(out)
    accept = [(r["value"], r["name"]) for r in v["acceptance"]["valueReference"]]
    assert accept[0] == (1, "Strongly no") and accept[6] == (7, "Strongly yes")
    assert len(accept) == 7 and v["acceptance_3"]["valueReference"] == v["acceptance"][
        "valueReference"]
    # two labels name the ends of the scale only
    assert [(r["value"], r["name"]) for r in v["action_1"]["valueReference"]] == [
        (1, "Never"), (7, "Certainly")]
    assert [(r["value"], r["name"]) for r in v["profile_housing"]["valueReference"]] == [
        (0, "Owned house"), (1, "Rental housing")]
    assert "valueReference" not in v["profile_income"]  # a number: no codes
    book = pd.read_csv(out / "codebook.csv").fillna("")
    row = book[(book.column == "profile_housing")].iloc[0]
    assert row["levels"] == "0 = Owned house; 1 = Rental housing"


def test_the_wide_file_has_one_row_per_participant_with_each_rating(db, package) -> None:
    out, _ = package
    wide = pd.read_csv(next((out / "data").glob("*participants_data.csv")))
    ratings = pd.read_csv(next((out / "data").glob("*ratings_data.csv")))
    assert len(wide) == 6 and wide.participant_id.is_unique
    first = ratings[ratings.position == 0].set_index("participant_id")
    got = wide.set_index("participant_id")
    for pid, row in first.iterrows():
        assert got.loc[pid, "acceptance_1"] == row["acceptance"]
        assert got.loc[pid, "action_1"] == row["action"]
        assert got.loc[pid, "plan_1"] == row["plan_id"]
    assert set(wide.profile_housing.dropna()) <= {0, 1}


def test_the_check_catches_a_broken_package(package, tmp_path) -> None:
    out, _ = package
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    ratings = next((broken / "data").glob("*ratings_data.csv"))
    ratings.rename(broken / "data" / "ratings.csv")  # not named by the keyword rule
    meta = json.loads((broken / "dataset_description.json").read_text())
    meta["@type"] = "Thing"
    meta["variableMeasured"] = [v for v in meta["variableMeasured"] if v["name"] != "arm"]
    (broken / "dataset_description.json").write_text(json.dumps(meta))
    found = problems(broken)
    assert any("ratings.csv: not named by the keyword rule" in p for p in found)
    assert any("@type is not Dataset" in p for p in found)
    assert any("not in variableMeasured: arm" in p for p in found)


def test_an_existing_folder_is_refused_and_left_alone(db, tmp_path) -> None:
    out = tmp_path / "there"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with Store(db, read_only=True) as store, pytest.raises(PackageError, match="exists"):
        write_package(store, out, ITEMS)
    r = CliRunner().invoke(app, ["export", "--db", str(db), "--out", str(out), "--format",
                                 "psych-ds"])
    assert r.exit_code == 2 and "exists" in r.output
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_a_study_without_ratings_is_refused(tmp_path) -> None:
    with Store(tmp_path / "pilot.duckdb") as store:
        Study(load_protocol("tominaga-replication"), store).start(external_id="p1",
                                                                  session="s1")
        with pytest.raises(PackageError, match="no ratings"):
            write_package(store, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()


def test_the_cli_writes_the_package(db, tmp_path) -> None:
    r = CliRunner().invoke(app, ["export", "--db", str(db), "--out", str(tmp_path / "p"),
                                 "--format", "psych-ds", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["format"] == "psych-ds" and "analysis/primary.R" in doc["files"]
    # the CLI names the scenario's items' codes
    assert "valueReference" in _variables(tmp_path / "p")["profile_education"]
    r = CliRunner().invoke(app, ["export", "--db", str(db), "--out", str(tmp_path / "q"),
                                 "--format", "psych-ds", "--free-text"])
    assert r.exit_code == 2 and "free text" in r.output


def test_the_plain_codebook_names_the_scale_labels(db, tmp_path) -> None:
    with Store(db, read_only=True) as store:
        export(store, tmp_path / "csv", "csv")
    book = pd.read_csv(tmp_path / "csv" / "codebook.csv").fillna("")
    levels = book.set_index(["table", "column"])["levels"]
    assert levels[("ratings", "acceptance")].startswith("1 = Strongly no; 2 = No;")
    assert levels[("ratings_long", "action")] == "1 = Never; 7 = Certainly"
    assert levels[("ratings", "plan_id")] == ""


def test_a_database_of_several_studies_is_refused(tmp_path) -> None:
    pd.DataFrame({"participant_id": ["p1", "p1"], "plan_id": ["a", "b"], "l0": [1, 2],
                  "l1": [0.2, 0.6], "acceptance": [5, 3], "action": [4, 2]}
                 ).to_csv(tmp_path / "r.csv", index=False)
    with Store(tmp_path / "two.duckdb") as store:
        for sid in ("one", "two"):
            import_ratings(store, tmp_path / "r.csv", study_id=sid)
        with pytest.raises(PackageError, match="holds 2 studies"):
            write_package(store, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_column_of_both_files_says_both_meanings(package) -> None:
    out, _ = package
    arm = _variables(out)["arm"]["description"]
    assert "arm that produced the plan" in arm and "assigned arm" in arm
