"""A participant in a real browser (Playwright): reads the current page from the DOM, fills
it the way a person does (clicks, typing) and records what it answered.

The app marks every page with ``.rs-progress[data-page][data-kind]`` and keys every widget
(Streamlit renders a key ``plan-1:acceptance`` as the class ``st-key-plan-1-acceptance``),
so the bot needs no knowledge of the server's state. ``expected`` answers follow the same
choices as ``apptest_driver.chosen_answer`` and are what the database must hold afterwards.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from apptest_driver import REASON
from playwright.sync_api import Page

from protocols.definition.schema import Protocol
from protocols.definition.translation import Translator

LONG_REASON = "long " * 400  # 2000 characters, more than any reason may have
_PROGRESS = ".rs-progress"


def key_class(key: str) -> str:
    """The CSS class Streamlit gives the container of the widget with this key."""
    return ".st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key)


def wait_script_done(page: Page, timeout_ms: float) -> None:
    """Wait until the app's script run has finished, so every element of the page is drawn.

    A page's first marker can appear while the rest of it is still arriving (the pause page
    was read once with its text not yet drawn); Streamlit marks its root with the run state.
    """
    page.wait_for_function(
        "() => document.querySelector(\"[data-testid='stApp']\")"
        "?.dataset.testScriptState === 'notRunning'", timeout=timeout_ms)


def button(key: str) -> str:
    """Selector of the button with this key (not its tooltip's)."""
    return f"{key_class(key)} button[data-testid^='stBaseButton']:visible >> nth=0"


@dataclass
class Step:
    page_id: str
    kind: str
    answer: dict[str, Any] | None
    seconds: float  # from the click on Continue to the next page being ready
    clicked: float = float("nan")  # time.perf_counter() of the click


@dataclass
class BrowserParticipant:
    page: Page
    protocol: Protocol
    timeout_ms: float = 60_000
    long_text_on: str | None = None  # page id whose second reason is pasted over-long
    too_long_told: list[str] = field(default_factory=list)  # the messages that refused it
    reasons: list[str] = field(default_factory=list)  # typed as the reasons, in order
    steps: list[Step] = field(default_factory=list)
    profile: dict[str, Any] = field(default_factory=dict)  # entered values (else defaults)
    translator: Translator = field(default_factory=lambda: Translator("en"))  # pages' language

    # ---- reading the page ----------------------------------------------------------------
    def current(self) -> tuple[str, str]:
        el = self.page.locator(_PROGRESS)
        el.wait_for(timeout=self.timeout_ms)
        return el.get_attribute("data-page") or "", el.get_attribute("data-kind") or ""

    def _ready(self, page_id: str, kind: str) -> None:
        """Wait until the page's own controls are rendered (not the previous page's)."""
        if kind in ("debrief", "end", "pause"):
            self.page.locator({"debrief": ".rs-code", "end": "p", "pause": "[data-testid="
                               "'rs-pause']"}[kind]).first.wait_for(
                state="attached", timeout=self.timeout_ms)  # the pause's marker is empty
            wait_script_done(self.page, self.timeout_ms)
            return
        self.page.locator(button(f"{page_id}:submit")).wait_for(
            timeout=self.timeout_ms)
        # and no widget is still a placeholder (Streamlit loads widget code lazily)
        self.page.wait_for_function(
            "() => !document.querySelector('[data-testid^=\"stSkeleton\"]')",
            timeout=self.timeout_ms)
        wait_script_done(self.page, self.timeout_ms)

    def wait_page(self, previous: str | None) -> tuple[str, str]:
        """The next page (different from ``previous``) once it is ready."""
        self.page.wait_for_function(
            "prev => { const e = document.querySelector('.rs-progress');"
            " return e !== null && e.dataset.page !== prev; }",
            arg=previous or "", timeout=self.timeout_ms)
        page_id, kind = self.current()
        self._ready(page_id, kind)
        return page_id, kind

    def open(self, url: str) -> tuple[str, str]:
        self.page.goto(url)
        return self.wait_page(None)

    def token(self) -> str:
        m = re.search(r"[?&]p=([A-Za-z0-9_-]+)", self.page.url)
        assert m, self.page.url
        return m.group(1)

    # ---- answering -----------------------------------------------------------------------
    def _radio(self, key: str, *, index: int | None = None, text: str | None = None) -> None:
        options = self.page.locator(f"{key_class(key)} [data-testid='stRadioOption']")
        if text is not None:
            shown = self.translator.text(text)
            options.filter(has_text=re.compile(rf"^\s*{re.escape(shown)}\s*$")).first.click()
        else:
            options.nth(index or 0).click()

    def _keys_with_prefix(self, prefix: str) -> list[str]:
        """Widget keys (as class suffixes) starting with ``prefix``, in page order."""
        cls = key_class(prefix)[1:]
        return self.page.eval_on_selector_all(
            f"[class*='{cls}']",
            "(els, cls) => els.flatMap(e => [...e.classList].filter(c => c.startsWith(cls)))",
            cls)

    def fill(self, page_id: str, kind: str) -> dict[str, Any] | None:
        """Answer the current page; the answer the session should store."""
        pr = self.protocol
        if kind == "consent":
            self._radio(f"{page_id}:agree", index=0)
            return {"agree": True}
        if kind == "screening":
            answers = {}
            for q in pr.screening:
                key = f"{page_id}:{q.id}"
                answers[q.id] = value = screening_answer(pr, q, self.profile)
                if q.kind == "multiple":  # "select all": one checkbox per option
                    for option in value:
                        box = self.page.locator(key_class(f"{key}:{q.options.index(option)}"))
                        box.locator("label").click()
                elif q.kind == "number":
                    box = self.page.locator(key_class(key))
                    box.locator("input").fill(str(value))
                    box.locator("input").press("Tab")
                else:
                    self._radio(key, text=value)
            return {"answers": answers}
        if kind in ("scenario", "persona", "decision"):
            return {}
        if kind == "profile_entry":
            return self._profile(page_id)
        if kind == "elicitation_ranking":
            return self._rank(page_id)
        if kind in ("elicitation_binary", "elicitation_likert"):
            return self._elicit(page_id, kind)
        if kind == "plan":
            return self._plan(page_id)
        if kind == "attention":
            check = next(c for c in pr.attention_checks if f"attention-{c.id}" == page_id)
            self._radio(f"{page_id}:choice", text=check.correct)
            return {"choice": check.correct}
        if kind == "hare_choice":
            q = int(page_id.split("-")[1])
            self._radio(f"{page_id}:choice", index=q % 2)
            return {"choice": q % 2}
        if kind == "hare_accept":
            self._radio(f"{page_id}:accept", index=1)
            return {"accept": False}
        raise AssertionError(f"the browser participant cannot answer a {kind} page")

    def _profile(self, page_id: str) -> dict[str, Any]:
        """Every item as ``profile`` says, else 30% of the way through its range (a middle
        category)."""
        from engine.scenarios import get_scenario
        from protocols.running.display import profile_fields

        values: dict[str, Any] = {}
        for f in profile_fields(get_scenario(self.protocol.scenario)):
            if f.feature in self.protocol.profile.from_screening:
                continue  # answered as a bracket at screening
            box = self.page.locator(key_class(f"{page_id}:{f.feature}"))
            if f.kind == "category":
                choice = self.profile.get(f.feature, f.options[len(f.options) // 2])
                box.get_by_role("combobox").click()
                self.page.get_by_role("option", name=self.translator.level(choice),
                                      exact=True).click()
                values[f.feature] = choice
            else:
                v = round(self.profile.get(f.feature, f.min + 0.3 * (f.max - f.min)),
                          f.decimals)
                box.locator("input").fill(f"{v:.{f.decimals}f}")
                box.locator("input").press("Tab")
                values[f.feature] = float(v)
        return {"values": values}

    def _elicit(self, page_id: str, kind: str) -> dict[str, Any]:
        """Binary: every third item "No"; likert: the first item "cannot", others 1, 2, ..."""
        prefix = key_class(f"{page_id}:")[1:]
        items = [c[len(prefix):] for c in self._keys_with_prefix(f"{page_id}:")
                 if not c.endswith("-submit")]
        answers: dict[str, Any] = {}
        for k, item in enumerate(items):
            options = self.page.locator(f".{prefix}{item} [data-testid='stRadioOption']")
            if kind == "elicitation_binary":
                answers[item] = k % 3 != 1
                options.nth(1 if answers[item] else 0).click()  # options: No, Yes
            else:
                n = options.count()  # 1..levels, then "I cannot change this"
                answers[item] = None if k == 0 else 1 + k % (n - 1)
                options.nth(n - 1 if k == 0 else answers[item] - 1).click()
        return {"answers": answers}

    def _rank(self, page_id: str) -> dict[str, Any]:
        """Move the first item down once and mark the last one "cannot change"."""
        prefix = key_class(f"{page_id}:ranking:down:")[1:]
        names = [c[len(prefix):] for c in self._keys_with_prefix(f"{page_id}:ranking:down:")]
        first, last = names[0], names[-1]
        self.page.locator(button(f"{page_id}:ranking:down:{first}")).click()
        self.page.locator(key_class(f"{page_id}:ranking:up:{first}") + " button:enabled:visible >> nth=0") \
            .wait_for(timeout=self.timeout_ms)
        self.page.locator(button(f"{page_id}:ranking:off:{last}")).click()
        self.page.locator(button(f"{page_id}:ranking:on:{last}")) \
            .wait_for(timeout=self.timeout_ms)
        order = names[1:2] + names[:1] + names[2:-1]
        answers: dict[str, Any] = {n: order.index(n) + 1 for n in order}
        answers[last] = None
        return {"answers": answers}

    def _plan(self, page_id: str) -> dict[str, Any]:
        k = int(page_id.split("-")[1])
        acceptance, action = 1 + k % 7, 7 - k % 7
        self._radio(f"{page_id}:acceptance", index=acceptance - 1)
        prefix = key_class(f"{page_id}:impossible:")[1:]
        items = [c[len(prefix):] for c in self._keys_with_prefix(f"{page_id}:impossible:")]
        impossible = {}
        for j, item in enumerate(items):
            self._radio(f"{page_id}:impossible:{item}", index=1 if j == 0 else 0)
            impossible[item] = j == 0
        self._radio(f"{page_id}:action", index=action - 1)
        why = self.page.locator(f"{key_class(page_id + ':acceptance_why')} textarea")
        answer: dict[str, Any] = {"acceptance": acceptance, "action": action,
                                  "acceptance_why": "", "action_why": "",
                                  "impossible": impossible}
        if why.count():
            first = self.reasons.pop(0) if self.reasons else REASON
            why.fill(first)
            second = self.page.locator(f"{key_class(page_id + ':action_why')} textarea")
            if self.reasons:
                text = self.reasons.pop(0)
                second.fill(text)
            elif page_id == self.long_text_on:
                # Paste past the limit: the box keeps the paste, Continue says how long it
                # is and how long it may be (beside the box and in the summary); shortened
                # to the limit it is taken.
                limit = self.protocol.questions.why.max_chars
                pasted = LONG_REASON[:limit] + "overflow"
                second.click()
                self.page.keyboard.insert_text(pasted)
                self._press(page_id)
                told = self.translator.ui("too_long", n=f"{len(pasted):,}", max=f"{limit:,}")
                self.page.locator("[data-testid='rs-missing']").filter(has_text=told) \
                    .first.wait_for(timeout=self.timeout_ms)
                self.too_long_told.append(told)
                text = LONG_REASON[:limit]
                second.fill(text)
            else:
                text = f"Reason {k}"
                second.fill(text)
            answer["acceptance_why"] = first.strip()
            answer["action_why"] = text.strip()
        return answer

    def submit(self, page_id: str) -> tuple[str, str]:
        """Press Continue; the next page once it is ready (timed into ``steps``)."""
        start = self._press(page_id)
        nxt = self.wait_page(page_id)
        self.steps[-1].seconds = time.perf_counter() - start
        self.steps[-1].clicked = start
        return nxt

    def _press(self, page_id: str) -> float:
        """Click the page's Continue once it takes clicks; when it was clicked."""
        target = self.page.locator(button(f"{page_id}:submit"))
        # The app ignores clicks on a page's button for its first half second (double-click
        # guard); time from the moment it takes clicks.
        target.evaluate("el => Promise.all(el.getAnimations().map(a => a.finished))")
        start = time.perf_counter()
        target.click()
        return start

    def answer_page(self, page_id: str, kind: str) -> tuple[str, str]:
        answer = self.fill(page_id, kind)
        self.steps.append(Step(page_id, kind, answer, float("nan")))
        return self.submit(page_id)

    def run(self, until: str | None = None, start: tuple[str, str] | None = None
            ) -> tuple[str, str]:
        """Answer pages until a terminal page or a pause between sessions (or until page
        ``until`` is current)."""
        page_id, kind = start or self.current()
        while kind not in ("debrief", "end", "pause") and page_id != until:
            page_id, kind = self.answer_page(page_id, kind)
        return page_id, kind


def screening_answer(protocol: Any, q: Any, profile: dict[str, Any]) -> Any:
    """An eligible answer to screening question ``q``; a bracket that feeds the profile
    (``profile.from_screening``) is the one holding ``profile``'s value of that feature."""
    feature = next((f for f, qid in protocol.profile.from_screening.items() if qid == q.id),
                   None)
    if feature is not None and feature in profile:
        held = q.option_holding(float(profile[feature]))
        if held is not None:
            return held
    return q.example_answer()
