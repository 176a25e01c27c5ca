"""Progress while artifacts train (study_app.cli.training_progress): the plan with its estimate
first, and where stderr is not a terminal a line per tenth of an artifact's epochs."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from engine.artifact_shipped import SHIPPED_ENV
from engine.artifact_store import HOME_ENV
from study_app.cli.training_progress import announce_training, training_progress


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=200), out


def test_a_log_gets_a_line_per_tenth_of_the_epochs_with_the_time_left() -> None:
    console, out = _console()
    with training_progress(console) as report:
        for epoch in range(1, 101):
            report("flow", epoch, 100, f"epoch {epoch}/100")
    lines = out.getvalue().splitlines()
    assert len(lines) == 11  # the first epoch, then 10/100, 20/100, ..., 100/100
    assert lines[0].startswith("training flow: 1/100 epoch 1/100 (elapsed 00:00")
    assert lines[1].startswith("training flow: 10/100 epoch 10/100 (elapsed 00:00")
    assert "left about" in lines[1] and lines[-1].startswith("training flow: 100/100")


def test_the_plan_names_what_will_train_and_estimates_it_from_an_older_copy(
    trained_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SHIPPED_ENV, "off")
    monkeypatch.setenv(HOME_ENV, str(tmp_path))
    folder = tmp_path / "artifacts" / "loan"
    folder.mkdir(parents=True)
    for suffix in (".pt", ".json"):  # a decision model trained to another configuration
        shutil.copy2(trained_home / "artifacts" / "loan" / f"decision{suffix}", folder)
    meta = json.loads((folder / "decision.json").read_text())
    meta["fingerprint"], meta["seconds"] = "stale", 150.0
    (folder / "decision.json").write_text(json.dumps(meta))
    console, out = _console()
    plan = announce_training(console, "loan", quick=True, only=("decision",))
    assert plan == {"decision": 150.0}
    assert out.getvalue().strip() == ("training decision of 'loan' before anything else "
                                      "starts (about 2 min on one core)")
    console, out = _console()
    assert announce_training(console, "loan", quick=True, only=("flow",)) == {"flow": None}
    assert "no earlier training time to estimate from" in out.getvalue()
