"""What building a scenario's artifacts would train, and about how long that takes, before
anything is trained (the commands state it first).

``planned_fingerprints`` chains the fingerprints as engine.artifacts does (the scenario's
data, each artifact's configuration and the fingerprints of the artifacts it is trained
with). ``training_plan`` lists the artifacts that neither the home nor the shipped artifacts
(engine.artifact_shipped) hold with that fingerprint, each with an estimate of its training
seconds: the time the shipped copy took when it was built, else the time the home's stale
copy took, else None. ``format_duration`` writes such an estimate as people read it.
"""

from __future__ import annotations

from engine.artifact_builders import scenario_artifacts, scenario_configs
from engine.artifact_shipped import shipped_metadata
from engine.artifact_store import read_metadata
from engine.artifacts import ARTIFACTS, DEPENDS, artifact_fingerprint, data_fingerprint
from engine.scenarios import get_scenario


def planned_fingerprints(scenario_name: str, quick: bool = False,
                         only: tuple[str, ...] | None = None) -> dict[str, str]:
    """The fingerprint each artifact (``only``: these and what they depend on) is built to."""
    scenario = get_scenario(scenario_name)
    names = scenario_artifacts(scenario, ARTIFACTS)
    wanted = set(names if only is None else only)
    for name in list(wanted):
        wanted |= set(DEPENDS[name])
    cfgs = scenario_configs(scenario, quick)
    data_fp = data_fingerprint(scenario) if names else ""
    fps: dict[str, str] = {}
    for name in names:
        if name in wanted:
            deps = {d: fps[d] for d in DEPENDS[name]}
            fps[name] = artifact_fingerprint(data_fp, cfgs[name].to_dict(), deps)
    return fps


def training_plan(scenario_name: str, quick: bool = False,
                  only: tuple[str, ...] | None = None,
                  force: bool = False) -> dict[str, float | None]:
    """The artifacts a build would train (name -> estimated seconds, None: unknown), in
    build order; empty when the home or the shipped artifacts hold them all (``force``:
    every one requested, as ``build_artifacts(force=True)`` retrains them)."""
    name = get_scenario(scenario_name).name
    plan: dict[str, float | None] = {}
    for artifact, fp in planned_fingerprints(scenario_name, quick, only).items():
        home, shipped = read_metadata(name, artifact), shipped_metadata(name, artifact)
        if not force and any(m is not None and m.get("fingerprint") == fp for m in (home, shipped)):
            continue
        timed = next((m for m in (shipped, home) if m is not None and m.get("seconds")), None)
        plan[artifact] = None if timed is None else float(timed["seconds"])
    return plan


def format_duration(seconds: float) -> str:
    """Seconds as people read them: seconds below 90, then minutes below 90, then hours."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
