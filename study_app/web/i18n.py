"""The participant's language in the web app: which translator this browser session shows
pages with, where it comes from, and the first page's choice.

- A recruitment link may carry the language (``?lang=ja``): a participant starts in it. A
  language the study is not offered in gets a clear page, in every language the study is
  offered in, and nothing is stored (``LinkError``).
- On the first page (consent), a study offered in several languages shows a choice; the
  participant's choice is stored with them (``ParticipantSession.choose_language``) and
  every answer carries it (``responses.language``, ``ratings.language``).
- Every participant page declares the participant's language (``declare_language``).
- Renderers show every text through ``t`` (an English text as shown), ``level`` (an item's
  option), ``ui`` (an interface text) and ``number`` (protocols.definition.translation.Translator).
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence

import streamlit as st

from protocols.definition.translation import Translator
from protocols.running.session import ParticipantSession
from study_app.web.links import LinkError, single

LANG_PARAM = "lang"
_KEY = "rs_translator"
_ENGLISH = Translator("en")


def current() -> Translator:
    """The translator of this browser session's participant (English before one is known)."""
    found = st.session_state.get(_KEY)
    return found if isinstance(found, Translator) else _ENGLISH


def use(translator: Translator) -> None:
    st.session_state[_KEY] = translator


def declare_language(language: str) -> None:
    """The page's ``<html lang>`` set to the participant's language (WCAG 3.1.1: a screen
    reader reads Japanese as Japanese). Streamlit's page declares "en" and has no setting
    for it, so a small script sets it; the element changes with the language, so the script
    runs again when the participant chooses another one."""
    code = json.dumps(language.replace("_", "-"))
    st.html(f"<script>/* rs-lang {html.escape(language)} */ document.documentElement.lang = "
            f"{code};</script>", unsafe_allow_javascript=True)


def t(english: str) -> str:
    return current().text(english)


def level(english: str) -> str:
    return current().level(english)


def ui(key: str, **fields: object) -> str:
    return current().ui(key, **fields)


def link_language(params: Mapping[str, Sequence[str]],
                  offered: Mapping[str, Translator]) -> str | None:
    """The language a link asks for (None: none); LinkError, in every offered language,
    for one the study is not offered in."""
    asked = single(params, LANG_PARAM)
    if asked is None or asked in offered:
        return asked
    names = ", ".join(f"{tr.name} ({code})" for code, tr in offered.items())
    raise LinkError("\n\n".join(tr.ui("error.language", language=asked, languages=names)
                                for tr in offered.values()))


def language_choice(session: ParticipantSession, offered: Mapping[str, Translator]) -> None:
    """The choice of language on the first page (module docstring); reruns on a change."""
    if len(offered) < 2:
        return
    codes = list(offered)
    label = " / ".join(dict.fromkeys(tr.ui("language") for tr in offered.values()))
    chosen = st.radio(label, codes, index=codes.index(session.language), horizontal=True,
                      format_func=lambda c: offered[c].name, key="rs-language")
    if chosen != session.language:
        session.choose_language(chosen)
        use(offered[chosen])
        st.rerun()
