"""Progress on stderr while `train` and `serve` build a scenario's artifacts: what will be
trained and about how long it takes first (engine.artifact_plan), then one bar per artifact
with the time elapsed and left on a terminal, or, where stderr is not a terminal (a log file,
CI), a line at each tenth of an artifact's epochs with the same two times."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

# report(artifact, done, total, note), as engine.artifacts calls it
Report = Callable[[str, int, int, str], None]


def announce_training(console: Console, scenario: str, quick: bool,
                      only: tuple[str, ...] | None = None,
                      force: bool = False) -> dict[str, float | None]:
    """Say which artifacts will be trained and the estimate (their training time when the
    shipped or the home's older copy was built); nothing when none will be. The plan."""
    from engine.artifact_plan import format_duration, training_plan

    plan = training_plan(scenario, quick, only, force=force)
    if plan:
        known = [s for s in plan.values() if s is not None]
        estimate = (f"about {format_duration(sum(known))} on one core" if known
                    else "no earlier training time to estimate from")
        if len(known) < len(plan) and known:
            estimate += " for those timed before"
        console.print(f"training {', '.join(plan)} of {scenario!r} before anything else "
                      f"starts ({estimate})", highlight=False, soft_wrap=True)
    return plan


def _clock(seconds: float) -> str:
    return time.strftime("%M:%S" if seconds < 3600 else "%H:%M:%S", time.gmtime(seconds))


def task_reporter(progress: Progress) -> Report:
    """A training progress callback (name, done, total, note) drawing one bar per model in
    ``progress``."""
    tasks: dict[str, TaskID] = {}

    def report(name: str, done: int, total: int, note: str) -> None:
        if name not in tasks:
            tasks[name] = progress.add_task(f"training {name}", total=total, note="")
        progress.update(tasks[name], completed=done, total=total, note=note)

    return report


@contextmanager
def training_progress(console: Console, transient: bool = False) -> Iterator[Report]:
    """A ``report`` for engine.artifacts' ``progress`` (module docstring)."""
    if console.is_terminal:
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                      TextColumn("{task.fields[note]}"), TimeElapsedColumn(),
                      TimeRemainingColumn(), console=console, transient=transient) as progress:
            yield task_reporter(progress)
        return
    started: dict[str, tuple[float, int]] = {}  # artifact -> (start, last tenth shown)

    def report_lines(name: str, done: int, total: int, note: str) -> None:
        now = time.monotonic()
        start, shown = started.setdefault(name, (now, -1))
        tenth = 10 * done // max(total, 1)
        if tenth == shown:
            return
        started[name] = (start, tenth)
        elapsed = now - start
        left = elapsed / done * (total - done) if done else None
        console.print(f"training {name}: {done}/{total} {note} (elapsed {_clock(elapsed)}"
                      + ("" if left is None else f", left about {_clock(left)}") + ")",
                      highlight=False, soft_wrap=True)

    yield report_lines
