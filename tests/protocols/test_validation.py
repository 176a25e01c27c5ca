"""Authoring protocols: every problem at once with suggestions, the resolved protocol with
defaults marked, warnings for suspicious choices, the Likert direction, the reference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.scenarios import scenario_names
from protocols.definition.reference import fields
from protocols.definition.reference_text import MEANING
from protocols.definition.review import review, review_text, text_findings
from protocols.definition.schema import (
    Protocol,
    ProtocolError,
    load_protocol,
    parse_protocol,
    shipped_protocols,
)
from protocols.definition.wording import scenario_findings

# Ten distinct mistakes, structural and across fields, several in one block.
TEN = """\
id: pilot-study
titel: My pilot
scenario: loan
elicitation: {scheme: likret}
arms:
  - {id: icarma, method: icrama}
  - {id: oracle, method: oracle, options: {binz: 10}}
  - {id: oracle, method: oracle, cost_profile: quadratic}
plans: {per_participant: 3, design: stratified, distance: l1_profil}
questions:
  action: {text: "Would you do it?", labels: [a, b, c]}
attention_checks:
  - {id: careful, after: plan-7, question: "Pick No", options: ["Yes", "No"], correct: "No"}
simulation:
  ratings:
    action: {drop: 1.0, scael: 0.2}
"""
EXPECTED = [  # (path, line, message fragment, suggestion or None)
    ("title", 1, "required field is missing", None),
    ("titel", 2, "unknown field 'titel'", "title"),
    ("elicitation.scheme", 4, "'likret' is not allowed", "likert"),
    ("arms[0].method", 6, "unknown recourse method 'icrama'", "icarma"),
    ("arms[1].options.binz", 7, "unknown option for oracle", "bins"),
    ("arms[2].cost_profile", 8, "(allowed: constant, concave, linear, convex)", None),
    ("arms[2].id", 8, "duplicate arm id 'oracle'", None),
    ("plans.distance", 9, "'l1_profil' is not allowed", "l1_profile"),
    ("questions.action.labels", 11, "needs 2 or 7 labels, got 3", None),
    ("attention_checks[0].after", 13, "no page 'plan-7'", "plan-3"),
    ("simulation.ratings.action.scael", 16, "unknown field 'scael'", "scale"),
]


def test_every_mistake_is_reported_at_once_with_path_line_and_suggestions() -> None:
    r = review_text(TEN, "ten.yaml")
    assert not r.valid and r.resolved is None
    got = {(f.path, f.line): f for f in r.errors}
    for path, line, fragment, suggestion in EXPECTED:
        f = got.get((path, line))
        assert f is not None, (path, [x.where() for x in r.errors])
        assert fragment in f.message, f.message
        if suggestion:
            assert suggestion in f.suggestions and f"did you mean '{suggestion}'" in f.message
    assert len(r.errors) == len(EXPECTED)
    # the cross-field checks ran although structural problems were there (no rounds)
    assert any("duplicate arm id" in f.message for f in r.errors)
    assert any("no page 'plan-7'" in f.message for f in r.errors)


def test_a_broken_block_does_not_raise_false_alarms() -> None:
    """The lenient round keeps a broken field out of its block's own checks (a broken
    scheme must not make likert_levels 'only a likert elicitation' problem)."""
    r = review_text(TEN.replace("{scheme: likret}", "{scheme: likret, likert_levels: 5}"))
    assert not any(f.path == "elicitation.likert_levels" for f in r.errors)


def test_validate_cli_lists_all_exits_2_and_creates_nothing(tmp_path, run_cli,
                                                           monkeypatch) -> None:
    bad = tmp_path / "ten.yaml"
    bad.write_text(TEN)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RECOURSE_STUDY_HOME", str(tmp_path / "home"))
    before = set(tmp_path.rglob("*"))
    r = run_cli("validate", str(bad))
    assert r.code == 2 and r.stdout == ""
    for path, line, _, _ in EXPECTED:
        assert f"{path} (line {line})" in r.stderr
    assert f"error: {bad}: {len(EXPECTED)} problems in the protocol" in r.stderr
    assert set(tmp_path.rglob("*")) == before  # no database, no artifact, no folder


@pytest.mark.parametrize("pid", shipped_protocols())
def test_shipped_protocols_resolve_with_defaults_marked(pid: str) -> None:
    r = review(pid)
    assert r.valid and not r.errors
    res = r.resolved
    texts = {t["path"]: t for t in res["texts"]}
    assert texts["consent"]["default"] is False  # every shipped protocol writes its own
    stated = pid == "tominaga-replication"  # states the paper's wording and plan settings
    assert texts["questions.why.text"]["default"] is not stated
    assert ("questions.why.text" in {w.path for w in r.warnings}) is not stated
    for arm in res["arms"]:
        seq = res["page_sequence"].get(arm["id"], res["page_sequence"][res["arms"][0]["id"]])
        first = ["screening", "consent"] if load_protocol(pid).screening_first else ["consent"]
        assert seq[:len(first)] == first and seq[-1] == "debrief"
    assert abs(sum(a["share"] for a in res["arms"]) - 1) < 1e-3 or res["assignment"] == "within"
    assert ("plans.prune_actions" in res["defaults"]) is not stated


def test_warnings_for_suspicious_choices() -> None:
    text = """\
