"""`recourse-study export --format psych-ds`: a Psych-DS data package of one study.

data.psych_ds writes the package; this module adds what the data layer cannot know: the
profile items' codes from the study's scenario (engine) and the primary model's distance
(the protocol's, as ``analyze`` chooses it).
"""

from __future__ import annotations

from pathlib import Path

from study_app.cli.output import emit, err, fail


def profile_items(scenario: str | None) -> list:
    """The scenario's features as data.value_labels.ProfileItem values (code -> level
    name for a coded item); [] when the study names no scenario this installation knows
    (an imported study)."""
    from data.value_labels import ProfileItem
    from engine.scenarios import get_scenario

    if not scenario:
        return []
    try:
        found = get_scenario(scenario)
    except (KeyError, ValueError, FileNotFoundError):
        return []
    return [ProfileItem(f.name, f.label, tuple(f.levels)) for f in found.features]


def export_package(db: str, out: Path, private_asked: bool, json_out: bool,
                   json_file: Path | None) -> None:
    """Write the package of ``db`` to ``out`` and report it (stderr, or --json)."""
    from data.psych_ds import PackageError, write_package
    from data.store import Store, StoreError
    from study_app.study_analysis import protocol_distance

    if private_asked:
        fail("a Psych-DS package never holds free text or linkage columns: drop "
             "--free-text, --linkage and --coding-sheet (the plain csv format has them)", 2)
    if out.exists():
        fail(f"{out} exists: give a new folder for the package (nothing was written)", 2)
    try:
        with Store(db, read_only=True) as store:
            studies = store.query("SELECT scenario, protocol_json FROM studies")
            scenario = studies[0]["scenario"] if len(studies) == 1 else None
            distance = protocol_distance(studies[0] if len(studies) == 1 else {})
            manifest = write_package(store, out, profile_items(scenario), distance)
    except (StoreError, PackageError) as e:
        fail(e, 2)
    emit(manifest, json_out=json_out, json_file=json_file, human=lambda: err.print(
        f"Psych-DS package of {manifest['study_id']}: {len(manifest['files'])} files, "
        f"{manifest['variables']} variables -> {out}", highlight=False))
