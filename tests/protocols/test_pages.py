"""The page-kind registry: every page a session shows comes from one registered class, and a
new kind takes part in a session (payload, validation, effect, stored answer) by itself."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import StrictBool

from data.store import Store
from protocols.running import pages as pg
from protocols.running.session import Study


def test_every_slot_of_every_shipped_protocol_has_a_kind() -> None:
    from protocols.definition.schema import load_protocol, shipped_protocols

    for pid in shipped_protocols():
        for slot in load_protocol(pid).page_slots():
            assert pg.SLOTS.get(slot), (pid, slot)
    assert {"hare", "plan", "attention", "debrief", "end"} <= set(pg.SLOTS)
    assert all(k.kind == name for name, k in pg.PAGE_KINDS.items())


class Understood(pg.PageModel):
    understood: StrictBool


class Briefing(pg.PageKind):
    """A made-up kind replacing the scenario page: read, then confirm."""

    kind, slot = "briefing", "scenario"
    answer_model = Understood

    def build(self, ctx: Any, p: Any, page_id: str) -> tuple[str, Any]:
        return "Briefing", pg.TextPayload(text=f"{ctx.scenario.title}: read carefully.")

    def problems(self, payload: Any, answer: Any) -> list[str]:
        return [] if answer.understood else ["please confirm you read it"]

    def apply(self, w: Any, p: Any, page: Any, answer: Any) -> None:
        p.note = "briefed"


def test_a_registered_kind_serves_its_slot(tmp_path, small_protocol, answer, monkeypatch) -> None:
    briefing = Briefing()
    monkeypatch.setitem(pg.PAGE_KINDS, "briefing", briefing)
    monkeypatch.setitem(pg.SLOTS, "scenario", [*pg.SLOTS["scenario"], briefing])  # last serves
    with Store(tmp_path / "s.duckdb") as store:
        session = Study(small_protocol, store).start()
        page = session.current_page()
        while page.id != "scenario":
            page = session.submit(page.id, answer(page))
        assert page.kind == "briefing" and page.payload.text.endswith("read carefully.")
        with pytest.raises(pg.AnswerError, match="please confirm"):
            session.submit("scenario", {"understood": False})
        page = session.submit("scenario", {"understood": True})
        assert page.id == "profile"
        assert session.study.participant(session.participant_id).note == "briefed"
        kinds = store.table("responses").set_index("page_id")["kind"]
        assert kinds["scenario"] == "briefing"
