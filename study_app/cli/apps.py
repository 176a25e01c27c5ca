"""The typer applications every command module attaches to.

Kept apart from ``study_app.cli.__init__`` so command modules can import the apps without
importing each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from study_app.cli.output import fail

if TYPE_CHECKING:
    from engine.decision import Classifier
    from engine.scenarios.base import Scenario

app = typer.Typer(
    name="recourse-study",
    help="Human-centered algorithmic recourse research: train, benchmark, simulate, serve, "
    "analyze and export studies.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
benchmark_app = typer.Typer(
    help="Benchmark the methods, HARE, the analysis and fairness.",
    no_args_is_help=True,
)
app.add_typer(benchmark_app, name="benchmark")


# `benchmark hare` and `reproduce`: HARE's iterations_reading (engine.recourse.hare.config)
ITERATIONS_READING_HELP = (
    "What HARE's T means: text (the paper's text, the default: T rounds of B / T questions, "
    "the current plan and B / T - 1 new candidates, an accept question after each) | code "
    "(as the paper's released code runs its tables: rounds of T new candidates beside the "
    "current plan, B // T of them (T = 1: one round of B), no accept question).")
# ... and the simulated people's ideal plans (engine.synthetic.hare_truth)
GROUND_TRUTH_HELP = (
    "The simulated people's ideal plans: perturbation (the paper's: the boundary point "
    "nearest a random perturbation of norm 0.2 / 0.8 / 1.5 of the mutable continuous "
    "features) | rays (a variant: a boundary ray within 1.25 / 2 / 4 times the nearest "
    "boundary radius).")


def split_list(value: str, option: str) -> tuple[str, ...]:
    """A comma-separated option value as a tuple (BadParameter when it names nothing)."""
    items = tuple(v.strip() for v in value.split(",") if v.strip())
    if not items:
        raise typer.BadParameter(f"{option} needs at least one comma-separated value")
    return items


def scenario_or_fail(ref: str, json_out: bool = False) -> Scenario:
    """The scenario of a ``--scenario`` value (a shipped name or a file path); exit 2 with a
    one-line error (and, with ``--json``, ``{"error", "problems": [{path, message}]}`` on
    stdout) for an unknown name, a broken file or a fetched data set that is absent (the
    message names the command that fetches it). Nothing is trained."""
    from engine.scenarios import ScenarioFileError, UnknownScenarioError, get_scenario
    from engine.scenarios.fetched import DatasetMissingError

    try:
        return get_scenario(ref)
    except UnknownScenarioError as e:
        fail(f"--scenario: {e}", 2, json_out=json_out, details={"problems": []})
    except ScenarioFileError as e:
        fail(e, 2, json_out=json_out, details={"source": e.source, "problems": e.as_dicts()})
    except DatasetMissingError as e:
        fail(f"scenario {ref}: {e}", 2, json_out=json_out, details={"problems": []})


def benchmark_classifier(scenario: Scenario, kind: str) -> Classifier:
    """A benchmark's ``--decision-model``: ``trained`` (the cached artifact), ``bayes`` (the
    exact Bayes rule) or a tabular world's ``lr`` / ``ann``. BadParameter for another kind;
    exit 2 with the artifact's message (how to build it) when the trained model is missing."""
    from engine.artifact_builders import CLASSIFIERS
    from engine.artifacts import ArtifactMissingError, load_classifier

    if kind not in ("trained", "bayes", *CLASSIFIERS):
        raise typer.BadParameter(
            f"--decision-model must be trained, bayes, {' or '.join(CLASSIFIERS)}, got {kind!r}")
    try:
        return load_classifier(scenario, kind)
    except ArtifactMissingError as e:
        fail(e, 2)
    except ValueError as e:  # the Bayes rule of a world without an exact SCM
        fail(f"--decision-model: {e}", 2)
