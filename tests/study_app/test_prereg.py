"""`recourse-study prereg` on every shipped protocol (every section filled, the store's
hash), from a power.json, its bad input; the priors it states against the PyMC model;
`analyze --prereg`: no deviations on an unchanged analysis, exactly the added exclusion
otherwise, a preregistration of another protocol refused (analysis.deviations)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from analysis import FAMILIES, build_model, prepare, simulate_ratings
from analysis.deviations import prereg_deviations
from analysis.families.base import SAMPLED_AS
from analysis.power import curve
from data.store import Store
from protocols.definition.quotas import QuotaSpec, TimeLimitSpec
from protocols.definition.schema import load_protocol, shipped_protocols
from study_app.cli import app
from study_app.prereg import SECTIONS, preregistration
from study_app.simulator import simulate

TINY = ["--backend", "pymc", "--draws", "50", "--tune", "50", "--chains", "1"]


def _prereg(*args: str):
    return CliRunner().invoke(app, ["prereg", *args, "--json"])


@pytest.mark.parametrize("protocol", shipped_protocols())
def test_prereg_of_every_shipped_protocol_fills_every_section(protocol, tmp_path):
    out = tmp_path / "prereg"
    r = _prereg("--protocol", protocol, "--out", str(out))
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [s["id"] for s in doc["sections"]] == [k for k, _ in SECTIONS]
    assert all(s["text"] and all(t.strip() for t in s["text"]) for s in doc["sections"])
    spec = load_protocol(protocol)
    assert doc["protocol"]["sha256"] == spec.fingerprint()  # the hash the store keeps
    md = (out / "prereg.md").read_text()
    assert all(f"## {title}" in md for _, title in SECTIONS) and spec.fingerprint() in md
    assert json.loads((out / "prereg.json").read_text())["planned"] == doc["planned"]
    design = next(s for s in doc["sections"] if s["id"] == "design")["text"]
    labels = spec.questions.acceptance.labels
    assert any(f"1 = {labels[0]}" in t and f"7 = {labels[6]}" in t for t in design)
    assert all(any(a.id in t for t in design) for a in spec.arms)
    sampling = " ".join(next(s for s in doc["sections"] if s["id"] == "sampling")["text"])
    assert "Stopping rule: none (the protocol and this plan fix no N)" in sampling
    rules = doc["planned"]["exclusions"]
    assert rules["impossible_items"] == spec.exclusions.impossible_items
    assert rules["speeder"] is False and rules["straightliner"] is False


def test_quotas_and_time_limit_enter_the_sampling_plan():
    spec = load_protocol("tominaga-replication").model_copy(update={
        "quotas": QuotaSpec(targets={"pool": 30}),
        "time_limit": TimeLimitSpec(seconds=1800)})
    doc = preregistration(spec)
    sampling = " ".join(doc["sections"][2]["text"])
    assert doc["planned"]["participants"] == 30  # the quotas' total
    assert "Quotas: per arm pool 30 (counting complete participants)" in sampling
    assert "Stopping rule: none other than N = 30" in sampling
    assert "a session ends after 1800 s" in sampling
    assert preregistration(spec, participants=50)["planned"]["participants"] == 50


def _power_doc(protocol: str) -> dict:
    """A power.json of the shape study_app.power writes, its curve from analysis.power."""
    records = [{"participants": n, "null": False, "detected": k < hit, "estimate": 1.0,
                "max_rhat": 1.0} for n, hit in ((40, 3), (80, 9)) for k in range(10)]
    return {"protocol": protocol, "effect": "action.distance", "rule": "band",
            "distance": "l1_actions", "sims": 10,
            **curve(records, [40, 80], 0.8)}


def test_prereg_from_a_power_analysis_plans_its_smallest_n(tmp_path):
    power = tmp_path / "power.json"
    power.write_text(json.dumps(_power_doc("tominaga-replication")))
    r = _prereg("--protocol", "tominaga-replication", "--power", str(power), "--out",
                str(tmp_path / "p"), "--exclude", "speeders")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["planned"]["participants"] == 80  # 9 of 10 at N = 80; 3 of 10 at 40
    assert [h["name"] for h in doc["hypotheses"]] == ["action.distance"]
    sampling = " ".join(doc["sections"][2]["text"])
    assert "N = 40: 0.30" in sampling and "N = 80: 0.90" in sampling
    assert "Stopping rule: none other than N = 80" in sampling
    assert doc["planned"]["exclusions"]["speeder"] is True


def test_prereg_bad_input_writes_nothing(tmp_path):
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    r = _prereg("--protocol", "tominaga-replication", "--out", str(full))
    assert r.exit_code == 2 and "not an empty folder" in r.output
    assert [p.name for p in full.iterdir()] == ["keep.txt"]
    other = tmp_path / "power.json"
    other.write_text(json.dumps(_power_doc("icarma-personalization")))
    r = _prereg("--protocol", "tominaga-replication", "--power", str(other), "--out",
                str(tmp_path / "a"))
    assert r.exit_code == 2 and "icarma-personalization" in r.output
    assert not (tmp_path / "a").exists()
    (tmp_path / "bad.json").write_text("{not json")
    r = _prereg("--protocol", "tominaga-replication", "--power", str(tmp_path / "bad.json"),
                "--out", str(tmp_path / "b"))
    assert r.exit_code == 2 and "cannot read" in r.output and not (tmp_path / "b").exists()
    r = _prereg("--protocol", "no-such-protocol", "--out", str(tmp_path / "c"))
    assert r.exit_code == 2 and not (tmp_path / "c").exists()
    assert json.loads(r.stdout)["error"]


@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_stated_priors_are_the_models(family):
    data = prepare(simulate_ratings(participants=6, plans=4, seed=1, arms=("a", "b")),
                   "acceptance", "l1_profile")
    model = build_model(data, family)
    stated = {name: (dist, params) for name, dist, params, _ in FAMILIES[family].priors()}
    # the random effects a family integrates out are stated, and not sampled
    assert set(FAMILIES[family].integrated) <= set(stated)
    # a stated parameter sampled in pieces is the model's deterministic of its name (that
    # the pieces have its distribution: tests/analysis/test_reparameterization.py)
    free = {rv.name for rv in model.free_RVs}
    split = {name: pieces for name, pieces in SAMPLED_AS.items() if set(pieces) <= free}
    assert set(split) <= {v.name for v in model.deterministics}
    assert free == ((set(stated) - set(FAMILIES[family].integrated) - set(split))
                    | {p for pieces in split.values() for p in pieces})
    for rv in model.free_RVs:
        if rv.name not in stated:
            continue
        dist, params = stated[rv.name]
        assert type(rv.owner.op).__name__ == f"{dist}RV", rv.name
        values = [float(np.ravel(i.eval())[0]) for i in rv.owner.inputs[2:]]
        assert values[-len(params):] == list(params), rv.name


def test_deviations_name_each_difference():
    doc = preregistration(load_protocol("tominaga-replication"), participants=10)
    plan = doc["planned"]
    same = prereg_deviations(doc, participants=10, exclusions={"rules": plan["exclusions"]},
                             models=plan["models"], sampler=plan["sampler"],
                             protocol_hash=doc["protocol"]["sha256"])
    assert same["none"] and same["sentence"] == "no deviations" and same["items"] == []
    rules = {**plan["exclusions"], "impossible_items": False}
    found = prereg_deviations(doc, participants=12, exclusions={"rules": rules},
                              models=plan["models"][:-1],
                              sampler={**plan["sampler"], "draws": 200},
                              protocol_hash="0" * 64)
    assert [(i["kind"], i["what"], i["planned"], i["actual"]) for i in found["items"]] == [
        ("participants", "N", 10, 12), ("exclusion", "impossible_items", True, False),
        ("model", plan["models"][-1], True, False), ("sampler", "draws", 1000, 200),
        ("protocol", "sha256", doc["protocol"]["sha256"], "0" * 64)]
    assert "removed" in found["items"][1]["sentence"]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("prereg")
    db = tmp / "tom.duckdb"
    with Store(db) as store:
        simulate(load_protocol("tominaga-replication"), store, 12, decision_model="bayes")
        n = store.ratings_long(store.studies()["study_id"][0])["participant_id"].nunique()
    r = _prereg("--protocol", "tominaga-replication", "--out", str(tmp / "plan"),
                "--participants", str(n), "--no-gaussian", *TINY)
    assert r.exit_code == 0, r.output
    return db, tmp / "plan" / "prereg.json", tmp


def _analyze(db, out, *extra: str):
    return CliRunner().invoke(app, ["analyze", "--db", str(db), "--out", str(out), *TINY,
                                    "--no-gaussian", "--mgcv", "off", *extra])


def test_analyze_with_prereg_lists_no_deviation_then_exactly_the_added_exclusion(study):
    db, plan, tmp = study
    out = tmp / "analysis"
    r = _analyze(db, out, "--prereg", str(plan))
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["deviations"]["none"] and summary["deviations"]["items"] == []
    assert "No deviations from the preregistration" in (out / "report.html").read_text()
    r = _analyze(db, out, "--prereg", str(plan), "--exclude", "speeders", "--resume")
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    assert [(i["kind"], i["what"], i["planned"], i["actual"])
            for i in summary["deviations"]["items"]] == [("exclusion", "speeder", False, True)]
    html = (out / "report.html").read_text()
    assert "exclusion speeder added (planned: not applied)" in html
    edited = json.loads(plan.read_text())  # the same protocol id, edited after the plan
    edited["protocol"]["sha256"] = "0" * 64
    (tmp / "edited.json").write_text(json.dumps(edited))
    r = _analyze(db, out, "--prereg", str(tmp / "edited.json"), "--resume")
    assert r.exit_code == 0, r.output
    items = json.loads((out / "summary.json").read_text())["deviations"]["items"]
    assert [(i["kind"], i["planned"]) for i in items] == [("protocol", "0" * 64)]


def test_analyze_refuses_a_prereg_of_another_protocol(study, tmp_path):
    db, _, _ = study
    r = _prereg("--protocol", "icarma-personalization", "--out", str(tmp_path / "other"))
    assert r.exit_code == 0, r.output
    out = tmp_path / "analysis"
    r = _analyze(db, out, "--prereg", str(tmp_path / "other" / "prereg.json"))
    assert r.exit_code == 2 and "icarma-personalization" in r.output
    assert "tominaga-replication" in r.output and not out.exists()
    (tmp_path / "junk.json").write_text("[1, 2]")
    r = _analyze(db, out, "--prereg", str(tmp_path / "junk.json"))
    assert r.exit_code == 2 and "not a preregistration" in r.output and not out.exists()
