"""Drive the participant app through Streamlit's AppTest the way a person fills the forms.

``AppDriver`` runs ``study_app/web/app.py`` in-process against a configured study, reads the
current page from the session (the same Study object the app serves), sets the page's
widgets to a chosen answer, presses the page's button and returns what the app stored.
``chosen_answer(page)`` picks a varied, valid answer for every page kind; the tests compare
it with what the database holds, so a renderer that maps a widget to the wrong answer field
fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

from protocols.definition.schema import Protocol
from protocols.running import pages as pg
from protocols.running.session import ParticipantSession, Study
from study_app.web import runtime
from study_app.web.render_elicitation import CANNOT
from study_app.web.render_intro import AGREE, DISAGREE
from study_app.web.render_plan import ACCEPT, GO_ON, OPTION_LABELS

APP = Path(__file__).resolve().parents[2] / "study_app" / "web" / "app.py"
REASON = "Plausible <b>but</b> hard; '; DROP TABLE ratings;-- été 😀"


def configure(monkeypatch: Any, protocol: str, db: Path, **env: str) -> None:
    """Point the app at ``protocol`` and ``db`` (what `serve` does through the environment)."""
    monkeypatch.setenv(runtime.PROTOCOL_ENV, protocol)
    monkeypatch.setenv(runtime.DB_ENV, str(db))
    for name in (runtime.STUDY_ID_ENV, runtime.DECISION_ENV, runtime.COMPLETION_URL_ENV,
                 runtime.REQUIRE_ID_ENV, runtime.SESSION_PARAM_ENV, runtime.ID_PARAM_ENV,
                 runtime.HASH_PARAMS_ENV):
        monkeypatch.delenv(name, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)


def chosen_answer(page: pg.Page, protocol: Protocol, *, eligible: bool = True,
                  agree: bool = True) -> dict[str, Any]:
    """A valid answer a participant might give (varied across items, not all defaults)."""
    p = page.payload
    kind = page.kind
    if kind == "consent":
        return {"agree": agree}
    if kind == "screening":
        spec = {q.id: q for q in protocol.screening}
        answers: dict[str, Any] = {}
        for q in p.questions:
            s = spec[q.id]
            answers[q.id] = s.example_answer()
            if not eligible and s.kind != "number":
                other = next(o for o in q.options if o not in s.eligible)
                answers[q.id] = [other] if s.kind == "multiple" else other
        return {"answers": answers}
    if kind in ("scenario", "persona", "decision"):
        return {}
    if kind == "profile_entry":
        values: dict[str, Any] = {}
        for f in p.fields:
            if f.kind == "category":
                values[f.feature] = f.options[len(f.options) // 2]
            else:
                values[f.feature] = round(f.min + 0.3 * (f.max - f.min), f.decimals)
                if f.decimals == 0:
                    values[f.feature] = float(int(values[f.feature]))
        return {"values": values}
    if kind == "elicitation_binary":
        return {"answers": {i.feature: k % 3 != 1 for k, i in enumerate(p.items)}}
    if kind == "elicitation_ranking":
        # what the ranking widget yields after: first item moved down once, last item marked
        # "cannot change" (see AppDriver._fill)
        names = [i.feature for i in p.items]
        order = names[1:2] + names[:1] + names[2:-1]
        out: dict[str, Any] = {n: order.index(n) + 1 for n in order}
        out[names[-1]] = None
        return {"answers": out}
    if kind == "elicitation_likert":
        return {"answers": {i.feature: (None if k == 0 else 1 + k % (p.levels or 5))
                            for k, i in enumerate(p.items)}}
    if kind == "plan":
        return {"acceptance": 1 + page.payload.number % 7, "action": 7 - page.payload.number % 7,
                "acceptance_why": REASON if p.why else "",
                "action_why": f"Reason {page.payload.number}" if p.why else "",
                "impossible": {i.feature: k == 0 for k, i in enumerate(p.impossible)}}
    if kind == "attention":
        check = next(c for c in protocol.attention_checks if f"attention-{c.id}" == page.id)
        return {"choice": check.correct}
    if kind == "hare_choice":
        return {"choice": page.payload.query % 2}
    if kind == "hare_accept":
        return {"accept": False}
    raise AssertionError(f"no answer for a {kind} page")


class AppDriver:
    """One browser session of the participant app (AppTest)."""

    def __init__(self, query: dict[str, str] | None = None, timeout: float = 60) -> None:
        self.at = AppTest.from_file(str(APP), default_timeout=timeout)
        for k, v in (query or {}).items():
            self.at.query_params[k] = v
        self.at.run()

    @property
    def study(self) -> Study:
        return runtime.build_study(runtime.from_env())

    @property
    def token(self) -> str:
        value = self.at.query_params["p"]
        return value[0] if isinstance(value, list) else value

    @property
    def session(self) -> ParticipantSession:
        return self.study.resume(self.token)

    def page(self) -> pg.Page:
        return self.session.current_page()

    def texts(self) -> str:
        parts = [e.value for e in self.at.markdown] + [e.value for e in self.at.error]
        parts += [str(h.proto.body) for h in self.at.get("html")]
        return "\n".join(parts)

    def errors(self) -> list[str]:
        return [e.value for e in self.at.error]

    def shown_page(self) -> str | None:
        """The page the app drew last (None when it drew none, e.g. after an error)."""
        state = self.at.session_state
        return state["rs_shown_page"] if "rs_shown_page" in state else None

    def _fill(self, page: pg.Page, answer: dict[str, Any]) -> None:
        at, pid, p = self.at, page.id, page.payload
        kind = page.kind
        if kind == "consent":
            at.radio(key=f"{pid}:agree").set_value(AGREE if answer["agree"] else DISAGREE)
        elif kind == "screening":
            for q in p.questions:
                v = answer["answers"][q.id]
                if q.kind == "multiple":
                    for i, option in enumerate(q.options):
                        at.checkbox(key=f"{pid}:{q.id}:{i}").set_value(option in v)
                elif q.kind == "number":
                    at.number_input(key=f"{pid}:{q.id}").set_value(v)
                else:
                    at.radio(key=f"{pid}:{q.id}").set_value(v)
        elif kind == "profile_entry":
            for f in p.fields:
                v = answer["values"][f.feature]
                if f.kind == "category":
                    at.selectbox(key=f"{pid}:{f.feature}").set_value(v)
                else:
                    at.number_input(key=f"{pid}:{f.feature}").set_value(v)
        elif kind == "elicitation_binary":
            for k, v in answer["answers"].items():
                at.radio(key=f"{pid}:{k}").set_value("Yes" if v else "No")
        elif kind == "elicitation_likert":
            for k, v in answer["answers"].items():
                at.radio(key=f"{pid}:{k}").set_value(CANNOT if v is None else v)
        elif kind == "elicitation_ranking":
            names = [i.feature for i in p.items]
            at.button(key=f"{pid}:ranking:down:{names[0]}").click().run()
            at.button(key=f"{pid}:ranking:off:{names[-1]}").click().run()
        elif kind == "plan":
            at.radio(key=f"{pid}:acceptance").set_value(answer["acceptance"])
            at.radio(key=f"{pid}:action").set_value(answer["action"])
            if p.why is not None:
                at.text_area(key=f"{pid}:acceptance_why").input(answer["acceptance_why"])
                at.text_area(key=f"{pid}:action_why").input(answer["action_why"])
            for f, v in answer["impossible"].items():
                at.radio(key=f"{pid}:impossible:{f}").set_value("Yes" if v else "No")
        elif kind == "attention":
            at.radio(key=f"{pid}:choice").set_value(answer["choice"])
        elif kind == "hare_choice":
            at.radio(key=f"{pid}:choice").set_value(OPTION_LABELS[answer["choice"]])
        elif kind == "hare_accept":
            at.radio(key=f"{pid}:accept").set_value(ACCEPT if answer["accept"] else GO_ON)

    def answer(self, page: pg.Page, answer: dict[str, Any]) -> None:
        """Fill ``page`` with ``answer`` and press its button."""
        self._fill(page, answer)
        self.at.button(key=f"{page.id}:submit").click().run()

    def stored(self, page_id: str) -> dict[str, Any] | None:
        """The answer the database holds for this participant's page (None if none)."""
        study = self.study
        rows = study.store.query(
            "SELECT answer_json FROM responses WHERE study_id = ? AND participant_id = ? AND "
            "page_id = ?", [study.study_id, self.session.participant_id, page_id])
        return json.loads(rows[0]["answer_json"]) if rows else None

    def walk(self, protocol: Protocol, **choices: Any) -> list[tuple[pg.Page, dict[str, Any]]]:
        """Answer every page until a terminal one; the (page, answer) pairs given."""
        done = []
        page = self.page()
        while not page.terminal:
            assert self.shown_page() == page.id, (self.shown_page(), page.id, self.errors())
            answer = chosen_answer(page, protocol, **choices)
            self.answer(page, answer)
            assert not self.at.exception, self.at.exception
            assert not self.errors(), (page.id, self.errors())
            done.append((page, answer))
            page = self.page()
        assert self.shown_page() == page.id
        return done
