"""Tabular worlds (real data without a causal graph): the shipped data files, the HARE paper's
preprocessing, the world model, the classifiers, the fixed test people and bad input."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from engine.artifacts import load_classifier
from engine.decision import fixed_test_people, rejected_rows
from engine.preferences import all_actionable
from engine.recourse import RecourseContext, get_method
from engine.scenarios import ScenarioFileError, get_scenario, load_scenario_file
from engine.scenarios.tabular_model import TabularWorldModel
from engine.scm import WorldModelInputError

REAL = Path(__file__).resolve().parents[2] / "engine" / "scenarios" / "data" / "real"


def test_the_shipped_files_match_the_checksums_of_their_readme():
    readme = (REAL / "README.md").read_text()
    stated = dict(re.findall(r"\| `([\w.-]+)` \|.*\| ([0-9a-f]{64}) \|", readme))
    assert set(stated) == {"adult.csv", "german.csv", "german-codes.txt",
                           "compas-two-years.csv"}
    for name, digest in stated.items():
        assert hashlib.sha256((REAL / name).read_bytes()).hexdigest() == digest, name


@pytest.mark.parametrize("name, d, continuous, immutable, rows", [
    ("adult", 13, 6, {"age", "sex", "fnlwgt", "native_country", "race", "relationship"},
     30_162),
    ("compas", 7, 4, {"age", "race", "sex"}, 6_172),  # ProPublica's case selection
    ("german-credit", 10, 7, {"age", "dependents"}, 1_000),
    ("gmsc", 10, 10, {"age", "dependents"}, 120_269),  # fetched by make install
])
def test_the_papers_preprocessing(name, d, continuous, immutable, rows):
    s = get_scenario(name)
    assert s.world_kind == "tabular" and s.scm is None and s.d == d
    assert sum(not f.levels for f in s.features) == continuous
    assert {s.feature_names[j] for j in s.immutable} == immutable
    x = torch.cat([s.dataset[k][0] for k in ("train", "validation", "test")])
    assert len(x) == rows
    for j, f in enumerate(s.features):
        if f.levels:  # binarized or ordered levels: their codes, every one present
            assert set(x[:, j].tolist()) == set(range(len(f.levels))), f.name
        else:  # continuous: min-max scaled to exactly [0, 1] over the kept rows
            assert (x[:, j].min().item(), x[:, j].max().item()) == (0.0, 1.0), f.name
            assert s.ranges[j].item() == 1.0


def test_gmsc_causal_is_the_gmsc_rows_with_the_icarma_papers_graph():
    plain, causal = get_scenario("gmsc"), get_scenario("gmsc-causal")
    assert causal.world_kind == "data" and causal.scm is None
    assert torch.equal(causal.dataset["train"][0], plain.dataset["train"][0])
    assert len(causal.dataset["train"][0]) == 60_134  # the paper's 0.5 training split
    names = causal.feature_names
    edges = {(names[p], names[c]) for c, parents in causal.graph.items() for p in parents}
    assert len(edges) == 19  # PEAR's released edges (the paper's Figure 6)
    assert ("age", "monthly_income") in edges and ("open_credit_lines", "debt_ratio") in edges
    assert {names[j] for j in causal.actionable} == {
        "monthly_income", "revolving_utilization", "open_credit_lines", "real_estate_loans"}
    assert {names[j] for j in causal.immutable} == {"age", "dependents"}
    assert causal.extras["unfavourable_weight"] == 5


def test_adult_binarizes_one_category_against_the_rest_and_keeps_display_units():
    s = get_scenario("adult")
    x, y = s.dataset["train"]
    shown = s.to_display(x[:200])
    assert all(17 <= p["age"] <= 90 for p in shown)  # back in years
    assert get_scenario("adult").features[s.index("sex")].levels == ("female", "male")
    assert 0.2 < float(y.mean()) < 0.3  # > $50K: 7,508 of the 30,162 kept rows


def test_the_world_model_changes_only_what_a_plan_sets():
    s = get_scenario("german-credit")
    world = TabularWorldModel(s)
    x = s.dataset["test"][0][:4]
    mask = torch.zeros_like(x, dtype=torch.bool)
    mask[:, s.index("duration")] = True
    values = x.clone()
    values[:, s.index("duration")] = 0.5
    x_cf = world.counterfactual(x, mask, values)
    assert torch.equal(x_cf[:, s.index("duration")], torch.full((4,), 0.5, dtype=x.dtype))
    others = [j for j in range(s.d) if j != s.index("duration")]
    assert torch.equal(x_cf[:, others], x[:, others])
    mask[:, s.index("savings")] = True
    values[:, s.index("savings")] = 2.6  # a level feature takes its nearest level
    assert (world.counterfactual(x, mask, values)[:, s.index("savings")] == 3.0).all()
    with pytest.raises(WorldModelInputError, match="immutable feature.*age"):
        world.counterfactual(x, torch.eye(s.d, dtype=torch.bool)[[0]].expand(4, -1), x)
    with pytest.raises(WorldModelInputError, match="no exogenous noise"):
        world.abduct(x)
    lp = world.log_prob(x)
    odd = x.clone()
    odd[:, s.index("credit_amount")] = 3.0  # far outside the data
    assert torch.isfinite(lp).all() and (world.log_prob(odd) < lp).all()
    assert world.sample(5, seed=1).shape == (5, s.d)
    assert torch.equal(world.sample(5, seed=1), world.sample(5, seed=1))


def test_wachter_and_growing_spheres_run_on_a_tabular_world(trained_home):
    s = get_scenario("german-credit")
    clf = load_classifier(s, "lr")
    context = RecourseContext(s, clf)
    assert isinstance(context.world, TabularWorldModel)
    assert context.density_source == "marginals"
    rows = fixed_test_people(s, clf, n=6)
    x = s.dataset["test"][0][rows]
    profiles = all_actionable(s.feature_names, s.actionable, len(x))
    for name in ("wachter", "gs"):
        batch = get_method(name, context).recourse(x, profiles)
        assert bool(batch.found.any()), name
        found = batch.found
        assert bool(batch.valid[found].all()), name
        moved = (batch.x_cf != batch.x)
        assert not bool(moved[:, list(s.immutable)].any()), name  # immutables never change
        assert torch.equal(moved, moved & batch.action_mask), name  # nothing else moves
        levels = [j for j, f in enumerate(s.features) if f.levels]
        assert torch.equal(batch.x_cf[:, levels], batch.x_cf[:, levels].round()), name


def test_the_classifiers_and_the_fixed_test_people(trained_home):
    s = get_scenario("german-credit")
    lr, ann = load_classifier(s, "lr"), load_classifier(s, "ann")
    assert lr.hidden == () and ann.hidden == (18, 9, 3)
    assert load_classifier(s).hidden == ann.hidden  # the file's classifier: ann
    xs, ys = s.dataset["test"]
    for model in (lr, ann):
        approved = model.decision(xs.float())
        accuracy = float((approved == ys.bool()).float().mean())
        assert accuracy > 0.65  # quick: LR 0.70, ANN 0.70; full: 0.70, 0.71
        assert 10 <= int((~approved).sum()) <= 200  # rejects some of the 250, not everybody
    rows = fixed_test_people(s, lr)
    assert len(rows) == min(150, len(rejected_rows(s, lr)))
    assert len(set(rows.tolist())) == len(rows)
    assert not bool(lr.decision(xs[rows].float()).any())  # every one rejected
    assert np.array_equal(rows, fixed_test_people(s, lr))  # fixed
    assert not np.array_equal(rows, fixed_test_people(s, lr, seed=1))
    with pytest.raises(ValueError, match="belongs to tabular worlds"):
        load_classifier(get_scenario("loan"), "lr")


# ---- bad input ------------------------------------------------------------------------------
FILE = """\
name: tiny-credit
title: Tiny credit
features:
  - {name: age, kind: continuous, role: immutable}
  - {name: amount, kind: continuous}
  - {name: job, kind: categorical, levels: [clerk, manager, owner]}
