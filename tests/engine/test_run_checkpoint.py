"""engine.papers.run_checkpoint: an interrupted HARE benchmark resumes from its finished
seed x base units and ends with the rows an uninterrupted run gives."""

from __future__ import annotations

import json

import pytest

from engine.artifacts import build_artifacts, load_classifier
from engine.papers.hare.benchmark import HareBenchmarkConfig, run_hare_benchmark
from engine.papers.run_checkpoint import Checkpoint
from engine.recourse.base import RecourseContext
from engine.scenarios import get_scenario

CONFIG = HareBenchmarkConfig(bases=("gs", "wachter"), scales=("far",), budget=4,
                             iterations=(1,), ablation_budgets=(4,), ablation_scale="far",
                             calibration_ablation=False, n=6, seeds=2, steps=5,
                             step_timing=False)


def test_units_are_kept_under_their_key_and_a_cut_line_is_ignored(tmp_path):
    path = tmp_path / "run.jsonl"
    first = Checkpoint(path, {"a": 1})
    first.put("seed 0 base gs", [[["gs", "base"], {"gtd": 0.1}]])
    with path.open("a") as f:
        f.write('{"key": "' + first.key + '", "unit": "seed 1 base gs", "val')  # a kill
    again = Checkpoint(path, {"a": 1})
    assert again.get("seed 0 base gs") == [[["gs", "base"], {"gtd": 0.1}]]
    assert again.get("seed 1 base gs") is None and again.reused == 1
    assert Checkpoint(path, {"a": 2}).get("seed 0 base gs") is None  # another configuration


class Interrupted(Exception):
    pass


@pytest.fixture(scope="module")
def context(trained_home):
    scenario = get_scenario("loan")
    build_artifacts("loan", quick=True)
    return RecourseContext(scenario, load_classifier(scenario))


def _rows(doc):
    # a row's time is the only figure that differs between two runs of the same units
    return json.dumps([{k: v for k, v in r.items() if k != "seconds"} for r in doc["rows"]],
                      sort_keys=True)


def test_an_interrupted_run_resumes_with_the_rows_of_an_uninterrupted_one(context, tmp_path):
    straight = run_hare_benchmark(context, CONFIG)

    def interrupt(message: str) -> None:
        if message.startswith("seed 1: wachter"):  # three of the four units are done
            raise Interrupted

    path = tmp_path / "hare.jsonl"
    with pytest.raises(Interrupted):
        run_hare_benchmark(context, CONFIG, on_step=interrupt,
                           checkpoint=Checkpoint(path, {"test": 1}))
    assert len(path.read_text().splitlines()) == 3
    resumed = Checkpoint(path, {"test": 1})
    seen: list[str] = []
    doc = run_hare_benchmark(context, CONFIG, on_step=seen.append, checkpoint=resumed)
    assert resumed.reused == 3 and sum("reused" in m for m in seen) == 3
    assert _rows(doc) == _rows(straight)
