"""tominaga-replication follows the reference study's procedure: screening before consent,
the age as a number, the loans as "select all", the income as a bracket that the profile
takes (its midpoint) and the plans in a second session after a delay (an injected clock)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from data.store import Store
from protocols.definition.schema import ProtocolError, load_protocol, parse_protocol
from protocols.running import pages as pg
from protocols.running.context import now
from protocols.running.session import PageMismatchError, Study

PROTOCOL = "tominaga-replication"
SCREENED = {"age": 34, "gender": "Female", "occupation": "Government worker",
            "income": "4M - 5M", "car": "I plan to purchase within a year.",
            "loans": ["I do not have any loans"]}


class Clock:
    """A clock the test moves on by hand (answers keep their real time)."""

    def __init__(self) -> None:
        self.t = now()

    def __call__(self) -> datetime:
        return self.t


def _profile(page: pg.Page) -> dict:
    return {"values": {f.feature: f.options[0] for f in page.payload.fields}}


def test_the_papers_order_items_and_bracket_income(tmp_path) -> None:
    protocol = load_protocol(PROTOCOL)
    assert protocol.page_slots()[:2] == ["screening", "consent"]
    clock = Clock()
    with Store(tmp_path / "s.duckdb") as store:
        study = Study(protocol, store, clock=clock)
        s = study.start()
        page = s.current_page()
        assert page.id == "screening"
        kinds = {q.id: q.kind for q in page.payload.questions}
        assert kinds["age"] == "number" and kinds["loans"] == "multiple"
        with pytest.raises(pg.AnswerError) as bad:  # a bracket outside the list
            s.submit("screening", {"answers": {**SCREENED, "income": "4.5M"}})
        assert "'4.5M' is not an option" in str(bad.value)
        with pytest.raises(pg.AnswerError, match="outside 15..100 years old"):
            s.submit("screening", {"answers": {**SCREENED, "age": 7}})
        with pytest.raises(pg.AnswerError, match="choose at least one option"):
            s.submit("screening", {"answers": {**SCREENED, "loans": []}})
        assert store.query("SELECT count(*) AS n FROM responses")[0]["n"] == 0  # nothing half
        page = s.submit("screening", {"answers": SCREENED})
        assert page.id == "consent"
        page = s.submit("consent", {"agree": True})
        page = s.submit(page.id, {})  # the scenario
        assert page.id == "profile" and "income" not in {f.feature for f in page.payload.fields}
        page = s.submit("profile", _profile(page))
        answered = study.participant(s.participant_id).updated_at
        opens = answered + timedelta(days=14)
        assert page.kind == "pause"
        # shown rounded up, never down: coming back at the time shown finds the next part
        shown = datetime.fromisoformat(page.payload.opens_at.removesuffix("Z"))  # naive UTC
        assert opens <= shown < opens + timedelta(seconds=1)
        minute = opens.replace(second=0, microsecond=0)
        minute += timedelta(minutes=1) if minute < opens else timedelta(0)
        assert minute.strftime("%Y-%m-%d %H:%M UTC") in page.payload.text
        with pytest.raises(PageMismatchError, match="current page is 'pause'"):
            s.submit("decision", {})  # too early: the second session is not open
        clock.t = opens - timedelta(seconds=1)
        assert s.current_page().kind == "pause"
        clock.t = opens
        resumed = study.resume(s.token)
        assert resumed.current_page().id == "decision"
        x = json.loads(store.query("SELECT x_json FROM profiles")[0]["x_json"])
        income = study.scenario.index("income")
        names = study.scenario.feature_names
        # the bracket's midpoint; the loan one third of it (model units are the scenario's)
        shown = json.loads(store.query("SELECT display_json FROM profiles")[0]["display_json"])
        assert shown["income"].startswith("4.5") and shown["loan_amount"].startswith("1.5")
        assert x[names[income]] > 0
        answer = json.loads(store.query(
            "SELECT answer_json FROM responses WHERE page_id = 'screening'")[0]["answer_json"])
        assert answer["answers"]["loans"] == ["I do not have any loans"]
        assert answer["answers"]["age"] == 34


def test_any_loan_screens_out_before_consent(tmp_path) -> None:
    with Store(tmp_path / "s.duckdb") as store:
        s = Study(load_protocol(PROTOCOL), store).start()
        end = s.submit("screening", {"answers": {
            **SCREENED, "loans": ["Card loans", "I do not have any loans"]}})
        assert end.kind == "end" and end.payload.reason == "screened_out"
        row = store.query("SELECT arm, consent_seq FROM participants")[0]
        assert row["arm"] is None and row["consent_seq"] is None  # never enrolled


@pytest.mark.parametrize(("edit", "where", "message"), [
    ("from_screening: {income: income}", "profile.from_screening.income",
     "needs a screening question with brackets, got 'gender'"),
    ("brackets: [[0, 2], [2, 3]", "screening[3].brackets",
     "one bracket per option: 10 options, 3 brackets"),
    ("kind: multiple", "screening[5].kind", "min, max and unit belong to a number question"),
])
def test_broken_procedure_settings_are_named(edit: str, where: str, message: str) -> None:
    from protocols.definition.schema import resolve

    text = resolve(PROTOCOL).read_text(encoding="utf-8")
    replacement = {
        "from_screening: {income: income}": "from_screening: {income: gender}",
        "brackets: [[0, 2], [2, 3]": "brackets: [[0, 2], [2, 3], null] #",
        "kind: multiple": "kind: multiple\n    unit: loans",
    }[edit]
    assert edit in text
    with pytest.raises(ProtocolError) as e:
        parse_protocol(text.replace(edit, replacement, 1))
    assert any(path.startswith(where) and message in msg for path, msg in e.value.problems), \
        e.value.problems