world:
  kind: tabular
  data: tiny.csv
  label: good
  favourable: [1]
  unfavourable: [0]
"""


def _write(tmp_path: Path, rows: list[str], header: str = "age,amount,job,good",
           text: str = FILE) -> Path:
    (tmp_path / "tiny.csv").write_text(header + "\n" + "\n".join(rows) + "\n")
    path = tmp_path / "tiny.yaml"
    path.write_text(text)
    return path


def _rows(n: int) -> list[str]:
    return [f"{20 + i},{100 * (i + 1)},{'clerk' if i % 2 else 'manager'},{i % 2}"
            for i in range(n)]


def test_a_small_file_loads(tmp_path):
    s = load_scenario_file(_write(tmp_path, _rows(40)))
    assert s.world_kind == "tabular" and len(s.dataset["train"][0]) == 20


def test_a_missing_label_column_is_a_clear_error(tmp_path):
    path = _write(tmp_path, [r.rsplit(",", 1)[0] for r in _rows(40)], header="age,amount,job")
    with pytest.raises(ScenarioFileError) as e:
        load_scenario_file(path)
    assert ("world.label", "tiny.csv has no label column 'good' (columns: age, amount, job)") \
        in e.value.problems


def test_an_immutable_feature_missing_from_the_data_is_a_clear_error(tmp_path):
    path = _write(tmp_path, [r.split(",", 1)[1] for r in _rows(40)], header="amount,job,good")
    with pytest.raises(ScenarioFileError) as e:
        load_scenario_file(path)
    [(where, message)] = e.value.problems
    assert where == "features[0]"
    assert message.startswith("the immutable feature 'age' is read from column 'age', which "
                              "tiny.csv does not have")


def test_a_category_unseen_in_training_is_a_clear_error(tmp_path):
    rows = _rows(40)
    perm = torch.randperm(40, generator=torch.Generator().manual_seed(0))
    test_row = int(perm[-1])  # the last shuffled row lands in the test split
    rows[test_row] = rows[test_row].replace("clerk", "owner").replace("manager", "owner")
    with pytest.raises(ScenarioFileError) as e:
        load_scenario_file(_write(tmp_path, rows))
    [(where, message)] = e.value.problems
    assert where == "features[2]"
    assert "category 'owner' of 'job' occurs in 1 row(s) of the test split but never in the " \
        "training split" in message


def test_values_without_a_level_or_label_are_clear_errors(tmp_path):
    rows = _rows(40)
    rows[3] = rows[3].replace("manager", "pilot").replace("clerk", "pilot")
    with pytest.raises(ScenarioFileError, match="'pilot' is not one of its levels"):
        load_scenario_file(_write(tmp_path, rows))
    rows = [r[:-1] + ("yes" if i == 5 else r[-1]) for i, r in enumerate(_rows(40))]
    with pytest.raises(ScenarioFileError, match="'yes' in 1 row.*neither favourable"):
        load_scenario_file(_write(tmp_path, rows))
    text = FILE + "  columns: {salary: {column: pay}, job: {one: [owner]}}\n"
    with pytest.raises(ScenarioFileError) as e:
        load_scenario_file(_write(tmp_path, _rows(40), text=text))
    assert {p for p, _ in e.value.problems} == {"world.columns.salary", "world.columns.job.one"}


def test_a_row_selection_keeps_the_rows_inside_every_filter(tmp_path):
    # amount 100..6000 (one row per 100); keep 1000 <= amount <= 4000 and no managers
    text = FILE + "  rows: {amount: {min: 1000, max: 4000}, job: {exclude: [manager]}}\n"
    s = load_scenario_file(_write(tmp_path, _rows(60), text=text))
    kept = [i for i in range(60) if 1000 <= 100 * (i + 1) <= 4000 and i % 2]
    x = torch.cat([s.dataset[k][0] for k in ("train", "validation", "test")])
    assert len(x) == len(kept) == 16
    assert s.extras["rows_not_selected"] == 60 - 16
    assert set(x[:, 2].tolist()) == {0.0}  # only clerks (the first level) are left
    text = FILE + "  rows: {pay: {min: 1}, amount: {min: 5, max: 1}}\n"
    with pytest.raises(ScenarioFileError) as e:
        load_scenario_file(_write(tmp_path, _rows(40), text=text))
    assert {p for p, _ in e.value.problems} == {"world.rows.amount"}
    text = FILE + "  rows: {pay: {min: 1}}\n"
    with pytest.raises(ScenarioFileError, match="no column 'pay' to select rows by"):
        load_scenario_file(_write(tmp_path, _rows(40), text=text))


def test_a_graph_makes_a_tabular_world_a_data_world(tmp_path):
    text = FILE + "  graph: [age -> amount]\n  unfavourable_weight: 3\n"
    s = load_scenario_file(_write(tmp_path, _rows(40), text=text))
    assert s.world_kind == "data" and s.graph == {0: (), 1: (0,), 2: ()}
    assert s.extras["unfavourable_weight"] == 3
    assert s.dataset["train"][0][:, 1].max().item() <= 1.0  # still min-max scaled
    text = FILE + "  graph: [age -> job, amount -> amount, age => amount]\n"
    with pytest.raises(ScenarioFileError) as e:
        load_scenario_file(_write(tmp_path, _rows(40), text=text))
    where = {p for p, _ in e.value.problems}
    assert where == {"world.graph[1]", "world.graph[2]", "features[2].kind"}
    text = FILE + "  unfavourable_weight: 3\n"
    with pytest.raises(ScenarioFileError) as e:
        load_scenario_file(_write(tmp_path, _rows(40), text=text))
    [(where, message)] = e.value.problems
    assert where == "world.unfavourable_weight" and "world with a causal graph" in message
