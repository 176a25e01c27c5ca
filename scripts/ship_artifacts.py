"""Build the shipped trained artifacts of a scenario: engine/shipped_artifacts/<scenario>/.

    python scripts/ship_artifacts.py [--scenario loan]

Trains every artifact of the scenario (engine.artifacts.build_artifacts, the full
configurations, as `recourse-study train` would) in an empty temporary home with shipping off
($RECOURSE_STUDY_SHIPPED=off), then replaces the scenario's shipped folder with the trained
``<name>.pt`` / ``<name>.json`` pairs and ``PROVENANCE.json``: this command, the training
code's SHA-256 (engine.artifact_provenance), the library versions, the load average, and
each artifact's fingerprint, SHA-256, size and training seconds. A new home then copies
them instead of training (engine.artifact_shipped). Progress on stderr; minutes.
Run it again after a change to the training code or configuration and commit the folder;
tests/engine/test_shipped_artifacts.py says when the fingerprints are stale.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from engine.artifact_provenance import library_versions, training_code_hash
from engine.artifact_shipped import PACKAGE_DIR, PROVENANCE, SHIPPED_ENV
from engine.artifact_store import HOME_ENV


def _reporter():
    """Progress lines on stderr: each artifact's start and every tenth of its epochs."""
    shown: dict[str, int] = {}

    def report(name: str, done: int, total: int, note: str) -> None:
        step = max(total // 10, 1)
        if name not in shown or done >= shown[name] + step or done == total:
            shown[name] = done
            print(f"{name}: {done}/{total} {note}", file=sys.stderr, flush=True)

    return report


def ship(scenario: str, out_root: Path = PACKAGE_DIR) -> dict:
    """Train ``scenario``'s artifacts in an empty home and write them with their
    provenance to ``out_root/<scenario>``; the provenance."""
    os.environ[SHIPPED_ENV] = "off"
    tmp = tempfile.mkdtemp(prefix="ship-artifacts-")  # kept when something fails below
    os.environ[HOME_ENV] = tmp
    from engine.artifacts import TRAINING_THREADS, artifact_dir, build_artifacts

    load = os.getloadavg()
    start = time.perf_counter()
    records = build_artifacts(scenario, progress=_reporter())
    seconds = time.perf_counter() - start
    source = artifact_dir(scenario)
    staging = Path(tempfile.mkdtemp(prefix=f".{scenario}.", dir=out_root))
    provenance = {
        "command": f"python scripts/ship_artifacts.py --scenario {scenario}",
        "scenario": scenario,
        "training_code_sha256": training_code_hash(),
        "libraries": library_versions(),
        "torch_threads": TRAINING_THREADS,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "seconds": round(seconds, 1),
        "load_average_at_start": [round(x, 2) for x in load],
        "artifacts": {},
    }
    for r in records:
        for suffix in (".pt", ".json"):
            shutil.copy2(source / f"{r.name}{suffix}", staging / f"{r.name}{suffix}")
        meta = json.loads((source / f"{r.name}.json").read_text())
        provenance["artifacts"][r.name] = {
            "fingerprint": meta["fingerprint"],
            "sha256": meta["sha256"],
            "bytes": (source / f"{r.name}.pt").stat().st_size,
            "seconds": round(meta["seconds"], 1),
            "metrics": r.metadata["metrics"],
        }
    (staging / PROVENANCE).write_text(json.dumps(provenance, indent=2) + "\n")
    target = out_root / scenario
    shutil.rmtree(target, ignore_errors=True)
    os.replace(staging, target)
    shutil.rmtree(tmp)
    return provenance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="loan")
    args = parser.parse_args()
    PACKAGE_DIR.mkdir(parents=True, exist_ok=True)
    provenance = ship(args.scenario)
    sizes = {n: a["bytes"] for n, a in provenance["artifacts"].items()}
    print(json.dumps({"scenario": args.scenario, "seconds": provenance["seconds"],
                      "bytes": sizes, "total_bytes": sum(sizes.values())}))


if __name__ == "__main__":
    main()
