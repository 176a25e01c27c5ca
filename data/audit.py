"""Reads for checking a run against what its participants did (the load test's database
check, study_app.web.load.audit): per participant, every stored answer and how many times
each page's answer and the session's end were recorded.

Every function takes a ``Store`` and returns plain dicts keyed by column name.
"""

from __future__ import annotations

from typing import Any

from data.store import Store


def participants_by_token(store: Store, study_id: str,
                          token_hashes: list[str]) -> dict[str, dict[str, Any]]:
    """token hash -> the participant row (participant_id, status, step, current_page) of
    the participants holding these resume tokens (any token issued to them)."""
    if not token_hashes:
        return {}
    rows = store.query(
        "SELECT t.token_hash, p.participant_id, p.status, p.step, p.current_page "
        "FROM tokens t JOIN participants p "
        "  ON p.study_id = t.study_id AND p.participant_id = t.participant_id "
        "WHERE t.study_id = ? AND t.token_hash IN (SELECT unnest(?::VARCHAR[]))",
        [study_id, list(token_hashes)])
    return {r["token_hash"]: r for r in rows}


def answers_of(store: Store, study_id: str,
               participant_ids: list[str]) -> dict[str, dict[str, Any]]:
    """participant_id -> ``responses`` {page_id: answer_json}, ``answer_events``
    {page_id: count}, ``ends`` (count of complete events), ``ratings``
    {plan_id: (acceptance, action)}, ``plans`` (count)."""
    out: dict[str, dict[str, Any]] = {
        pid: {"responses": {}, "answer_events": {}, "ends": 0, "ratings": {}, "plans": 0}
        for pid in participant_ids}
    if not participant_ids:
        return out
    where = "study_id = ? AND participant_id IN (SELECT unnest(?::VARCHAR[]))"
    params = [study_id, list(participant_ids)]
    for r in store.query(f"SELECT participant_id, page_id, answer_json FROM responses "
                         f"WHERE {where}", params):
        out[r["participant_id"]]["responses"][r["page_id"]] = r["answer_json"]
    for r in store.query(f"SELECT participant_id, page_id, event, count(*) AS n FROM events "
                         f"WHERE {where} AND event IN ('answer', 'complete') "
                         "GROUP BY participant_id, page_id, event", params):
        entry = out[r["participant_id"]]
        if r["event"] == "answer":
            entry["answer_events"][r["page_id"]] = int(r["n"])
        else:
            entry["ends"] += int(r["n"])
    for r in store.query(f"SELECT participant_id, plan_id, acceptance, action FROM ratings "
                         f"WHERE {where}", params):
        out[r["participant_id"]]["ratings"][r["plan_id"]] = (r["acceptance"], r["action"])
    for r in store.query(f"SELECT participant_id, count(*) AS n FROM plans WHERE {where} "
                         "GROUP BY participant_id", params):
        out[r["participant_id"]]["plans"] = int(r["n"])
    return out


def web_participant_count(store: Store, study_id: str) -> int:
    """Participants of the study who came through the web app."""
    return int(store.query("SELECT count(*) AS n FROM participants WHERE study_id = ? AND "
                           "source = 'web'", [study_id])[0]["n"])
