"""Protocol files: the shipped ones validate; broken ones fail listing every problem with its
path and line."""

from __future__ import annotations

import textwrap

import pytest

from protocols.definition.schema import (
    ProtocolError,
    load_protocol,
    parse_protocol,
    shipped_protocols,
)

GOOD = """\
id: test-study
title: A test
scenario: loan
elicitation: {scheme: ranking}
arms:
  - {id: oracle, method: oracle, options: {bins: 5}}
plans: {per_participant: 3, design: stratified}
"""


def test_shipped_protocols_validate() -> None:
    ids = shipped_protocols()
    assert {"tominaga-replication", "icarma-personalization", "hare-interactive"} <= set(ids)
    for pid in ids:
        p = load_protocol(pid)
        assert p.id == pid


def test_good_minimal_protocol_and_defaults() -> None:
    p = parse_protocol(GOOD)
    assert p.arms[0].options == {"bins": 5}
    assert p.questions.acceptance.labels[0] == "Strongly no"
    assert p.fingerprint() == parse_protocol(GOOD).fingerprint()


def _edit(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new)


BROKEN = [
    # (text, expected path fragment, expected message fragment)
    (_edit("scenario: loan", "scenario: mortgage"), "scenario (line 3)", "unknown scenario"),
    (_edit("method: oracle", "method: magic"), "arms[0].method (line 6)",
     "unknown recourse method 'magic'"),
    (_edit("options: {bins: 5}", "options: {binz: 5}"), "arms[0].options.binz (line 6)",
     "unknown option for oracle"),
    (_edit("scheme: ranking", "scheme: stars"), "elicitation.scheme (line 4)",
     "'stars' is not allowed (allowed: none, binary, ranking, likert)"),
    (_edit("per_participant: 3", "per_participant: 0"), "plans.per_participant (line 7)",
     "greater than or equal to 1"),
    (_edit("title: A test\n", ""), "title", "required field is missing"),
    (GOOD + "colour: blue\n", "colour (line 8)", "unknown field"),
    (_edit("design: stratified", "design: best"), "plans.per_participant",
     "design best gives one plan"),
    (GOOD.replace("arms:\n  - {id: oracle, method: oracle, options: {bins: 5}}",
                  "arms:\n  - {id: a, method: oracle}\n  - {id: a, method: pool}"),
     "arms[1].id (line 7)", "duplicate arm id"),
    (GOOD + "attention_checks:\n  - {id: c, after: plan-9, question: q, options: [a, b], "
     "correct: a}\n", "attention_checks[0].after (line 9)", "no page 'plan-9'"),
    (GOOD + "attention_checks:\n  - {id: c, after: plan-1, question: q, options: [a, b], "
     "correct: z}\n", "attention_checks[0].correct", "'z' is not an option"),
    (GOOD + "screening:\n  - {id: s, question: q, options: [y, n], eligible: [maybe]}\n",
     "screening[0].eligible", "not among the options: maybe"),
    (GOOD + "simulation:\n  ratings:\n    action: {cutpoints: [1, 2, 3, 3, 4, 5]}\n",
     "simulation.ratings.action.cutpoints (line 10)", "strictly increasing"),
    (GOOD + "simulation:\n  constraints: {n_actionable_probs: [1, 1]}\n",
     "simulation.constraints.n_actionable_probs", "one probability per possible count"),
    (_edit("method: oracle, options: {bins: 5}", "method: hare"), "arms[0].base",
     "needs a base method"),
    (_edit("id: test-study", "id: Test Study!"), "id (line 1)", "should match pattern"),
    ("id: [unclosed", "line 1", "not valid YAML"),
    ("- just\n- a list\n", "(file)", "a protocol is a YAML mapping"),
]


@pytest.mark.parametrize(("text", "where", "message"), BROKEN)
def test_broken_protocol_fails_with_path_and_message(text: str, where: str, message: str) -> None:
    with pytest.raises(ProtocolError) as info:
        parse_protocol(text, source="broken.yaml")
    rendered = str(info.value)
    assert any(where in path and message in msg for path, msg in info.value.problems), rendered
    assert rendered.startswith("broken.yaml:")


def test_every_structural_problem_is_listed_at_once() -> None:
    text = textwrap.dedent("""\
        id: x
        title: ""
        arms: []
        plans: {per_participant: 99, order: sideways}
    """)
    with pytest.raises(ProtocolError) as info:
        parse_protocol(text)
    paths = [p for p, _ in info.value.problems]
    assert len(paths) == 4, info.value
    assert any(p.startswith("title") for p in paths)
    assert any(p.startswith("arms") for p in paths)
    assert any(p.startswith("plans.per_participant") for p in paths)
    assert any(p.startswith("plans.order") for p in paths)


def test_unknown_protocol_id_or_missing_file() -> None:
    with pytest.raises(ProtocolError, match="not a file and not a shipped protocol"):
        load_protocol("no-such-protocol")
    with pytest.raises(ProtocolError, match="no such file"):
        load_protocol("/nonexistent/dir/p.yaml")


