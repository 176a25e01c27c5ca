"""The dashboard's read-only summaries against a small study with known answers."""

from __future__ import annotations

import pytest

from data import dashboard_queries as q
from data.store import Store
from protocols.definition.schema import parse_protocol
from protocols.running.session import Study
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
    _fix_clock(s, web.participant_id)
    snap = s.snapshot()
    yield snap
    if snap is not s:
        snap.close()
    s.close()


T0 = "2026-01-05 10:00:00"


def _fix_clock(store, web_pid) -> None:
    """Known times: everyone starts at T0 and answers the page of step s (0, 1, ...) at
    T0 + (s + 1)^2 seconds (so that page lasted 2s + 1 seconds); the web participant answered
    last 90 minutes before the database's now()."""
    with store.transaction() as tx:
        tx.execute("UPDATE participants SET created_at = ?::TIMESTAMP WHERE study_id = 'dash'",
                   [T0])
        tx.execute("UPDATE responses SET answered_at = ?::TIMESTAMP "
                   "+ (step + 1) * (step + 1) * INTERVAL '1 second' WHERE study_id = 'dash'",
                   [T0])  # SQL both backends run
        tx.execute("UPDATE participants SET updated_at = now()::TIMESTAMP "
                   "- INTERVAL '90 minutes' WHERE participant_id = ?", [web_pid])


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
    # 90 minutes idle (plus the seconds between the fixture and this query)
    assert drop["idle_minutes"].iloc[0] == pytest.approx(90.0, abs=0.5)


def test_durations_and_ratings(store) -> None:
    durations = q.page_durations(store, "dash")
    answers = store.query("SELECT count(*) AS n FROM responses WHERE study_id = 'dash'")[0]["n"]
    assert durations["answers"].sum() == answers
    steps = store.query("SELECT page_id, min(step) AS lo, max(step) AS hi FROM responses "
                        "WHERE study_id = 'dash' GROUP BY page_id")
    assert all(r["lo"] == r["hi"] for r in steps)  # this protocol: a page has one step
    step_of = {r["page_id"]: r["lo"] for r in steps}
    assert min(step_of.values()) == 0
    expected = {pid: float(2 * k + 1) for pid, k in step_of.items()}
    assert dict(zip(durations["page_id"], durations["median_seconds"], strict=True)) == expected
    assert list(durations["page_id"]) == sorted(step_of, key=step_of.get)
    done = q.completion_times(store, "dash").iloc[0]
    last = max(step_of.values())  # the complete ones answered every page, the last one at
    assert done["participants"] == 6  # (last + 1)^2 seconds
    assert done["median_minutes"] == pytest.approx((last + 1) ** 2 / 60)
    assert done["p90_minutes"] == pytest.approx((last + 1) ** 2 / 60)
    assert q.completion_times(store, "dash", "web").iloc[0]["participants"] == 0
    dist = q.rating_distribution(store, "dash")
    n = store.query("SELECT count(*) AS n FROM ratings WHERE study_id = 'dash'")[0]["n"]
    for outcome in ("acceptance", "action"):
        sub = dist[dist["outcome"] == outcome]
        assert sub["ratings"].sum() == n and sub["rating"].between(1, 7).all()
    listing = q.study_list(store)
    assert listing[["study_id", "participants", "complete"]].to_dict("records") == [
        {"study_id": "dash", "participants": 7, "complete": 6}]
