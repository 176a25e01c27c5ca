"""No answer without an action (AppTest, in-process): a question left unanswered is marked
beside it (and summed up under the form), nothing is stored; an elicitation left at a default
the protocol declares is stored with the items that were left at it."""

from __future__ import annotations

import pytest
from apptest_driver import AppDriver, chosen_answer

from protocols.definition.interface_text import english
from protocols.definition.schema import ProtocolError, load_protocol
from protocols.running import pages as pg

MISSING_MARK = english("missing.mark")


def _to(driver: AppDriver, protocol, kind_prefix: str) -> pg.Page:
    page = driver.page()
    while not page.kind.startswith(kind_prefix):
        driver.answer(page, chosen_answer(page, protocol))
        assert not driver.errors(), driver.errors()
        page = driver.page()
    return page


def _marks(driver: AppDriver) -> int:
    return sum(MISSING_MARK in m.value for m in driver.at.markdown)


def test_each_missing_answer_is_marked_beside_its_question(serve_app,
                                                           small_protocol_file) -> None:
    path = small_protocol_file()
    serve_app(path)
    protocol = load_protocol(path)
    driver = AppDriver()
    page = _to(driver, protocol, "plan")
    answer = chosen_answer(page, protocol)
    driver.at.radio(key=f"{page.id}:acceptance").set_value(answer["acceptance"])
    driver.at.text_area(key=f"{page.id}:acceptance_why").input("fine")
    driver.at.text_area(key=f"{page.id}:action_why").input("fine too")
    driver.at.button(key=f"{page.id}:submit").click().run()
    impossible = len(page.payload.impossible)
    assert _marks(driver) == 1 + impossible  # the action rating and every impossible? item
    summary = " ".join(driver.errors())
    assert "the second rating" in summary and "the first rating" not in summary
    assert driver.page().id == page.id and driver.stored(page.id) is None
    driver.answer(page, answer)  # answered in full: the marks go, the page moves on
    assert driver.page().id != page.id and _marks(driver) == 0


def test_untouched_ranking_is_refused_without_a_declared_default(serve_app,
                                                                 small_protocol_file) -> None:
    path = small_protocol_file()
    serve_app(path)
    protocol = load_protocol(path)
    driver = AppDriver()
    page = _to(driver, protocol, "elicitation")
    driver.at.button(key=f"{page.id}:submit").click().run()
    assert "Please put the items in your order" in " ".join(driver.errors())
    assert driver.page().id == page.id and driver.stored(page.id) is None


def test_ranking_left_at_the_declared_default_is_stored_as_such(serve_app,
                                                                small_protocol_file) -> None:
    path = small_protocol_file(("scheme: ranking", "scheme: ranking, default: shown_order"))
    serve_app(path)
    protocol = load_protocol(path)
    driver = AppDriver()
    page = _to(driver, protocol, "elicitation")
    assert not driver.at.checkbox  # no "already my answer" tick: the protocol takes the order
    driver.at.button(key=f"{page.id}:submit").click().run()
    assert not driver.errors()
    names = [i.feature for i in page.payload.items]
    stored = driver.stored(page.id)
    assert stored == {"answers": {n: k for k, n in enumerate(names, 1)},
                      "left_at_default": names}


def test_likert_items_left_unanswered_take_the_declared_default(serve_app,
                                                                small_protocol_file) -> None:
    path = small_protocol_file(("scheme: ranking", "scheme: likert, likert_levels: 4, "
                                "default: cannot"))
    serve_app(path)
    protocol = load_protocol(path)
    driver = AppDriver()
    page = _to(driver, protocol, "elicitation")
    first, *rest = [i.feature for i in page.payload.items]
    for k, name in enumerate(rest):
        driver.at.radio(key=f"{page.id}:{name}").set_value(1 + k % 4)
    driver.at.button(key=f"{page.id}:submit").click().run()
    assert not driver.errors() and _marks(driver) == 0
    stored = driver.stored(page.id)
    assert stored["left_at_default"] == [first] and stored["answers"][first] is None
    assert stored["answers"][rest[0]] == 1


def test_left_at_default_is_checked_against_the_page(small_protocol_file) -> None:
    """The session refuses a "left at the default" the page never offered, or whose value is
    not the default (a tampered request)."""
    path = small_protocol_file(("scheme: ranking", "scheme: binary, default: false"))
    protocol = load_protocol(path)
    payload = pg.ElicitationPayload(scheme="binary", text="t", default=False, items=[
        pg.Item(feature="a", label="A"), pg.Item(feature="b", label="B")])
    page = pg.Page(id="elicitation", kind="elicitation_binary", title="t",
                   progress=pg.Progress(step=1, total=2), payload=payload)
    ok = pg.validate_answer(page, {"answers": {"a": False, "b": True}, "left_at_default": ["a"]})
    assert ok.left_at_default == ["a"]
    with pytest.raises(pg.AnswerError, match="must be False"):
        pg.validate_answer(page, {"answers": {"a": True, "b": True}, "left_at_default": ["a"]})
    bare = page.model_copy(update={"payload": payload.model_copy(update={"default": None})})
    with pytest.raises(pg.AnswerError, match="no default"):
        pg.validate_answer(bare, {"answers": {"a": False, "b": True}, "left_at_default": ["a"]})
    assert protocol.elicitation.default is False


@pytest.mark.parametrize(("elicitation", "message"), [
    ("scheme: binary, default: shown_order", "a binary default is true"),
    ("scheme: likert, likert_levels: 4, default: 5", "a likert default is a level"),
    ("scheme: ranking, default: 2", "a ranking's default is shown_order"),
])
def test_a_default_must_fit_the_scheme(small_protocol_file, elicitation, message) -> None:
    path = small_protocol_file(("scheme: ranking", elicitation))
    with pytest.raises(ProtocolError, match=message):
        load_protocol(path)
