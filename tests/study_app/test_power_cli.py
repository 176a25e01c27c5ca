"""`recourse-study power` end to end on a local Ray of 2 workers (tiny studies, short PyMC
chains): a run killed with SIGKILL mid-way resumes without refitting a finished study; the
outputs; no Ray process outlives a command; and every bad input is one line and exit 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from protocols.definition.schema import load_protocol
from study_app.cli import app
from study_app.power import null_protocol, protocol_effects
from tests.cli_process import CLI

TINY = ["--backend", "pymc", "--draws", "30", "--tune", "30", "--chains", "1",
        "--decision-model", "bayes", "--workers", "2"]


def _ray_processes() -> set[int]:
    """Ray's own processes (raylet, GCS, workers) on this machine."""
    out = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    return {int(line.split()[0]) for line in out.splitlines()
            if any(k in line for k in ("raylet", "gcs_server", "default_worker.py"))}


def _power(out: Path, *extra: str, **kw) -> subprocess.Popen:
    args = [CLI, "power", "--protocol", "tominaga-replication", "--participants", "6",
            "--sims", "4", *TINY, "--out", str(out), "--json", *extra]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "100"}, **kw)


@pytest.mark.slow  # a real power run killed and resumed (make test-slow)
def test_killed_run_resumes_without_refitting(tmp_path):
    before = _ray_processes()
    out = tmp_path / "power"
    results = out / "results.jsonl"
    first = _power(out)
    deadline = time.time() + 300
    while time.time() < deadline and first.poll() is None:
        if results.exists() and results.read_text().count("\n") >= 1:
            break
        time.sleep(0.2)
    assert first.poll() is None, f"finished before it could be killed: {first.stderr.read()}"
    first.send_signal(signal.SIGKILL)
    first.wait()
    done_before = [json.loads(line) for line in results.read_text().splitlines()
                   if line.endswith("}")]
    assert 1 <= len(done_before) < 4

    second = _power(out)
    stdout, stderr = second.communicate(timeout=600)
    assert second.returncode == 0, stderr
    doc = json.loads(stdout)
    assert doc["fits"]["reused"] == len(done_before)
    assert doc["fits"]["fitted_now"] == 4 - len(done_before)
    assert f"reused {len(done_before)} finished simulated studies" in stderr
    lines = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    keys = [r["key"] for r in lines if "key" in r]
    assert sorted(keys) == sorted(set(keys)) and len(keys) == 4  # nothing fitted twice
    for old in done_before:  # the finished studies' records are untouched
        assert next(r for r in lines if r["key"] == old["key"]) == old

    row = doc["rows"][0]
    assert row["participants"] == 6 and row["power"]["sims"] == 4
    assert 0.0 <= row["power"]["lo"] <= row["power"]["rate"] <= row["power"]["hi"] <= 1.0
    assert doc["ray"]["cpus"] == 2 and doc["truth"] == {"drop": 3.0, "scale": 0.5}  # the protocol's
    assert json.loads((out / "power.json").read_text()) == doc
    assert (out / "power.png").stat().st_size > 1000
    assert "data:image/png;base64," in (out / "power.html").read_text()

    third = _power(out)  # everything finished: nothing to run, Ray not even started
    stdout, _ = third.communicate(timeout=300)
    assert json.loads(stdout)["fits"]["reused"] == 4
    time.sleep(1.0)
    assert not (_ray_processes() - before), "Ray processes outlived the command"


@pytest.mark.parametrize(("args", "message"), [
    (["--effect", "action.cost"], "unknown effect 'action.cost'"),
    (["--sims", "0"], "--sims must be at least 1"),
    (["--participants", "1"], "--participants 1 is smaller than 2"),
    (["--participants", "6,x"], "--participants must be comma-separated numbers"),
    (["--address", "127.0.0.1:9"], "cannot reach a Ray cluster at 127.0.0.1:9"),
    (["--effect", "action.distance", "--range", "0.4,0.1"], "two increasing numbers"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    r = CliRunner().invoke(app, ["power", "--protocol", "tominaga-replication",
                                 "--participants", "6", "--sims", "2", *TINY,
                                 "--out", str(tmp_path / "p"), *args])
    assert r.exit_code == 2, r.output
    assert r.stdout == "" and "Traceback" not in r.output
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: "), r.stderr
    assert message in r.stderr


def test_more_arms_than_participants_is_refused(tmp_path):
    r = CliRunner().invoke(app, ["power", "--protocol", "icarma-personalization",
                                 "--participants", "2,60", "--sims", "2", *TINY,
                                 "--out", str(tmp_path / "p")])
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr == (
        "error: --participants 2 is smaller than 3: protocol 'icarma-personalization' has 3 "
        "arm(s) and each needs participants (and the model at least 2)\n")
    assert not (tmp_path / "p").exists()  # nothing written for a refused run


def test_null_protocol_zeroes_only_the_effect():
    proto = load_protocol("icarma-personalization")
    effects = protocol_effects(proto)
    assert "action.arm.icarma-carma" in effects and "acceptance.satisfaction" in effects
    off = null_protocol(proto, effects["action.distance"]).simulation.behaviour().ratings
    on = proto.simulation.behaviour().ratings
    assert on.action.curve.drop > 0 and off.action.curve.drop == 0.0
    assert off.action.curve.scale == on.action.curve.scale and off.acceptance == on.acceptance
    off = null_protocol(proto, effects["acceptance.violation"]).simulation.behaviour().ratings
    assert off.acceptance.violation == 0.0 and off.action.violation == on.action.violation
    from analysis.power import PowerInputError

    with pytest.raises(PowerInputError, match="no term for action.arm.icarma-carma"):
        null_protocol(proto, effects["action.arm.icarma-carma"])
    # a curve stated in mean ratings (at_far) is flattened too
    tominaga = load_protocol("tominaga-replication")
    on = tominaga.simulation.behaviour().ratings.action
    off = null_protocol(tominaga, protocol_effects(tominaga)["action.distance"])
    flat = off.simulation.behaviour().ratings.action
    assert on.curve.drop > 2 and flat.curve.drop == 0.0 and flat.intercept == on.intercept
