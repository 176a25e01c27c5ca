"""Fingerprints of a fixed set of outputs, to show that a reshaping of the code changes none.

Run it on the tree before a change and after it, and compare the two lists (``--compare``
reads the earlier list from a file and counts the differences):

    python scripts/output_fingerprint.py --json-file before.json        # untouched tree
    python scripts/output_fingerprint.py --compare before.json          # after: 0 differences

The outputs (every one a SHA-256 of its canonical text):

- ``simulate/<protocol>``: the ``simulate --json`` result of every shipped protocol (a fixed
  seed, a few synthetic participants; the run time left out);
- ``export/<protocol>/<file>``: every file ``export --format csv`` writes of that study;
- ``page/<protocol>/<kind>``: the payload of the first page of every kind one synthetic
  participant of the protocol meets (``study_app.preview.collect_pages``, what ``preview``
  photographs), and for a plan page the HTML table the participant app draws of it;
- ``resumed/<protocol>/plan-<k>``: the plan pages of the simulated participants built again
  by a fresh ``Study`` on the stored study (the resume path: plans read from the store);
- ``cli/validate/<protocol>``, ``cli/scenarios``: the JSON of those commands.

What differs between two runs of the same code is taken out before hashing: timestamps
(columns ending in ``_at`` and date-times inside text), the seconds a method took
(``runtime``), the random part of participant ids (``<study>-00003-1a2b3c4d`` becomes
``<study>-00003``) and the completion codes made from them, and the checkout's path. Needs the trained quick
artifacts of the shipped scenarios in ``RECOURSE_STUDY_HOME`` (``recourse-study train
--quick``; the test suite's home has them). A few minutes on a loaded laptop.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PROTOCOLS = ("tominaga-replication", "icarma-personalization", "hare-interactive",
             "hare-credit")
# Participants per protocol: the interactive ones (HARE) take seconds per person.
PARTICIPANTS = {"tominaga-replication": 3, "icarma-personalization": 3,
                "hare-interactive": 1, "hare-credit": 1}
SEED = 7
_PID = re.compile(r"-(\d{5})-[0-9a-f]{8}\b")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?")
_RUNTIME = re.compile(r'(runtime[\\"]*:\s*)[-+0-9.eE]+')  # seconds a method took (HARE's base)


def canonical(text: str) -> str:
    """``text`` without what differs between runs (module docstring)."""
    text = _RUNTIME.sub(r"\1<seconds>", text.replace(str(REPO), "<repo>"))
    return _TIME.sub("<time>", _PID.sub(r"-\1", text))


def digest(text: str) -> str:
    return hashlib.sha256(canonical(text).encode()).hexdigest()[:16]


def _csv_digest(path: Path) -> str:
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    if not rows:
        return digest("")
    keep = [i for i, name in enumerate(rows[0]) if not name.endswith("_at")]
    return digest("\n".join(json.dumps([r[i] for i in keep]) for r in rows))


def _cli(*args: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", "from study_app.cli import main; main()",
                          *args, "--json"],
                         capture_output=True, text=True, cwd=REPO)
    if out.returncode not in (0, 2):  # validate exits 2 on a problem: that is an output too
        raise RuntimeError(f"{' '.join(args)} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout)


def _pages(protocol_id: str, db: Path) -> dict[str, str]:
    """The preview's pages and the resumed plan pages of one protocol (module docstring)."""
    from data.store import Store
    from protocols import load_protocol
    from protocols.running import pages as pg
    from protocols.running.session import Study
    from study_app.preview import collect_pages
    from study_app.web.plan_table import plan_table_html

    protocol = load_protocol(protocol_id)
    out = {}
    for page in collect_pages(protocol):
        text = page.model_dump_json()
        if page.kind == "debrief":  # a participant's code: an HMAC of their random id
            text = text.replace(page.payload.completion_code, "<code>")
        out[f"page/{protocol_id}/{page.kind}"] = digest(text)
        if page.kind == "plan":
            out[f"page/{protocol_id}/plan-table"] = digest(plan_table_html(
                page.payload.rows, current_label=page.payload.current_label,
                suggested_label=page.payload.suggested_label))
    with Store(db) as store:
        study = Study(protocol, store)
        kind = pg.PAGE_KINDS["plan"]
        pids = [r["participant_id"] for r in store.query(
            "SELECT participant_id FROM participants WHERE study_id = ? ORDER BY seq",
            [protocol.id])]
        for n, pid in enumerate(pids):
            p = study.participant(pid)
            for k in range(1, len(p.plans) + 1):
                title, payload = kind.build(study.context, p, f"plan-{k}")
                out[f"resumed/{protocol_id}/{n}/plan-{k}"] = digest(
                    title + payload.model_dump_json())
    return out


def fingerprints(workdir: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for protocol_id in PROTOCOLS:
        print(f"{protocol_id} ...", file=sys.stderr, flush=True)
        db = workdir / f"{protocol_id}.duckdb"
        result = _cli("simulate", "--protocol", protocol_id, "--participants",
                      str(PARTICIPANTS[protocol_id]), "--seed", str(SEED), "--db", str(db))
        result.pop("seconds", None)
        out[f"simulate/{protocol_id}"] = digest(json.dumps(result, sort_keys=True))
        folder = workdir / f"export-{protocol_id}"
        _cli("export", "--db", str(db), "--out", str(folder), "--format", "csv")
        for path in sorted(folder.iterdir()):
            out[f"export/{protocol_id}/{path.name}"] = (
                _csv_digest(path) if path.suffix == ".csv" else digest(path.read_text()))
        out.update(_pages(protocol_id, db))
        out[f"cli/validate/{protocol_id}"] = digest(json.dumps(_cli("validate", protocol_id),
                                                               sort_keys=True))
    out["cli/scenarios"] = digest(json.dumps(_cli("scenarios"), sort_keys=True))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json-file", type=Path, help="write the fingerprints here")
    parser.add_argument("--compare", type=Path,
                        help="an earlier --json-file: print the differences, exit 1 if any")
    args = parser.parse_args()
    if "RECOURSE_STUDY_HOME" not in os.environ:
        print("set RECOURSE_STUDY_HOME to a home with the trained quick artifacts",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="recourse-fingerprint-") as tmp:
        now = fingerprints(Path(tmp))
    for name, h in now.items():
        print(f"{h}  {name}")
    if args.json_file:
        args.json_file.write_text(json.dumps(now, indent=1) + "\n")
    if args.compare:
        before = json.loads(args.compare.read_text())
        names = sorted(set(before) | set(now))
        differ = [n for n in names if before.get(n) != now.get(n)]
        for n in differ:
            print(f"DIFFERS  {n}: {before.get(n)} -> {now.get(n)}")
        print(f"{len(names)} outputs compared, {len(differ)} differences")
        return 1 if differ else 0
    print(f"{len(now)} outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