@pytest.mark.parametrize(("text", "where", "message"),
                         [b for b in BROKEN if b[1] not in ("line 1", "(file)")])
def test_a_protocol_built_in_python_is_checked_like_its_file(
    text: str, where: str, message: str
) -> None:
    """Every check is a validator: Protocol(**data) raises the problems parse_protocol lists
    (the same locations and messages, without the YAML line numbers)."""
    import yaml
    from pydantic import ValidationError

    from protocols.definition.schema import Protocol, problems

    with pytest.raises(ProtocolError) as from_file:
        parse_protocol(text)
    with pytest.raises(ValidationError) as built:
        Protocol(**yaml.safe_load(text))
    in_python = [(_path(loc), msg) for loc, msg in problems(built.value)]
    assert [(p.split(" (line")[0], m) for p, m in from_file.value.problems] == in_python
    assert any(where.split(" (line")[0] == p and message in m for p, m in in_python)


def _path(loc: tuple) -> str:
    from protocols.definition.problems import dotted

    return dotted(loc)


def test_several_problems_of_one_block_are_all_reported() -> None:
    text = GOOD.replace("method: oracle, options: {bins: 5}",
                        "method: oracle, options: {binz: 5, colour: 1}, base: pool")
    with pytest.raises(ProtocolError) as info:
        parse_protocol(text)
    paths = [p.split(" (line")[0] for p, _ in info.value.problems]
    assert paths == ["arms[0].options.binz", "arms[0].options.colour", "arms[0].base"]


def test_a_hare_arms_reading_of_t_reaches_its_method() -> None:
    """``iterations_reading`` is one of a hare arm's options (docs/hare.md): the protocol takes
    it and the study's HARE runs the paper's released code's rounds (B = 30, T = 10: three
    rounds of ten new candidates); a misspelt option is refused with its path."""
    from pathlib import Path

    from protocols import study_resources

    text = (Path(__file__).parents[2] / "protocols" / "hare-interactive.yaml").read_text()
    old = "options: {budget: 6, iterations: 2, keep_incumbent: false}"
    assert old in text
    code = parse_protocol(text.replace(
        old, "options: {budget: 30, iterations: 10, iterations_reading: code}"))
    hare = study_resources(code, decision_model="bayes").method(code.arms[0])
    cfg = hare.config  # type: ignore[attr-defined]
    assert (cfg.iterations_reading, cfg.rounds, cfg.new_candidates) == ("code", 3, 10)
    with pytest.raises(ProtocolError) as info:
        parse_protocol(text.replace(old, "options: {iteration_reading: code}"))
    assert any(p.startswith("arms[0].options.iteration_reading") and "unknown option for hare"
               in m for p, m in info.value.problems)


def test_a_hare_arms_option_values_are_checked_when_the_protocol_is_read() -> None:
    """A value HARE refuses (HareConfig's own checks) is a problem of the protocol, at the
    arm's options, not an error when the study starts; sound values pass."""
    from pathlib import Path

    text = (Path(__file__).parents[2] / "protocols" / "hare-interactive.yaml").read_text()
    old = "options: {budget: 6, iterations: 2, keep_incumbent: false}"
    with pytest.raises(ProtocolError) as info:
        parse_protocol(text.replace(old, "options: {budget: 6, iterations_reading: cod, "
                                         "lr: -1}"))
    problems = [(p.split(" (line")[0], m) for p, m in info.value.problems]
    assert [p for p, _ in problems] == ["arms[0].options", "arms[0].options"]
    assert "hare: iterations_reading must be 'text' or 'code' (got 'cod')" in [m for _, m in
                                                                               problems]
    assert any(m.startswith("hare: lr, gamma") for _, m in problems)
    with pytest.raises(ProtocolError, match="budget must be at least 4 for 2 iteration"):
        parse_protocol(text.replace(old, "options: {budget: 3, iterations: 2}"))
    with pytest.raises(ProtocolError, match="wrong type"):
        parse_protocol(text.replace(old, "options: {budget: many}"))
    assert parse_protocol(text.replace(old, "options: {budget: 6, iterations: 3, "
                                            "keep_incumbent: false}")).arms[0].options


def test_an_icarma_arms_unknown_training_is_refused_when_the_protocol_is_read() -> None:
    """iCARMA's ``training`` names a trained model (paper, fast); another name is a problem
    at the arm's options, in the constructor's words."""
    from pathlib import Path

    text = (Path(__file__).parents[2] / "protocols" / "icarma-personalization.yaml").read_text()
    old = "options: {training: fast, repair: true}"
    assert old in text
    with pytest.raises(ProtocolError) as info:
        parse_protocol(text.replace(old, "options: {training: fsat, repair: true}"))
    assert [(p.split(" (line")[0], m) for p, m in info.value.problems] == [
        ("arms[0].options", "icarma: training must be one of paper, fast, got 'fsat'")]
    assert parse_protocol(text.replace(old, "options: {training: paper}")).arms[0].options