id: w
title: W
elicitation: {scheme: likert, likert_levels: 7,
  text: "How hard is each change? 1 = impossible ... 7 = very easy"}
arms: [{id: o, method: oracle}]
plans: {per_participant: 9, design: stratified}
"""
    r = review_text(text)
    assert r.valid
    by_path = {w.path: w.message for w in r.warnings}
    assert "9 plans per participant" in by_path["plans.per_participant"]
    assert "likert_low" in by_path["elicitation.likert_low"]
    assert "wrong way round" in by_path["elicitation.text"]
    assert "default text" in by_path["consent"]
    assert "attention_checks" in by_path and "questions.impossible" in by_path
    stated = text.replace("likert_levels: 7,", "likert_levels: 7, likert_low: hardest,")
    again = {w.path for w in review_text(stated).warnings}
    assert "elicitation.text" not in again and "elicitation.likert_low" not in again


def test_likert_hardest_first_reads_the_answers_the_right_way_round(tmp_path) -> None:
    from data.store import Store
    from protocols.running.session import Study

    base = """\
id: lk
title: Likert
decision_model: bayes
elicitation: {scheme: likert, likert_levels: 5, likert_low: LOW}
arms: [{id: o, method: oracle, options: {bins: 4, plausibility: false}}]
plans: {per_participant: 1, design: stratified}
"""
    scores = {}
    for low in ("easiest", "hardest"):
        with Store(tmp_path / f"{low}.duckdb") as store:
            study = Study(parse_protocol(base.replace("LOW", low)), store)
            s = study.start()
            page = s.current_page()
            while page.kind != "elicitation_likert":
                page = s.submit(page.id, {"agree": True} if page.kind == "consent" else {})
            assert ("1 = very hard" in page.payload.text) == (low == "hardest")
            s.submit(page.id, {"answers": {"loan_amount": 1, "loan_duration": 5,
                                           "income": None, "savings": 3}})
            p = study.participant(s.participant_id)
            names = study.scenario.feature_names
            scores[low] = dict(zip(names, p.stated.scores[0].tolist(), strict=True))
    # 1 = easiest: the loan amount is the easiest item; 1 = hardest: the loan duration is
    easy, hard = scores["easiest"], scores["hardest"]
    assert easy["loan_amount"] == hard["loan_duration"] and easy["loan_duration"] == hard["loan_amount"]
    assert easy["savings"] == hard["savings"]


def test_a_protocol_built_in_python_meets_the_new_checks() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="then: fallback needs fallback"):
        Protocol(id="x", title="x", arms=[{"id": "o", "method": "oracle"}],
                 plans={"shortfall": {"then": "fallback"}})
    with pytest.raises(ValidationError, match="at_zero and intercept set the same thing"):
        Protocol(id="x", title="x", arms=[{"id": "o", "method": "oracle"}],
                 simulation={"ratings": {"action": {"at_zero": 4, "intercept": 0.1}}})
    with pytest.raises(ProtocolError, match="unknown recourse method 'oracel'.*did you mean"):
        parse_protocol("id: x\ntitle: x\narms: [{id: o, method: oracle}]\nplans:\n"
                       "  shortfall: {then: fallback, fallback: {method: oracel}}\n")


def test_the_reference_documents_every_field(tmp_path, run_cli) -> None:
    rows = fields()
    assert {r["key"] for r in rows} == set(MEANING)  # nothing undocumented, nothing stale
    paths = {r["path"]: r for r in rows}
    assert paths["elicitation.likert_low"]["type"] == "one of `easiest`, `hardest`"
    assert paths["plans.per_participant"]["bounds"] == ">= 1, <= 20"
    assert paths["consent"]["shown"] == "consent page"
    out = tmp_path / "docs" / "protocol.md"
    r = run_cli("protocol", "docs", "--out", str(out))
    assert r.code == 0, r.stderr
    text = out.read_text()
    assert "`simulation.ratings.action.half_distance`" in text and "at_zero" in text
    assert "![Mean action rating" in text
    assert (out.parent / "protocol-rating-curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_committed_reference_is_current() -> None:
    """docs/protocol-reference.md is the generated page (regenerate it with `recourse-study
    protocol docs --out docs/protocol-reference.md`)."""
    from protocols.definition.reference import markdown

    committed = Path(__file__).resolve().parents[2] / "docs" / "protocol-reference.md"
    assert committed.read_text(encoding="utf-8") == markdown("protocol-rating-curves.png")


def test_the_worked_example_is_valid_without_warnings() -> None:
    example = Path(__file__).resolve().parents[2] / "docs" / "examples" / \
        "pilot-falling-ratings.yaml"
    r = review(example)
    assert r.valid and r.warnings == []
    action = r.protocol.simulation.behaviour().ratings.action
    import numpy as np

    assert action.typical_curve(np.array([0.0, 0.15])) == pytest.approx([4.5, 3.25], abs=1e-6)


def test_validate_flags_researcher_words_in_participant_texts() -> None:
    """A consent citing "et al." and naming an internal key is flagged at its path; the
    shipped protocols read as a participant's page should."""
    text = """\
id: w
title: W
consent: "We test the method of Smith et al. on your loan_amount. Do you agree?"
arms: [{id: o, method: oracle}]
plans: {per_participant: 2, design: stratified}
"""
    r = review_text(text)
    flagged = [w.message for w in r.warnings if w.path == "consent"]
    assert any("a citation, 'et al.'" in m for m in flagged)
    assert any("an internal key, 'loan_amount'" in m for m in flagged)
    assert not any("researchers" in m for m in flagged if "default text" in m)
    for pid in ("hare-interactive", "icarma-personalization", "tominaga-replication"):
        assert not [w for w in review(pid).warnings if "meant for researchers" in w.message]


