"""Many threads of one process writing through one Study into one database."""

from __future__ import annotations

import json
import threading

from data.store import Store
from protocols.running.session import Study


def _walk(session, answer) -> None:
    page = session.current_page()
    while not page.terminal:
        page = session.submit(page.id, answer(page))


def test_sixteen_threads_exact_counts_no_duplicates(store_target, small_protocol,
                                                    answer) -> None:
    per_thread, threads = 3, 16
    errors: list[BaseException] = []
    with Store(store_target) as store:
        study = Study(small_protocol, store)

        def work() -> None:
            try:
                for _ in range(per_thread):
                    _walk(study.start(), answer)
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        pool = [threading.Thread(target=work) for _ in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        assert not errors, errors
        n = per_thread * threads
        c = store.counts()
        assert c["participants"] == n
        events = store.table("events")  # parsed here: the SQL dialects' JSON functions differ
        shown = sum(json.loads(d)["n"] for d in events.loc[events["event"] == "plans",
                                                            "detail_json"])
        assert c["plans"] == c["ratings"] == c["ratings_long"] == shown  # each plan rated once
        assert c["plans"] > 2.5 * n  # the small protocol's 3 plans, rare shortfalls
        # 7 pages besides the plans (consent, screening, scenario, profile, decision,
        # elicitation, attention) and one per plan; the attention check comes after the
        # first plan, so whoever was shown none (no plan within the rules) has 6
        planless = n - len(set(store.table("plans")["participant_id"]))
        assert c["responses"] == 7 * n - planless + shown
        assert c["profiles"] == c["elicitations"] == n
        parts = store.table("participants")
        assert sorted(parts["seq"]) == list(range(n))
        assert (parts["status"] == "complete").all() and parts["step"].sum() == c["responses"]
        dup = store.query("SELECT count(*) AS n FROM (SELECT plan_id FROM ratings "
                          "GROUP BY study_id, participant_id, plan_id HAVING count(*) > 1) AS d")
        assert dup[0]["n"] == 0
        assert parts["arm"].value_counts().to_dict() == {"pool": n // 2, "oracle": n // 2}


def test_same_page_submitted_by_two_threads_at_once(store_target, small_protocol,
                                                     answer) -> None:
    with Store(store_target) as store:
        study = Study(small_protocol, store)
        sessions = [study.start() for _ in range(8)]
        for s in sessions:
            page = s.current_page()
            while page.id != "plan-1":
                page = s.submit(page.id, answer(page))
        before = store.counts()
        barrier = threading.Barrier(16)
        results: list[str] = []

        def race(s) -> None:
            page = s.current_page()
            barrier.wait()
            results.append(s.submit("plan-1", answer(page)).id)

        pool = [threading.Thread(target=race, args=(s,)) for s in sessions for _ in range(2)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        assert sorted(results) == ["attention-c1"] * 16
        after = store.counts()
        assert after["ratings"] == before["ratings"] + 8
        assert after["responses"] == before["responses"] + 8
