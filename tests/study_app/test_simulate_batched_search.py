"""The simulator searches a chunk's pending HARE interactions together: the stored answers,
questions and plans equal those of a one-participant-at-a-time run for the same seed."""

from __future__ import annotations

from typing import Any

from data.store import Store
from engine.recourse.hare.state import HareState
from protocols.definition.schema import parse_protocol
from study_app.simulator import simulate


def _stored(store: Store) -> dict[str, list[dict[str, Any]]]:
    """Every answer, question and plan, keyed by participant number (ids are random)."""
    seq = store.table("participants").set_index("participant_id")["seq"]

    def rows(frame, keys: list[str], cols: list[str]) -> list[dict[str, Any]]:
        frame = frame.assign(seq=frame["participant_id"].map(seq))
        return frame.sort_values(["seq", *keys])[["seq", *keys, *cols]].to_dict("records")

    return {
        "responses": rows(store.table("responses"), ["step"],
                          ["page_id", "kind", "answer_json"]),
        "comparisons": rows(store.table("comparisons"), ["step"],
                            ["kind", "options_json", "choice", "accepted"]),
        "plans": rows(store.plans(), ["selection"],
                      ["method", "actions_json", "x_cf_json"]),
    }


def test_chunk_searches_together_with_the_answers_of_one_at_a_time(tmp_path, monkeypatch,
                                                                   small_hare):
    sizes: list[int] = []
    search = HareState._search

    def counting(machines: list[HareState]) -> None:
        sizes.append(len(machines))
        search(machines)

    monkeypatch.setattr(HareState, "_search", staticmethod(counting))
    proto = parse_protocol(small_hare("hare-batched", 5))
    runs = {}
    for chunk in (1, 5):
        sizes.clear()
        with Store(tmp_path / f"chunk{chunk}.duckdb") as store:
            summary = simulate(proto, store, 5, chunk=chunk)
            assert summary["complete"] == 5
            runs[chunk] = _stored(store)
        runs[chunk]["sizes"] = list(sizes)
    alone, together = runs[1].pop("sizes"), runs[5].pop("sizes")
    assert set(alone) == {1}  # one participant per transaction: one machine per search
    assert together[0] == 5  # the five starts (after the ranking) search as one
    assert sum(alone) == sum(together)  # the same searches, fewer calls
    assert runs[5] == runs[1]
    assert len(runs[5]["comparisons"]) >= 5
    assert {p["selection"] for p in runs[5]["plans"]} == {"hare_final", "hare_base"}
