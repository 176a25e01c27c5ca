"""`recourse-study scenarios`: the shipped scenarios (and any scenario files given), listed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from study_app.cli.apps import app, scenario_or_fail
from study_app.cli.output import emit, err, json_file_option, json_option, result_console


def describe(scenario: Any) -> dict[str, Any]:
    """One scenario's entry of the listing (the JSON shape of the command's docstring)."""
    return {
        "name": scenario.name,
        "title": scenario.title,
        "about": scenario.about,
        "world": scenario.world_kind,
        "features": [
            {"name": f.name, "label": f.label, "kind": f.kind, "role": str(f.role),
             "direction": {1: "increase", -1: "decrease", 0: "any"}[f.direction],
             "levels": list(f.levels), "unit": "" if f.levels else f.display.unit}
            for f in scenario.features
        ],
        "actionable": [scenario.feature_names[j] for j in scenario.actionable],
        "data": scenario.samples.describe(),
        "truth": scenario.truth,
        "source": str(scenario.source) if scenario.source else None,
    }


def _short(source: str | None) -> str:
    """A file relative to the working directory or the package, when it is inside one."""
    if not source:
        return ""
    path = Path(source)
    for base in (Path.cwd(), Path(__file__).resolve().parents[2]):
        if path.is_relative_to(base):
            return str(path.relative_to(base))
    return source


@app.command()
def scenarios(
    files: list[Path] = typer.Argument(
        None, help="Scenario files of your own to check and list beside the shipped ones."
    ),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """List the scenarios and check scenario files.

    List the scenarios `train`, `benchmark` and protocols accept (shipped names; any
    scenario file's path is accepted too). A file given here is validated (every problem by
    its path, exit 2) and listed; nothing is trained.

    JSON: {scenarios: [{name, title (what participants read), about (for researchers: the
    data set), world (equations | pool | data), features [{name,
    label, kind, role, direction, levels, unit}], actionable [names], data (where its samples
    come from), truth (a data world's exact SCM scenario, or null), source (the file)}],
    unavailable: [{name, reason}]} (unavailable: shipped scenarios whose fetched data set is
    absent or damaged; the reason names the command that fetches it: `make install` does).
    On a broken file: {error, source, problems [{path, message}]}.
    """
    from engine.scenarios import (
        ScenarioFileError,
        UnknownScenarioError,
        get_scenario,
        scenario_names,
    )
    from engine.scenarios.fetched import DatasetMissingError

    shipped = scenario_names()
    entries: dict[str, dict[str, Any]] = {}
    unavailable: list[dict[str, str]] = []
    for ref in shipped:
        try:
            scenario = get_scenario(ref)
        except DatasetMissingError as e:
            unavailable.append({"name": ref, "reason": str(e)})
            continue
        except (ScenarioFileError, UnknownScenarioError):  # the usual error and exit 2
            scenario = scenario_or_fail(ref, json_out)
        entry = describe(scenario)
        entries[entry["source"] or entry["name"]] = entry
    for f in files or []:
        entry = describe(scenario_or_fail(str(f), json_out))
        entries[entry["source"] or entry["name"]] = entry
    doc = {"scenarios": list(entries.values()), "unavailable": unavailable}

    def human() -> None:
        table = Table(title="Scenarios (train / benchmark / protocols take a name or a file)")
        for col in ("name", "world", "features", "actionable", "file"):
            table.add_column(col, overflow="fold")
        for e in doc["scenarios"]:
            table.add_row(e["name"], e["world"], str(len(e["features"])),
                          ", ".join(e["actionable"]), _short(e["source"]))
        result_console(json_out, min_width=120).print(table)
        for u in unavailable:
            err.print(f"{u['name']}: not available: {u['reason']}", markup=False)

    emit(doc, json_out=json_out, json_file=json_file, human=human)
