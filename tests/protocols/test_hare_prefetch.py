"""Prefetching what follows each answer of HARE's questions while they are read (the next
question after either choice, the next iteration after "keep looking", the final plans after
the last answer): the same questions, answers and plans for the same seed with and without
it (real HARE, exact Bayes decision rule), and the prefetched work is really used."""

from __future__ import annotations

import threading
import time

from data.store import Store
from protocols.definition.schema import parse_protocol
from protocols.running.prefetch import Prefetcher, prefetch_key
from protocols.running.session import Study


def _walk(study: Study, n: int, answer, before=lambda: None) -> None:
    for _ in range(n):
        s = study.start()
        page = s.current_page()
        step = 0
        while not page.terminal:
            before()
            page = s.submit(page.id, answer(page, step))
            step += 1


def _started(prefetcher: Prefetcher) -> None:
    """Wait until every scheduled computation has started (a loaded machine may not have run
    a fresh thread yet when the answer comes at once; its answer would then compute it)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not all(
            f.running() or f.done() for f in list(prefetcher._futures.values())):
        time.sleep(0.005)


def _answer(page, step):
    from tests.protocols.conftest import scripted_answer

    if page.kind == "hare_choice":
        return {"choice": step % 2}
    if page.kind == "hare_accept":
        return {"accept": False}
    return scripted_answer(page)


def _record(store: Store):
    """Comparisons and plans by participant number (ids are random per run)."""
    seq = store.table("participants").set_index("participant_id")["seq"]
    comps = store.table("comparisons").assign(seq=lambda t: t["participant_id"].map(seq))
    plans = store.plans().assign(seq=lambda t: t["participant_id"].map(seq))
    return (comps.sort_values(["seq", "step"])[["seq", "step", "kind", "options_json",
                                                  "choice", "accepted"]]
            .to_dict(orient="records"),
            plans.sort_values(["seq", "selection"])[["seq", "selection", "method",
                                                     "actions_json"]]
            .to_dict(orient="records"))


def test_same_questions_and_plans_with_and_without_prefetch(tmp_path, monkeypatch,
                                                             small_hare):
    from protocols.running import interactive

    monkeypatch.setattr(interactive, "READING_S", 0.0)  # every answer finds its work started
    proto = parse_protocol(small_hare("hare-prefetch", 7))
    runs = {}
    for prefetch in (False, True):
        with Store(tmp_path / f"{prefetch}.duckdb") as store:
            study = Study(proto, store, prefetch=prefetch)
            if prefetch:
                # the next answer comes at once: no waiting for an idle server, a worker for
                # every computation (with 2, one still queued behind the answer not given is
                # dropped when its answer comes first), and each answered once its
                # computation has started
                prefetcher = study.interactive.prefetcher = Prefetcher(
                    workers=8, busy=lambda: False)
                _walk(study, 3, _answer, before=lambda p=prefetcher: _started(p))
            else:
                _walk(study, 3, _answer)
            runs[prefetch] = _record(store)
            if prefetch:
                # every answer was prefetched (a comparison's and "keep looking"): each
                # participant answers the accept question after both iterations (the paper
                # asks it every iteration), no twice
                answered = store.table("comparisons")
                declined = answered.query("kind == 'accept'")
                assert len(declined) == 6 and not declined["accepted"].any()
                assert study.interactive.prefetcher.hits == len(answered)
            else:
                assert study.interactive.prefetcher is None
    comps, plans = runs[True]
    assert (comps, plans) == runs[False]
    first = [c["kind"] for c in comps if c["seq"] == comps[0]["seq"]]
    assert first[0] == "compare" and first[-1] == "accept"  # the last iteration asks too
    assert first.count("accept") == 2 and len(first) <= 6  # within the budget of 6
    assert sum(c["accepted"] is False for c in comps) == 6
    assert {p["selection"] for p in plans} == {"hare_final", "hare_base"}


def test_prefetcher_hands_over_waits_and_falls_back():
    pf = Prefetcher(capacity=2, workers=1)
    release = threading.Event()
    pf.schedule("slow", lambda: release.wait(5) and "slow result")
    pf.schedule("queued", lambda: "never run")
    time.sleep(0.05)
    assert pf.take("queued") is None  # not started yet: cancelled, the caller computes it
    threading.Timer(0.1, release.set).start()
    assert pf.take("slow") == "slow result"  # running: waited for
    assert pf.take("slow") is None  # handed over once
    pf.schedule("fails", lambda: 1 / 0)
    time.sleep(0.05)
    assert pf.take("fails") is None and pf.take("never scheduled") is None
    for key in ("a", "b", "c"):  # beyond capacity the oldest is dropped
        pf.schedule(key, lambda k=key: k)
    time.sleep(0.05)
    assert pf.take("a") is None and pf.take("c") == "c" and pf.hits == 2
    ran = []
    pf.schedule("read", lambda: ran.append("read") or "read", delay=0.3)
    assert pf.take("read") is None  # answered within the reading time: never computed
    pf.schedule("long read", lambda: "long read", delay=0.02)
    time.sleep(0.4)
    assert pf.take("long read") == "long read" and ran == [] and pf.hits == 3
    assert prefetch_key("x", "y") != prefetch_key("xy") and len(prefetch_key("x")) == 64


def test_speculative_work_waits_while_the_server_is_busy():
    """A computation due while ``busy()`` waits (cancellable: its answer arriving then is
    computed by the caller), and runs once the server is idle."""
    busy = threading.Event()
    busy.set()
    pf = Prefetcher(workers=1, busy=busy.is_set)
    ran = []
    pf.schedule("waits", lambda: ran.append("waits") or "done")
    time.sleep(0.2)
    assert ran == [] and pf.take("waits") is None  # still waiting: cancelled, never run
    pf.schedule("idle later", lambda: ran.append("idle later") or "done")
    time.sleep(0.1)
    busy.clear()
    time.sleep(0.2)
    assert ran == ["idle later"] and pf.take("idle later") == "done"


def test_participants_waiting_together_share_searches_and_get_the_same_plans(tmp_path,
                                                                              trained_home,
                                                                              small_hare):
    """Four participants submit the ranking (HARE's start) and then every page at the same
    moment: with the server's batching their searches run together, and every question,
    answer and plan equals the one-at-a-time walk (the trained float32 decision model)."""
    proto = parse_protocol(small_hare("hare-prefetch", 7).replace("decision_model: bayes",
                                                                "decision_model: trained"))
    runs = {}
    for together in (False, True):
        with Store(tmp_path / f"together-{together}.duckdb") as store:
            study = Study(proto, store, prefetch=together)
            if together:
                study.interactive.batcher.gather = 0.3  # wide enough on a loaded machine
            walkers = []
            for _ in range(4):  # consent in a fixed order: the same design per participant
                s = study.start()
                page = s.current_page()
                while not page.kind.startswith("elicitation"):
                    page = s.submit(page.id, _answer(page, 0))
                walkers.append((s, page))
            go = threading.Barrier(len(walkers)) if together else None

            def finish(s, page, go=go):
                step = 0
                while not page.terminal:
                    if go is not None and page.kind.startswith("elicitation"):
                        go.wait(30)
                    page = s.submit(page.id, _answer(page, step))
                    step += 1

            threads = [threading.Thread(target=finish, args=w) for w in walkers]
            for t in (threads if together else []):
                t.start()
            for t, w in zip(threads, walkers, strict=True):
                if together:
                    t.join(120)
                else:
                    finish(*w)
            runs[together] = _record(store)
            if together:
                assert max(study.interactive.batcher.batches) > 1  # searched together
    assert runs[True] == runs[False]
    assert len({c["seq"] for c in runs[True][0]}) == 4
