"""Survey controls: ranking widget, 7-point scale, free text cleaning (AppTest)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from study_app.web.widgets import clean_text


def _ranking_app() -> None:
    import streamlit as st

    from study_app.web.widgets import ranking

    out = ranking(
        [("a", "Alpha"), ("b", "Beta"), ("c", "Gamma")], "rk", cannot_label="I cannot change this"
    )
    st.session_state["result"] = out


def _button(at: AppTest, key: str):
    return next(b for b in at.button if b.key == key)


def test_ranking_moves_and_marks_cannot() -> None:
    at = AppTest.from_function(_ranking_app).run()
    assert at.session_state["result"] == {"a": 1, "b": 2, "c": 3}
    _button(at, "rk:down:a").click().run()
    assert at.session_state["result"] == {"b": 1, "a": 2, "c": 3}
    _button(at, "rk:up:c").click().run()
    assert at.session_state["result"] == {"b": 1, "c": 2, "a": 3}
    _button(at, "rk:off:c").click().run()
    assert at.session_state["result"] == {"b": 1, "a": 2, "c": None}
    # The first item cannot move up, the last active one cannot move down.
    assert _button(at, "rk:up:b").disabled
    assert _button(at, "rk:down:a").disabled
    _button(at, "rk:on:c").click().run()
    assert at.session_state["result"] == {"b": 1, "a": 2, "c": 3}


def _scale_app() -> None:
    import streamlit as st

    from study_app.web.widgets import seven_point

    st.session_state["v"] = seven_point("Q?", ("Strongly no", "Strongly yes"), "s")


def test_seven_point_starts_empty_with_labelled_ends() -> None:
    at = AppTest.from_function(_scale_app).run()
    radio = at.radio[0]
    assert radio.value is None
    assert radio.options[0].startswith("1") and "Strongly no" in radio.options[0]
    assert "Strongly yes" in radio.options[-1]
    radio.set_value(5).run()
    assert at.session_state["v"] == 5


def test_clean_text_keeps_markup_and_unicode_drops_controls() -> None:
    assert clean_text("  <b>hi</b>'; DROP TABLE ratings;--  ") == "<b>hi</b>'; DROP TABLE ratings;--"
    assert clean_text("e\u0301t\u00e9 \U0001f600\x00\x07") == "\u00e9t\u00e9 \U0001f600"
    assert clean_text("line1\nline2\ttab") == "line1\nline2\ttab"
