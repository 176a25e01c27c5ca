"""The HARE pages of a session, against a minimal fake interactive method (the session
contract of engine.recourse.hare.session; this checks the study's side: pages, storage in
comparisons, resume mid-interaction, final + base plans)."""

from __future__ import annotations

import json

import pytest

from data.store import Store
from engine.recourse import RecourseContext, get_method
from protocols.definition.schema import parse_protocol
from protocols.running.pages import AnswerError
from protocols.running.resources import StudyResources
from protocols.running.session import Study

HARE = """\
id: hare-test
title: HARE test
scenario: loan
seed: 3
decision_model: bayes
profile: {source: persona}
elicitation: {scheme: binary}
arms:
  - {id: hare, method: hare, base: pool, base_options: {donors: 8}, options: {budget: 3}}
plans: {per_participant: 1, design: best}
"""


class FakeQuery:
    def __init__(self, kind, options=(), final=None):
        self.kind, self.options, self.final = kind, list(options), final


class FakeHareSession:
    """Tournament over a fixed candidate list, then one accept question (the contract's API)."""

    def __init__(self, cands, budget, state=None):
        self.cands = cands
        self.budget = budget
        self.s = state or {"winner": 0, "next": 1, "asked": 0, "accepted": None}

    @classmethod
    def start(cls, hare, x, profile, *, seed):
        pool = hare.base
        c = pool.candidates(x, profile)
        order = sorted(range(len(c)), key=lambda i: float(c.cost[i]))[:4]
        names = pool.context.scenario.feature_names
        return cls([c.record(i, names) for i in order], hare.budget)

    @property
    def done(self):
        return self.s["accepted"] is not None or len(self.cands) < 2

    def next_query(self):
        if self.done:
            return FakeQuery("done", final=self.final())
        if self.s["next"] < len(self.cands) and self.s["asked"] < self.budget - 1:
            return FakeQuery("compare", [self.cands[self.s["winner"]],
                                         self.cands[self.s["next"]]])
        return FakeQuery("accept", [self.cands[self.s["winner"]]])

    def answer(self, choice):
        if self.next_query().kind != "compare":
            raise ValueError("not a compare step")
        if choice == 1:
            self.s["winner"] = self.s["next"]
        self.s["next"] += 1
        self.s["asked"] += 1

    def accept(self, yes):
        if self.next_query().kind != "accept":
            raise ValueError("not an accept step")
        self.s["accepted"] = bool(yes) or True  # the fake ends after one accept question

    def final(self):
        if not self.cands:  # nothing valid to offer: the empty action
            return {"actions": {}}
        return self.cands[self.s["winner"]]

    def to_json(self):
        return json.dumps({"cands": self.cands, "budget": self.budget, "s": self.s})

    @classmethod
    def from_json(cls, text, hare):
        d = json.loads(text)
        return cls(d["cands"], d["budget"], d["s"])


class FakeHare:
    """An interactive method: its sessions are FakeHareSessions (the capability's API)."""

    def __init__(self, base, budget):
        self.base, self.budget, self.context = base, budget, base.context
        self.query_budget = budget

    def start_session(self, x, profile, *, seed):
        return FakeHareSession.start(self, x, profile, seed=seed)

    def resume_session(self, text):
        return FakeHareSession.from_json(text, self)


def fake_resources() -> StudyResources:
    from engine.decision import BayesDecision
    from engine.scenarios import get_scenario

    sc = get_scenario("loan")
    ctx = RecourseContext(sc, BayesDecision(sc))
    base = get_method("pool", ctx, donors=8)
    return StudyResources(sc, ctx.classifier, contexts={"hare": ctx},
                          methods={"hare": FakeHare(base, 3), "hare/base": base})


@pytest.fixture
def make_study():
    proto = parse_protocol(HARE)

    def make(store):
        return Study(proto, store, resources=fake_resources())

    return make


