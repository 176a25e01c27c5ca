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


@pytest.mark.parametrize("scheme", ["ranking", "likert"])
def test_too_few_changeable_items_are_refused_with_the_minimum_shown(
        serve_app, small_protocol_file, scheme) -> None:
    """``elicitation.min_changeable: 2``: the page states the minimum; a participant who
    leaves one item changeable reads it again as the error, stays on the page and nothing is
    stored; with two items the page moves on."""
    elicitation = ("scheme: ranking, min_changeable: 2" if scheme == "ranking" else
                   "scheme: likert, likert_levels: 4, default: cannot, min_changeable: 2")
    path = small_protocol_file(("scheme: ranking", elicitation))
    serve_app(path)
    protocol = load_protocol(path)
    driver = AppDriver()
    page = _to(driver, protocol, "elicitation")
    message = english("elicitation.min_changeable", n=2)
    assert message in " ".join(m.value for m in driver.at.markdown)  # stated up front
    first, second, *rest = [i.feature for i in page.payload.items]
    if scheme == "ranking":
        for name in (second, *rest):  # "I cannot change this" for all but the first
            driver.at.button(key=f"{page.id}:ranking:off:{name}").click().run()
    else:
        driver.at.radio(key=f"{page.id}:{first}").set_value(2)
    driver.at.button(key=f"{page.id}:submit").click().run()
    assert driver.errors() == [message]
    assert driver.page().id == page.id and driver.stored(page.id) is None
    if scheme == "ranking":
        driver.at.button(key=f"{page.id}:ranking:on:{second}").click().run()
    else:
        driver.at.radio(key=f"{page.id}:{second}").set_value(3)
    driver.at.button(key=f"{page.id}:submit").click().run()
    assert not driver.errors() and driver.page().id != page.id
    stored = driver.stored(page.id)["answers"]
    assert sorted(k for k, v in stored.items() if v is not None) == sorted([first, second])


def test_load_participants_leave_the_minimum_changeable(small_protocol_file) -> None:
    """The load test's participants (study_app.web.render_elicitation's load answers) mark
    items changeable until the protocol's minimum holds, as the page asks; without a minimum
    their random answers include ones with fewer."""
    import random
    from types import SimpleNamespace

    from study_app.web.registry import LoadPage
    from study_app.web.render_elicitation import (
        CANNOT,
        load_elicitation_binary,
        load_elicitation_likert,
    )

    names = ["loan_amount", "loan_duration", "income", "savings"]
    radio = SimpleNamespace(type="radio", options=["1 · very easy", "2", "3", "4 · very hard",
                                                   CANNOT])
    screen = SimpleNamespace(widgets={f"elicitation:{n}": radio for n in names}
                             | {"elicitation:submit": SimpleNamespace(type="button")})
    for least, edit in ((3, ("scheme: ranking", "scheme: binary, min_changeable: 3")),
                        (0, ("scheme: ranking", "scheme: binary"))):
        protocol = load_protocol(small_protocol_file(edit))
        counts = []
        for load in (load_elicitation_binary, load_elicitation_likert):
            for seed in range(40):
                page = LoadPage("elicitation", screen, protocol, random.Random(seed),
                                press=None)  # type: ignore[arg-type]
                shown, answer = load(page)
                counts.append(pg.elicitation.changeable(answer["answers"]))
                assert set(answer["answers"]) == set(names) == set(shown)
        assert (min(counts) >= 3) if least else (min(counts) < 3)
