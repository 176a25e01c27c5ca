"""`recourse-study reproduce TARGET --fast --json` for every target, on CARMA's published
samples (``pytest -m slow``; minutes per target).

Runs in ``$RECOURSE_STUDY_SLOW_HOME`` (default: the repository's ``.recourse-study``, where
`recourse-study train --scenario loan-carma` keeps its artifacts), so the decision model and
flow are built once (about 5 minutes) and reused; each target's own training (``--fast``:
one seed, 20 epochs per iCARMA model) is cached too. The command's ``seconds`` are printed:
`reproduce ... --fast` is meant to finish within 5 minutes on the 2-core machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.benchmarks.reproduce import TARGET_NAMES

REPO = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).with_name("recourse-study"))
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def home() -> Path:
    path = Path(os.environ.get("RECOURSE_STUDY_SLOW_HOME") or REPO / ".recourse-study")
    env = {**os.environ, "RECOURSE_STUDY_HOME": str(path)}
    done = subprocess.run(
        [CLI, "train", "--scenario", "loan-carma", "--only",
         "decision,flow", "--json"], env=env, capture_output=True, text=True, check=True)
    doc = json.loads(done.stdout)
    # the decision model on the published classifier test split
    assert doc["decision_accuracy"] >= 0.99 and doc["bayes_accuracy"] == 1.0
    return path


@pytest.mark.timeout(900)
@pytest.mark.parametrize("target", TARGET_NAMES)
def test_fast_reproduction(home, target):
    env = {**os.environ, "RECOURSE_STUDY_HOME": str(home)}
    done = subprocess.run(
        [CLI, "reproduce", target, "--fast", "--json"],
        env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)  # one JSON object, progress on stderr
    print(f"{target}: {doc['seconds']:.0f} s, {doc['summary']}")
    assert doc["target"] == target and doc["config"]["fast"] is True
    assert doc["cells"] and doc["checks"]
    if target.startswith("icarma"):
        assert doc["config"]["repair"] is False
    if target in ("icarma-table1", "icarma-table2"):
        oracle = [c for c in doc["cells"] if c["method"] == "oracle"]
        assert all(c["ours"] == 1.0 for c in oracle if c["metric"] == "plausibility")
    if target.startswith("hare"):
        budget = next(c for c in doc["checks"] if "budget" in c["claim"])
        assert budget["passed"], budget["detail"]
