"""The tutorials' commands are tested: every `recourse-study` command of a tutorial script
parses against the command line as it is (fast), each script runs end to end on small
settings (slow), and the add-a-method example is a working method behind the catalogue."""

from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_process import CLI

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((REPO / "docs" / "tutorials" / "scripts").glob("*.sh"))


def _commands(script: Path) -> list[list[str]]:
    """The script's `recourse-study ...` commands (continuation lines joined), with its
    shell variables replaced by their defaults."""
    text = script.read_text(encoding="utf-8").replace("\\\n", " ")
    defaults = dict(line.split("=${", 1)[0:1] + [line.split(":-", 1)[1].rstrip("}")]
                    for line in text.splitlines() if "=${" in line and ":-" in line)
    commands = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("recourse-study "):
            continue
        for name, value in defaults.items():
            line = line.replace(f'"${name}"', value).replace(f"${name}", value)
        commands.append(shlex.split(line)[1:])
    return commands


def test_every_tutorial_has_its_script_and_includes_it() -> None:
    assert {s.stem for s in SCRIPTS} >= {"run-a-study", "replicate-reference-study",
                                         "bring-your-own-data", "pilot-to-package"}
    for script in SCRIPTS:
        page = REPO / "docs" / "tutorials" / f"{script.stem}.md"
        assert f'--8<-- "docs/tutorials/scripts/{script.name}"' in page.read_text(), page


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_tutorial_commands_parse(script: Path) -> None:
    import typer

    from study_app.cli import app

    root = typer.main.get_command(app)
    commands = _commands(script)
    assert commands, f"{script.name} runs no recourse-study command"
    for args in commands:
        command, rest, path = root, list(args), []
        while hasattr(command, "list_commands"):
            name, rest = rest[0], rest[1:]
            command = command.get_command(command.context_class(command), name)
            assert command is not None, f"{script.name}: unknown command {' '.join(path + [name])}"
            path.append(name)
        command.make_context(" ".join(path), rest)  # raises on an unknown option or value


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_tutorial_runs_end_to_end(script: Path, tmp_path: Path, trained_home: Path) -> None:
    env = dict(os.environ, N="20", OUT=str(tmp_path / "out"), SIZES="20", SIMS="2",
               PATH=f"{Path(CLI).parent}{os.pathsep}{os.environ['PATH']}")
    r = subprocess.run(["bash", str(script)], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=3600)
    assert r.returncode == 0, r.stderr[-3000:]


def _line_search_module():
    path = REPO / "docs" / "tutorials" / "examples" / "line_search.py"
    spec = importlib.util.spec_from_file_location("tutorial_line_search", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["tutorial_line_search"] = module
    spec.loader.exec_module(module)
    return module


def test_the_add_a_method_example_is_a_working_method(trained_home, monkeypatch) -> None:
    from engine import artifacts
    from engine.papers.recourse_benchmark import rejected_population
    from engine.preferences import sample_profiles
    from engine.recourse import METHODS, get_method
    from engine.recourse.base import RecourseContext
    from engine.scenarios import get_scenario

    _line_search_module()
    monkeypatch.setitem(METHODS, "line-search", "tutorial_line_search:LineSearch")
    loan = get_scenario("loan")
    ctx = RecourseContext(loan, artifacts.load_decision_model("loan"))
    x = rejected_population(loan, ctx.classifier, 30).double()
    profiles = sample_profiles(loan.feature_names, loan.actionable, len(x),
                               distribution="uniform", n_actionable=None,
                               elicitation="ranking", seed=3)
    batch = get_method("line-search", ctx, steps=20).recourse(x, profiles)
    acted = batch.action_mask.sum(dim=1)
    assert bool((acted[batch.found] == 1).all())  # one feature per plan, as the method says
    assert bool((batch.valid == batch.found).all())  # every plan it returns is approved
    assert float(batch.valid.double().mean()) >= 0.5
    assert not (batch.action_mask & ~profiles.hard_mask.bool()).any()
    # Its choice is the cheapest valid one-feature shift: a finer grid (a superset of the
    # step sizes) finds everyone the coarse one does, never at a higher weighted cost.
    w = profiles.weights(ctx.cost_profile).double()
    z20, found20 = get_method("line-search", ctx, steps=20).shifts(x, profiles)
    z40, found40 = get_method("line-search", ctx, steps=40).shifts(x, profiles)
    assert bool((found20 <= found40).all()) and bool(found20.any())
    cost20, cost40 = (w * z20.abs()).sum(dim=1), (w * z40.abs()).sum(dim=1)
    assert bool((cost40[found20] <= cost20[found20] + 1e-12).all())
    assert bool((cost40[found20] < cost20[found20]).any())  # the finer grid does help some
