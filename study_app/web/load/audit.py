"""The load test's database check: every participant's answers present exactly once.

For each load participant (found by the hash of its resume token): it completed (or timed
out, when it went away mid-study and came back past the time limit); the pages
the database holds answers for are exactly the pages it answered; each page's answer is the
one it gave (every field it set) and its ``answer`` event was recorded once; every plan page
left exactly one rating with the two ratings given; the session ended once. Beyond that, the
study holds no web participant the load test did not start (a reconnect never starts a new
one).
"""

from __future__ import annotations

import json
import math
from typing import Any

from data import audit
from data.store import Store
from protocols.running.participation import hash_token
from study_app.web.load.participant import LoadParticipant


def _same(expected: Any, stored: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(stored, dict) and all(
            k in stored and _same(v, stored[k]) for k, v in expected.items())
    if isinstance(expected, float) or isinstance(stored, float):
        return (isinstance(stored, int | float) and not isinstance(stored, bool)
                and math.isclose(float(expected), float(stored), rel_tol=1e-9, abs_tol=1e-9))
    return bool(expected == stored and type(expected) is type(stored))


def check(store: Store, study_id: str, participants: list[LoadParticipant]) -> dict[str, Any]:
    """Problems found (``problems``: one line each, empty when exact) and counts."""
    started = [p for p in participants if p.token is not None]
    by_token = audit.participants_by_token(store, study_id,
                                           [hash_token(p.token) for p in started])
    rows = {p.number: by_token.get(hash_token(p.token)) for p in started}  # type: ignore[arg-type]
    stored = audit.answers_of(store, study_id, [r["participant_id"] for r in rows.values() if r])
    problems: list[str] = []
    answers = 0
    for p in participants:
        row = rows.get(p.number)
        if row is None:
            problems.append(f"participant {p.number}: not in the database")
            continue
        pid = row["participant_id"]
        got = stored[pid]
        # the pause between two sessions leaves the participant active; any other end
        # they reach with eligible answers completes them
        want_status = "active" if p.end_kind == "pause" else "complete"
        if p.lingered and p.end_kind == "end":  # away past the protocol's time limit
            want_status = "timed_out"
        if p.end_kind is not None and row["status"] != want_status:
            problems.append(f"{pid}: status {row['status']} after reaching {p.end_kind}")
        extra = sorted(set(got["responses"]) - set(p.expected))
        missing = sorted(set(p.expected) - set(got["responses"]))
        if extra:
            problems.append(f"{pid}: answers stored for pages it never answered: {extra}")
        if missing:
            problems.append(f"{pid}: answers missing for {missing}")
        for page_id, want in p.expected.items():
            if page_id not in got["responses"]:
                continue
            answers += 1
            have = json.loads(got["responses"][page_id])
            if not _same(want, have):
                problems.append(f"{pid}: {page_id} holds {have}, the participant gave {want}")
            if got["answer_events"].get(page_id, 0) != 1:
                problems.append(f"{pid}: {page_id} answer recorded "
                                f"{got['answer_events'].get(page_id, 0)} times")
            if page_id.startswith("plan-"):
                rating = got["ratings"].get(f"{pid}-p{page_id.split('-', 1)[1]}")
                if rating != (want["acceptance"], want["action"]):
                    problems.append(f"{pid}: {page_id} rating {rating}, given "
                                    f"{(want['acceptance'], want['action'])}")
        plan_pages = sum(1 for k in p.expected if k.startswith("plan-"))
        if len(got["ratings"]) != plan_pages:
            problems.append(f"{pid}: {len(got['ratings'])} ratings for {plan_pages} plan pages")
        if p.end_kind == "debrief" and got["ends"] != 1:
            problems.append(f"{pid}: completion recorded {got['ends']} times")
    web = audit.web_participant_count(store, study_id)
    if web != len(started):
        problems.append(f"the study holds {web} web participants, the load test started "
                        f"{len(started)}")
    return {"exact": not problems, "participants_checked": len(started),
            "answers_checked": answers, "problems": problems[:50],
            "problem_count": len(problems)}
