"""The load generator against real `serve` processes: participants over Streamlit's
websocket protocol complete the study, the database check is exact and catches lost,
duplicated, altered and stray answers, and two workers on PostgreSQL survive a SIGKILL."""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import subprocess

import pytest

from data.store import Store
from protocols.definition.schema import load_protocol
from study_app.web.cluster import Cluster, haproxy_config
from study_app.web.load.audit import check
from study_app.web.load.run import LoadSettings, drive, latency_stats
from study_app.web.load.streamlit_client import (
    Screen,
    StreamlitProtocolError,
    StreamlitSession,
    Widget,
    user_key,
    widget_state,
)
from study_app.web.render_elicitation import ranking_shown
from study_app.web.render_intro import screening_widgets
from tests.cli_process import CLI


def test_widget_keys_and_states() -> None:
    assert user_key("$$ID-4f3a9c-plan-1:acceptance") == "plan-1:acceptance"
    assert user_key("$$ID-4f3a9c-None") is None

    class Radio:
        options = ["Yes", "No"]
        id = "$$ID-1-x"

    radio = Widget("radio", Radio.id, "x", Radio())
    assert widget_state(radio, "No").string_value == "No"
    with pytest.raises(ValueError, match="not an option"):
        widget_state(radio, "Maybe")
    assert widget_state(Widget("button", "b", "b", None), True).trigger_value is True
    assert widget_state(Widget("number_input", "n", "n", None), 3).double_value == 3.0


