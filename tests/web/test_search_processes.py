"""HARE's searches in a worker process (study_app.web.search_processes): the same questions,
answers and plans as searched in the server's own process (the trained float32 decision
model, real HARE), and the searches really ran in the worker."""

from __future__ import annotations

from data.store import Store
from protocols.definition.schema import parse_protocol
from protocols.running.session import Study
from study_app.web.search_processes import SearchProcesses
from tests.protocols.test_hare_prefetch import _answer, _record, _walk


def test_searches_in_a_worker_process_give_the_same_sessions(tmp_path, trained_home,
                                                              small_hare):
    text = small_hare("hare-worker", 11).replace("decision_model: bayes",
                                                 "decision_model: trained")
    proto = parse_protocol(text)
    runs = {}
    for worker in (False, True):
        with Store(tmp_path / f"worker-{worker}.duckdb") as store:
            if not worker:
                study = Study(proto, store)
                _walk(study, 2, _answer)
            else:
                study = Study(proto, store, prefetch=True)
                searcher = SearchProcesses(proto, study.resources)
                study.interactive.run_searches_with(searcher, searcher)
                try:
                    _walk(study, 2, _answer)
                finally:
                    searcher.close()
                assert searcher.broken is None
                # two starts and two "keep looking" at least, searched in the worker
                assert searcher.batches >= 4
            runs[worker] = _record(store)
    assert runs[True] == runs[False]
    assert len({c["seq"] for c in runs[True][0]}) == 2
