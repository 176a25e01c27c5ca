"""The dashboard's read-only summaries against a small study with known answers."""

from __future__ import annotations

import pytest

from data import dashboard_queries as q
from data.store import Store
from protocols.schema import parse_protocol
from protocols.session import Study
from study_app.simulator import simulate

PROTOCOL = parse_protocol("""\
id: dash
title: Dashboard test
scenario: loan
seed: 3
decision_model: bayes
profile: {source: persona}
elicitation: {scheme: binary}
arms:
  - {id: oracle, method: oracle, options: {bins: 6, plausibility: false}}
  - {id: pool, method: pool, options: {donors: 10}}
plans: {per_participant: 2, design: stratified, distance: l1_profile}
""")


@pytest.fixture(scope="module", params=["duckdb", "postgresql"])
def store(request, tmp_path_factory):
    """The study on each backend; on PostgreSQL the queries read a snapshot, as the
    dashboard does (they are DuckDB SQL)."""
    if request.param == "duckdb":
        target = str(tmp_path_factory.mktemp("dash") / "d.duckdb")
    else:
        import psycopg

        server = request.getfixturevalue("postgres_server")
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute("DROP SCHEMA IF EXISTS dash_queries CASCADE")
            admin.execute("CREATE SCHEMA dash_queries")
        target = f"{server}?options=-csearch_path%3Ddash_queries"
    s = Store(target)
    simulate(PROTOCOL, s, 6, chunk=3)
    study = Study(PROTOCOL, s)
    web = study.start()  # one web participant, left on the decision page
    for answer in ({"agree": True}, {}, {}):
        web.submit(web.current_page().id, answer)
    snap = s.snapshot()
    yield snap
    if snap is not s:
        snap.close()
    s.close()


def test_status_by_arm_and_sources(store) -> None:
    all_ = q.status_by_arm(store, "dash")
    assert all_["participants"].sum() == 7
    assert set(all_["arm"]) == {"oracle", "pool"}
    web = q.status_by_arm(store, "dash", "web")
    assert web.to_dict("records") == [{"arm": web["arm"][0], "status": "active",
                                       "participants": 1}]
    assert q.status_by_arm(store, "other-study").empty
    with pytest.raises(ValueError, match="source"):
        q.status_by_arm(store, "dash", "robots")


def test_funnel_and_drop_off(store) -> None:
    funnel = q.funnel(store, "dash")
    first = funnel.iloc[0]
    assert (first["page_id"], first["answered"], first["share"]) == ("consent", 7, 1.0)
    assert list(funnel["page_id"][:4]) == ["consent", "scenario", "profile", "decision"]
    assert funnel.set_index("page_id").loc["decision", "answered"] == 6
    drop = q.drop_off(store, "dash")
    assert drop[["page_id", "participants"]].to_dict("records") == [
        {"page_id": "decision", "participants": 1}]
    assert drop["idle_minutes"].iloc[0] >= 0


def test_durations_and_ratings(store) -> None:
    durations = q.page_durations(store, "dash")
    answers = store.query("SELECT count(*) AS n FROM responses WHERE study_id = 'dash'")[0]["n"]
    assert durations["answers"].sum() == answers
    assert (durations["median_seconds"] >= 0).all()
    done = q.completion_times(store, "dash").iloc[0]
    assert done["participants"] == 6 and done["median_minutes"] >= 0
    assert q.completion_times(store, "dash", "web").iloc[0]["participants"] == 0
    dist = q.rating_distribution(store, "dash")
    n = store.query("SELECT count(*) AS n FROM ratings WHERE study_id = 'dash'")[0]["n"]
    for outcome in ("acceptance", "action"):
        sub = dist[dist["outcome"] == outcome]
        assert sub["ratings"].sum() == n and sub["rating"].between(1, 7).all()
    listing = q.study_list(store)
    assert listing[["study_id", "participants", "complete"]].to_dict("records") == [
        {"study_id": "dash", "participants": 7, "complete": 6}]