def test_a_server_lost_between_pages_is_a_protocol_error_the_participant_retries() -> None:
    """A SIGKILLed server drops the TCP connection without a close frame; the next answer's
    *send* then fails. It must surface as StreamlitProtocolError (which LoadParticipant.run
    answers by reconnecting with the resume link), not as a raw ConnectionClosedError that
    ends the participant with an error (the CI failure of the kill-a-worker test)."""
    import websockets

    async def scenario() -> None:
        async def abort(ws) -> None:
            ws.transport.abort()  # like a killed process: no close frame

        async with websockets.serve(abort, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            async with StreamlitSession(f"http://127.0.0.1:{port}", timeout=10) as session:
                await session._ws.wait_closed()
                with pytest.raises(StreamlitProtocolError, match="closed the connection"):
                    await session.rerun()

    asyncio.run(scenario())


def test_ranking_is_read_in_screen_order() -> None:
    screen = Screen()
    for key in ("p:ranking:up:savings", "p:ranking:down:savings", "p:ranking:up:income",
                "p:ranking:on:loan_duration", "p:submit"):
        screen.widgets[key] = Widget("button", key, key, None)
    assert ranking_shown(screen, "p") == {"savings": 1, "income": 2, "loan_duration": None}


def test_latency_stats_nearest_rank() -> None:
    s = latency_stats([i / 1000 for i in range(1, 101)])
    assert (s["n"], s["p50_ms"], s["p95_ms"], s["max_ms"]) == (100, 50.5, 95.0, 100.0)


def test_haproxy_config_names_every_worker(tmp_path) -> None:
    cfg = haproxy_config("127.0.0.1", 8000, [9001, 9002])
    assert "bind 127.0.0.1:8000" in cfg and "{{" not in cfg
    assert "server w0 127.0.0.1:9001 cookie w0" in cfg
    assert "server w1 127.0.0.1:9002 cookie w1" in cfg and "option redispatch" in cfg
    if shutil.which("haproxy"):  # HAProxy itself accepts it
        path = tmp_path / "haproxy.cfg"
        path.write_text(cfg)
        checked = subprocess.run(["haproxy", "-c", "-f", str(path)], capture_output=True,
                                 text=True, timeout=60)
        assert checked.returncode == 0, checked.stdout + checked.stderr


def _drive_one_server(settings: LoadSettings, proto_file, db, tmp_path) -> dict:
    """The load participants of ``settings`` against one `serve` of ``proto_file`` on ``db``
    (study id "lt"), stopped afterwards."""
    cluster = Cluster(["--protocol", str(proto_file), "--db", str(db), "--study", "lt"], 1,
                      tmp_path)
    cluster.start(timeout=300)
    try:
        return asyncio.run(drive(settings, cluster.url, cluster, None))
    finally:
        cluster.stop()


def test_participants_complete_and_the_check_catches_tampering(
        tmp_path, small_protocol_file) -> None:
    proto_file = small_protocol_file()
    db = tmp_path / "load.duckdb"
    settings = LoadSettings(load_protocol(str(proto_file)), str(proto_file), 3, 3, str(db))
    driven = _drive_one_server(settings, proto_file, db, tmp_path)
    assert driven["failures"] == {}
    people = driven["people"]
    assert all(p.end_kind == "debrief" for p in people)
    kinds = {s.kind for p in people for s in p.steps}
    assert {"consent", "screening", "elicitation_ranking", "plan", "attention"} <= kinds
    with Store(db) as store:
        clean = check(store, "lt", people)
        assert clean["exact"], clean["problems"]
        assert clean["answers_checked"] == sum(len(p.expected) for p in people) > 0
        pid = store.query("SELECT participant_id FROM participants ORDER BY seq")[0][
            "participant_id"]
        with store.transaction() as tx:  # a lost rating, a doubled event, an altered answer
            tx.execute("DELETE FROM ratings WHERE participant_id = ? AND plan_id = ?",
                       [pid, f"{pid}-p1"])
            tx.execute("INSERT INTO events (study_id, participant_id, page_id, event, "
                       "occurred_at) SELECT study_id, participant_id, page_id, event, "
                       "occurred_at FROM events WHERE participant_id = ? AND page_id = "
                       "'consent' AND event = 'answer'", [pid])
            tx.execute("UPDATE responses SET answer_json = '{\"agree\": false}' WHERE "
                       "participant_id = ? AND page_id = 'consent'", [pid])
            tx.execute("INSERT INTO participants SELECT * REPLACE ('stray' AS participant_id, "
                       "99 AS seq, 99 AS consent_seq, 'stray-token' AS token_hash) "
                       "FROM participants WHERE participant_id = ?", [pid])
        found = "\n".join(check(store, "lt", people)["problems"])
    assert "plan-1 rating None" in found
    assert "consent answer recorded 2 times" in found
    assert "consent holds {'agree': False}" in found
    assert "holds 4 web participants" in found


@pytest.mark.timeout(900)
@pytest.mark.slow  # a cluster of servers and a killed worker (make test-slow)
def test_two_workers_on_postgres_survive_a_killed_worker(tmp_path, postgres_url,
                                                          small_protocol_file) -> None:
    proto_file = small_protocol_file()
    out = subprocess.run(
        [CLI, "loadtest", "--protocol", str(proto_file), "--participants", "10",
         "--concurrency", "10", "--db", postgres_url, "--workers", "2", "--kill-one-at", "0.2",
         "--json"], capture_output=True, text=True, timeout=800)
    assert out.returncode == 0, out.stderr[-3000:]
    doc = json.loads(out.stdout)
    assert (doc["backend"], doc["workers"], doc["complete"], doc["errors"]) == (
        "postgresql", 2, 10, 0)
    assert doc["killed_worker"]["participants_mid_study"] > 0
    assert doc["reconnects"] >= 1  # the killed worker's participants came back elsewhere
    assert doc["database_check"]["exact"], doc["database_check"]["problems"]
    assert doc["transitions"]["p95_ms"] > 0
    memory = doc["server_memory"]  # both servers' processes, shared pages once in PSS
    assert memory["processes"] >= 2 and 0 < memory["pss_mb"] < memory["rss_mb"]


def test_loadtest_refuses_workers_on_duckdb(tmp_path, run_cli) -> None:
    out = run_cli("loadtest", "--protocol", "tominaga-replication", "--db",
                  str(tmp_path / "x.duckdb"), "--workers", "2")
    assert out.code == 2 and "postgresql://" in out.stderr and out.stdout == ""


def test_serve_workers_on_duckdb_is_refused(tmp_path, run_cli) -> None:
    from study_app.web.cluster import free_port

    out = run_cli("serve", "--protocol", "tominaga-replication", "--db",
                  str(tmp_path / "x.duckdb"), "--workers", "2", "--port", str(free_port()))
    assert out.code == 2 and "postgresql://" in out.stderr
    assert not (tmp_path / "x.duckdb").exists()


@pytest.mark.timeout(600)
@pytest.mark.slow  # a cluster of servers and a dead worker restarted (make test-slow)
def test_serve_workers_serves_restarts_a_dead_worker_and_stops(tmp_path, postgres_url,
                                                               small_protocol_file) -> None:
    """`serve --workers 2`: participants complete through HAProxy; a SIGKILLed worker is
    restarted; SIGTERM leaves no process behind."""
    import os
    import signal
    import time

    from study_app.web.cluster import free_port, healthy
    from study_app.web.load.participant import LoadParticipant

    proto_file = small_protocol_file()
    port = free_port()
    sup = subprocess.Popen([CLI, "serve", "--protocol", str(proto_file), "--db", postgres_url,
                            "--workers", "2", "--port", str(port), "--address", "127.0.0.1",
                            "--study", "w2"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    url = f"http://127.0.0.1:{port}"

    def workers() -> list[int]:
        out = subprocess.run(["pgrep", "-f", "--", "--study w2 .*--port"], capture_output=True,
                             text=True)
        return [int(p) for p in out.stdout.split() if int(p) != sup.pid]

    try:
        deadline = time.monotonic() + 400
        while not healthy(url):
            assert sup.poll() is None, sup.stderr.read() if sup.stderr else ""
            assert time.monotonic() < deadline, "serve --workers never became healthy"
            time.sleep(0.5)
        people = [LoadParticipant(k, load_protocol(str(proto_file)), url) for k in range(2)]

        async def walk() -> None:
            await asyncio.gather(*(p.run() for p in people))

        asyncio.run(walk())
        assert [p.end_kind for p in people] == ["debrief", "debrief"]
        before = workers()
        assert len(before) == 2, before
        os.kill(before[0], signal.SIGKILL)
        deadline = time.monotonic() + 400
        while True:  # the supervisor starts a new worker in its place
            now = workers()
            if len(now) == 2 and before[0] not in now and healthy(url):
                break
            assert time.monotonic() < deadline, f"no worker restarted: {now}"
            time.sleep(0.5)
    finally:
        os.killpg(sup.pid, signal.SIGTERM)
        sup.wait(timeout=60)
    time.sleep(1)
    assert workers() == [] and not healthy(url)


def test_screening_widgets_answer_every_question_kind() -> None:
    """The load generator's screening: a radio per choice, the select-all box of the
    eligible option ticked (keyed <question>:<option index>), the age typed; every answer
    fits its question and is eligible."""
    protocol = load_protocol("tominaga-replication")
    shown, answer = screening_widgets(protocol, random.Random(3))
    assert shown["loans:7"] is True and answer["answers"]["loans"] == [
        "I do not have any loans"]
    assert "loans" not in shown
    age = shown["age"]
    assert isinstance(age, int) and 15 <= age <= 100 and answer["answers"]["age"] == age
    for q in protocol.screening:
        value = answer["answers"][q.id]
        assert q.problems(value) == [] and q.eligible_answer(value), q.id


def test_an_action_on_a_page_takes_a_hands_time(monkeypatch) -> None:
    """``--act``: each widget change, button and click waits between half and 1.5 times the
    mean (never no time), the same draw for the same participant, page and action."""
    from study_app.web.load import participant as lp

    slept: list[float] = []

    async def sleep(s: float) -> None:
        slept.append(s)

    monkeypatch.setattr(lp.asyncio, "sleep", sleep)
    proto = load_protocol("tominaga-replication")
    person = lp.LoadParticipant(0, proto, "http://x", act=1.2)

    async def acts() -> None:
        for k in range(300):
            await person._act(f"page-{k}", "submit")
        await person._act("page-0", "submit")  # drawn again: the same time

    asyncio.run(acts())
    assert len(slept) == 301 and slept[-1] == slept[0]
    assert 0.6 <= min(slept) and max(slept) <= 1.8 and abs(sum(slept) / 301 - 1.2) < 0.06
    slept.clear()
    asyncio.run(lp.LoadParticipant(0, proto, "http://x")._act("page-0", "submit"))
    assert slept == []  # act 0: one action right after another


def test_a_widget_in_a_form_sends_nothing_before_the_forms_submit() -> None:
    """As a browser: changing a widget outside a form is a script run (with every such
    widget set so far); a widget in an ``st.form`` keeps its value until the submit, so
    changing it sends nothing."""
    from streamlit.proto.Checkbox_pb2 import Checkbox
    from streamlit.proto.Radio_pb2 import Radio

    from study_app.web.load import participant as lp

    rating = Radio(id="$$ID-1-p:rating", options=["1", "2"], form_id="p:form")
    outside = Checkbox(id="$$ID-2-p:more", form_id="")
    other = Checkbox(id="$$ID-3-p:other", form_id="")
    screen = Screen(widgets={w.id.split("-", 2)[2]: Widget(t, w.id, w.id.split("-", 2)[2], w)
                             for t, w in (("radio", rating), ("checkbox", outside),
                                          ("checkbox", other))},
                    html=['<div data-page="p" data-kind="plan"></div>'])
    assert screen.widgets["p:rating"].in_form and not screen.widgets["p:more"].in_form
    sent: list[list[str]] = []

    class Session:
        async def rerun(self, states):
            sent.append([s.id for s in states])
            return screen

    person = lp.LoadParticipant(0, load_protocol("tominaga-replication"), "http://x")
    values = {"p:rating": "2", "p:more": True, "p:other": False}
    asyncio.run(person._change_widgets(Session(), screen, "p", values))
    assert sent == [[outside.id], [outside.id, other.id]]


def test_participants_who_go_away_past_the_time_limit_time_out(tmp_path,
                                                               small_protocol_file) -> None:
    """The load generator's lingering participants come back after the protocol's time
    limit: the time-is-up page, status timed_out, and the answers before they left kept
    exactly (the database check)."""
    proto_file = small_protocol_file(("arms:", "time_limit: {seconds: 6}\n"
                                               "recruitment: {timed_out: {code: LATE-1}}\n"
                                               "arms:"))
    db = tmp_path / "load.duckdb"
    settings = LoadSettings(load_protocol(str(proto_file)), str(proto_file), 4, 4, str(db),
                            linger_share=0.5, linger=8.0)
    driven = _drive_one_server(settings, proto_file, db, tmp_path)
    assert driven["failures"] == {}
    people = driven["people"]
    away = [p for p in people if p.lingered]
    assert away, "nobody went away: the seed draws none of four at 0.5"
    assert [(p.end_kind, p.ending) for p in away] == [("end", "timed_out")] * len(away)
    assert all(p.end_kind == "debrief" for p in people if not p.lingered)
    with Store(db) as store:
        result = check(store, "lt", people)
        assert result["exact"], result["problems"]
        statuses = store.query("SELECT status, count(*) AS n FROM participants GROUP BY ALL")
        assert {r["status"]: r["n"] for r in statuses} == \
            {"timed_out": len(away), "complete": 4 - len(away)} if len(away) < 4 else \
            {"timed_out": 4}