def test_validate_strict_flags_a_data_set_name_in_a_scenario_title(tmp_path, run_cli,
                                                                   monkeypatch) -> None:
    """A scenario's title is on the scenario page and the progress bar: a data set's name or
    a stand-in there is flagged (exit 1 with --strict); the same name in ``about`` (for
    researchers) and in the debrief (where a study discloses its records) is not. The
    shipped scenarios and protocols read as a participant's page should."""
    shipped = scenario_names()  # before the file's scenario is registered
    (tmp_path / "named.yaml").write_text(
        "extends: loan\nname: named\ntitle: Car loan (German Credit, standing in for "
        "GiveMeSomeCredit)\nabout: German Credit data\n", encoding="utf-8")
    protocol = tmp_path / "p.yaml"
    protocol.write_text(
        f"id: p\ntitle: P\nscenario: {tmp_path / 'named.yaml'}\narms: [{{id: o, method: "
        "oracle}]\nplans: {per_participant: 2, design: stratified}\n"
        "debrief: {text: The applicant is a record of the German Credit data.}\n",
        encoding="utf-8")
    monkeypatch.setenv("RECOURSE_STUDY_HOME", str(tmp_path / "home"))
    r = run_cli("validate", str(protocol), "--strict", "--json")
    assert r.code == 1
    flagged = {(w["path"], w["message"].split(",")[0]) for w in json.loads(r.stdout)["warnings"]
               if "meant for researchers" in w["message"]}
    assert flagged == {("scenario named: title", "participants read a data set's name"),
                       ("scenario named: title", "participants read a stand-in for another "
                        "data set")}
    for name in shipped:
        assert scenario_findings(name) == [], name
    for pid in shipped_protocols():
        assert text_findings(load_protocol(pid)) == [], pid
