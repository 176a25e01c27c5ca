"""Broken scenario files: each fails with its problem at its path, and nothing is trained.

Every case writes a small scenario file (a pool world, a data world or an equations world
with one thing broken) and checks the path and the message of the problem
(``ScenarioFileError.problems``), then the same through the CLI: ``train --scenario FILE
--json`` exits 2 with one JSON object on stdout (``error``, ``problems``), a one-line error
on stderr, and no artifact folder.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from engine.scenarios import ScenarioFileError, load_scenario_file
from study_app.cli import app

POOL_CSV = """education,job,married,income,loan
high school,clerk,no,30000,10000
bachelor,engineer,yes,60000,10000
"""
DATA_CSV = """a,b,c,y
1.0,2.0,3.0,1
0.5,1.5,2.5,0
0.2,1.0,2.0,1
"""
POOL: dict[str, Any] = {
    "name": "broken-pool",
    "title": "Pool",
    "features": [
        {"name": "education", "kind": "ordinal", "levels": ["high school", "bachelor", "master"]},
        {"name": "job", "kind": "categorical", "levels": ["clerk", "engineer"]},
        {"name": "married", "kind": "binary", "levels": ["no", "yes"], "role": "immutable"},
        {"name": "income", "kind": "continuous", "display": {"unit": "$"}},
        {"name": "loan", "kind": "continuous", "role": "immutable"},
    ],
    "world": {"kind": "pool", "pool": "pool.csv", "rule": "income >= 4 * loan"},
}
DATA: dict[str, Any] = {
    "name": "broken-data",
    "title": "Data",
    "features": [{"name": n, "kind": "continuous"} for n in "abc"],
    "world": {"kind": "data", "data": "data.csv", "label": "y",
              "graph": ["a -> b", "b -> c"]},
}


def _set(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


# (id, scenario document, pool.csv text, expected path, expected message fragment)
CASES = [
    ("unknown-feature-kind", _set(POOL, ("features", 1, "kind"), "nominal"), POOL_CSV,
     "features[1].kind", "unknown feature kind 'nominal'"),
    ("pool-level-outside-list", POOL, POOL_CSV.replace("bachelor,engineer", "phd,engineer"),
     "world.pool", "row 2, column 'education': 'phd' is not one of its levels"),
    ("rule-level-outside-list", _set(POOL, ("world", "rule"), "education >= 'phd'"), POOL_CSV,
     "world.rule", "'phd' is not a level of 'education'"),
    ("graph-cycle", _set(DATA, ("world", "graph"), ["a -> b", "b -> c", "c -> a"]), None,
     "world.graph", "cycle: a -> b -> c -> a"),
    ("edge-to-unknown-feature", _set(DATA, ("world", "graph"), ["a -> b", "b -> salary"]),
     None, "world.graph[1]", "unknown feature 'salary'"),
    ("pool-columns-missing", POOL, POOL_CSV.replace(",loan\n", "\n", 1), "world.pool",
     "missing column(s) for feature(s) loan"),
    ("pool-columns-unknown", POOL, POOL_CSV.replace("job,", "jobs,", 1), "world.pool",
     "column(s) jobs are not features"),
    ("rule-unknown-feature", _set(POOL, ("world", "rule"), "incme >= 4 * loan"), POOL_CSV,
     "world.rule", "unknown feature 'incme'; did you mean 'income'?"),
    ("binary-with-three-levels", _set(POOL, ("features", 2, "levels"), ["no", "yes", "maybe"]),
     POOL_CSV, "features[2].levels", "a binary feature has 2 levels, got 3"),
    ("level-listed-twice",
     _set(POOL, ("features", 0, "levels"), ["high school", "bachelor", "bachelor"]), POOL_CSV,
     "features[0].levels[2]", "level 'bachelor' is listed twice"),
    ("unknown-world-kind", _set(POOL, ("world", "kind"), "simulation"), POOL_CSV, "world",
     "unknown kind 'simulation'"),
    ("feature-listed-twice", _set(POOL, ("features", 1, "name"), "education"), POOL_CSV,
     "features[1].name", "feature 'education' is listed twice"),
    ("rule-python-code", _set(POOL, ("world", "rule"), "__import__('os').getcwd()"),
     POOL_CSV, "world.rule", "does not allow"),
    ("pool-not-a-number", POOL, POOL_CSV.replace("60000", "sixty"), "world.pool",
     "row 2, column 'income': 'sixty' is not a number"),
    ("features-not-in-causal-order", _set(DATA, ("world", "graph"), ["c -> a"]), None,
     "features[2]", "'c' causes 'a' (features[0]) but is listed after it"),
    ("data-label-column-missing", _set(DATA, ("world", "label"), "approved"), None,
     "world.data", "missing column(s) approved"),
    ("unknown-field", _set(POOL, ("features", 0, "lables"), ["a"]), POOL_CSV,
     "features[0].lables", "unknown field 'lables'"),
    ("display-on-a-level-feature", _set(POOL, ("features", 0, "display"), {"unit": "$"}),
     POOL_CSV, "features[0].display", "display maps are for continuous features"),
    ("equations-class-missing",
     _set(DATA, ("world",), {"kind": "equations", "module": "engine.scenarios.loan",
                             "scm": "NoSuchSCM"}), None, "world.scm", "cannot import"),
    ("yaml-boolean-level", _set(POOL, ("features", 2, "levels"), [False, True]), POOL_CSV,
     "features[2].levels[0]", "YAML reads unquoted yes/no"),
    ("discrete-feature-with-causes",
     _set(DATA, ("features", 1), {"name": "b", "kind": "binary", "levels": ["x", "y"]}), None,
     "features[1].kind", "only as a cause"),
    ("range-reversed", _set(POOL, ("features", 3, "range"), [5, 1]), POOL_CSV,
     "features[3].range", "low < high"),
]


def _write(tmp_path: Path, doc: dict[str, Any], pool_csv: str | None) -> Path:
    (tmp_path / "pool.csv").write_text(pool_csv or POOL_CSV)
    (tmp_path / "data.csv").write_text(DATA_CSV)
    path = tmp_path / "world.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_the_sound_files_load(tmp_path: Path) -> None:
    """The documents the cases break are sound themselves (so each case tests one fault)."""
    pool = load_scenario_file(_write(tmp_path, POOL, POOL_CSV))
    assert pool.world_kind == "pool" and len(pool.pool) == 2
    data = load_scenario_file(_write(tmp_path, DATA, None))
    assert data.world_kind == "data" and data.parents == {0: (), 1: (0,), 2: (1,)}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_broken_file_names_the_path(tmp_path: Path, case: tuple[Any, ...]) -> None:
    _, doc, pool_csv, where, fragment = case
    with pytest.raises(ScenarioFileError) as info:
        load_scenario_file(_write(tmp_path, doc, pool_csv))
    problems = info.value.problems
    assert any(p == where and fragment in m for p, m in problems), problems


@pytest.mark.parametrize("case", CASES[:10], ids=[c[0] for c in CASES[:10]])
def test_cli_reports_one_json_object_and_trains_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: tuple[Any, ...]
) -> None:
    _, doc, pool_csv, where, fragment = case
    home = tmp_path / "home"
    monkeypatch.setenv("RECOURSE_STUDY_HOME", str(home))
    path = _write(tmp_path, doc, pool_csv)
    result = CliRunner().invoke(app, ["train", "--scenario", str(path), "--json"])
    assert result.exit_code == 2
    out = json.loads(result.stdout)
    assert fragment in out["error"]
    assert any(p["path"] == where and fragment in p["message"] for p in out["problems"])
    error_lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert len(error_lines) == 1 and where in error_lines[0]
    assert not home.exists()  # nothing trained, no artifact folder