def test_hare_pages_comparisons_and_final_plans(tmp_path, make_study, answer) -> None:
    path = tmp_path / "h.duckdb"
    with Store(path) as store:
        study = make_study(store)
        s = study.start()
        page = s.current_page()
        while page.id != "hare-2":
            page = s.submit(page.id, answer(page))
        token = s.token
    with Store(path) as store:  # resume mid-interaction
        study = make_study(store)
        s = study.resume(token)
        page = s.current_page()
        assert page.id == "hare-2" and page.kind == "hare_choice"
        assert len(page.payload.options) == 2 and page.payload.budget == 3
        with pytest.raises(AnswerError, match="choice: Input should be 0 or 1"):
            s.submit("hare-2", {"choice": 3})
        page = s.submit("hare-2", {"choice": 1})
        assert page.kind == "hare_accept" and page.id == "hare-3"
        with pytest.raises(AnswerError, match="accept: Field required"):
            s.submit("hare-3", {"choice": 1})
        page = s.submit("hare-3", {"accept": True})
        assert page.id == "plan-1"
        seen = []
        while not page.terminal:
            seen.append(page.id)
            page = s.submit(page.id, answer(page))
        assert seen == ["plan-1", "plan-2"] and s.status == "complete"
        comps = store.table("comparisons").sort_values("step")
        assert comps["kind"].tolist() == ["compare", "compare", "accept"]
        assert comps["choice"].tolist()[:2] == [0, 1] and comps["accepted"].tolist()[2]
        plans = store.plans()
        assert sorted(plans["selection"]) == ["hare_base", "hare_final"]
        assert set(plans["method"]) == {"hare", "pool"}
        assert store.counts()["ratings"] == 2


def test_synthetic_participants_drive_hare(tmp_path) -> None:
    """The simulator answers hare pages with the Luce choice rule on true personal cost."""
    from study_app.simulator import simulate

    with Store(tmp_path / "h.duckdb") as store:
        summary = simulate(parse_protocol(HARE), store, 12, resources=fake_resources())
        assert summary["complete"] == 12
        assert summary["ratings"] == summary["plans"] > 12
        comps = store.table("comparisons")
        per = comps.groupby("participant_id")["step"].agg(["min", "max", "count"])
        assert (per["min"] == 1).all() and (per["count"] == per["max"]).all()
        assert set(comps["kind"]) == {"compare", "accept"}
        assert set(comps["choice"].dropna()) <= {0, 1}


class UnapprovedSession(FakeHareSession):
    """Ends on a plan the decision model rejects (an action that changes nothing), as HARE
    does when nothing it proposed under the person's constraints was approved."""

    def final(self):
        rec = dict(self.cands[self.s["winner"]])
        name = next(iter(rec["actions"]))
        rec["actions"] = {name: rec["x"][name]}
        return rec


class UnapprovedHare(FakeHare):
    def start_session(self, x, profile, *, seed):
        return UnapprovedSession.start(self, x, profile, seed=seed)

    def resume_session(self, text):
        return UnapprovedSession.from_json(text, self)


def test_an_unapproved_final_plan_is_not_shown_and_is_counted(tmp_path) -> None:
    """Every plan shown as a recommendation is approved; the missing final plan is a
    shortfall with its reason in the plans event (what simulate and the dashboard count)."""
    from study_app.simulator import simulate

    res = fake_resources()
    base = res.base_method(parse_protocol(HARE).arm("hare"))
    res = StudyResources(res.scenario, res.classifier, contexts={"hare": base.context},
                         methods={"hare": UnapprovedHare(base, 3), "hare/base": base})
    with Store(tmp_path / "h.duckdb") as store:
        summary = simulate(parse_protocol(HARE), store, 4, resources=res)
        plans = store.plans()
        assert set(plans["selection"]) == {"hare_base"} and len(plans) == 4
        assert plans["valid"].all()
        short = summary["plan_shortfalls"]
        assert [(r["arm"], r["participants"], r["missing"]) for r in short] == [("hare", 4, 4)]
        assert "final plan is not approved by the decision model" in short[0]["reason"]
