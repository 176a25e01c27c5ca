"""data.quality's flags on hand-made rows (each definition checked against numbers worked out
by hand), the protocol's thresholds, and the dashboard's counts per arm and per ending."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from data import dashboard_queries as dq
from data.quality import participant_flags
from data.store import Store

AT = datetime(2024, 1, 1)
PAGES = ("consent", "scenario", "plan-1", "plan-2", "plan-3")


def _person(tx, pid: str, seconds: list[float], ratings: list[tuple[int, int]],
            attention: bool | None = None, status: str = "complete", arm: str = "a") -> None:
    tx.insert("participants", [{"study_id": "s", "participant_id": pid,
                                "seq": int(pid[1:]), "source": "web", "arm": arm,
                                "status": status, "step": len(seconds), "state_json": "{}",
                                "created_at": AT, "updated_at": AT}])
    rows = [{"study_id": "s", "participant_id": pid, "page_id": page, "kind": "plan",
             "step": k, "answer_json": "{}", "answered_at": AT, "seconds": t}
            for k, (page, t) in enumerate(zip(PAGES, seconds, strict=False))]
    if attention is not None:
        rows.append({"study_id": "s", "participant_id": pid, "page_id": "attention-c",
                     "kind": "attention", "step": 9, "answer_json": "{}",
                     "correct": attention, "answered_at": AT})
    tx.insert("responses", rows)
    tx.insert("ratings", [{"study_id": "s", "participant_id": pid, "plan_id": f"x{k}",
                           "acceptance": a, "action": b, "answered_at": AT}
                          for k, (a, b) in enumerate(ratings)])


@pytest.fixture
def flagged(tmp_path):
    quality = {"quality": {"speeder_fraction": 0.4, "straightliner_min_ratings": 3}}
    with Store(tmp_path / "q.duckdb") as store:
        with store.transaction() as tx:
            tx.insert("studies", [{"study_id": "s", "protocol_id": "p", "source": "protocol",
                                   "protocol_json": json.dumps(quality), "created_at": AT}])
            normal = [10.0, 20.0, 30.0, 40.0, 50.0]
            varied = [(2, 3), (5, 4), (6, 6)]
            _person(tx, "p1", normal, varied, attention=True)
            _person(tx, "p2", [t * 1.2 for t in normal], varied)
            _person(tx, "p3", [t * 0.8 for t in normal], [(4, 4), (4, 4), (4, 4)], True)
            _person(tx, "p4", [t * 0.3 for t in normal], varied, attention=False)  # fast
            _person(tx, "p5", [t * 1.1 for t in normal], [(7, 1), (7, 1)], arm="b")
            _person(tx, "p6", [100.0, 1.0, 1.0], [(3, 3)], status="active", arm="b")
            _person(tx, "p7", normal, varied, status="withdrawn")  # never counted
        yield store


def test_each_flag_follows_its_definition(flagged) -> None:
    f = participant_flags(flagged, "s").set_index("participant_id")
    assert list(f.index) == ["p1", "p2", "p3", "p4", "p5", "p6"]
    # page medians (p1..p6): consent 10.5, scenario 18, plan-1 27, plan-2 40, plan-3 50
    assert f.loc["p4", "total_seconds"] == pytest.approx(45.0)
    assert f.loc["p4", "total_ratio"] == pytest.approx(45 / 145.5)
    assert f.loc["p2", "total_ratio"] == pytest.approx(180 / 145.5)
    # p4's ratios: 3/10.5, 6/18, 9/27, 12/40, 15/50 -> median 0.3
    assert f.loc["p4", "page_ratio"] == pytest.approx(0.3)
    assert f.loc["p4", "fast_pages"] == 5 and f.loc["p1", "fast_pages"] == 0
    assert f["speeder"].tolist() == [False, False, False, True, False, True]
    # p6: one long pause (100 s), then 1 s pages: slow in total, a speeder page by page
    assert f.loc["p6", "total_ratio"] == pytest.approx(102 / 55.5)
    assert f.loc["p6", "page_ratio"] == pytest.approx(1 / 18)
    assert f.loc["p3", "straightliner"] and not f.loc["p1", "straightliner"]
    assert pd_isna(f.loc["p5", "straightliner"])  # two ratings: under the minimum of 3
    assert f.loc["p4", "attention_failed"] and not f.loc["p1", "attention_failed"]
    assert pd_isna(f.loc["p2", "attention_failed"])  # answered no check
    assert f["flagged"].tolist() == [False, False, True, True, False, True]
    looser = participant_flags(flagged, "s", speeder_fraction=0.2).set_index("participant_id")
    assert not looser.loc["p4", "speeder"] and looser.loc["p6", "speeder"]  # 0.3 vs 0.055


def test_dashboard_counts_flags_and_endings(flagged) -> None:
    counts = dq.quality_flags(flagged, "s").set_index("arm")
    assert counts.loc["a"].to_dict() == {"participants": 4, "speeders": 1, "straightliners": 1,
                                         "attention_failed": 1, "flagged": 2}
    assert counts.loc["b"].to_dict() == {"participants": 2, "speeders": 1, "straightliners": 0,
                                         "attention_failed": 0, "flagged": 1}
    ends = dict(dq.end_states(flagged, "s").itertuples(index=False))
    assert ends == {"completed": 5, "in_progress": 1, "withdrawn": 1}


def pd_isna(value: object) -> bool:
    import pandas as pd

    return bool(pd.isna(value))
