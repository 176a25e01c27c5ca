"""A participant who uses only the keyboard (Tab, Shift+Tab, Space, Enter, arrow keys and
typing): no mouse click, no ``fill``. It reads the DOM to decide (which control has focus,
which options it offers), the way a sighted keyboard user reads the screen, and acts only
through key presses, which it counts.

On every new page it first checks that focus moved to the page heading (the page frame,
``study_app.web.style.page_heading``), then tabs through the page in focus order: radio
groups are answered with Space or arrow keys, text boxes are typed into, a select box is
opened by typing an option and Enter, the ranking's buttons and Continue are pressed with
Enter. ``on_page(page_id, kind)`` is called once a page is ready (the axe scan hooks in
there).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from apptest_driver import REASON
from browser_participant import key_class, screening_answer, wait_script_done
from playwright.sync_api import Page

from protocols.definition.schema import Protocol

_FOCUS_INFO = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return {tag: 'body'};
  const holder = el.closest('[class*="st-key-"]');
  const key = holder ? [...holder.classList].find(c => c.startsWith('st-key-')).slice(7) : null;
  const info = {tag: el.tagName.toLowerCase(), type: el.type || '', role: el.getAttribute('role'),
                key, text: (el.innerText || el.value || '').trim(), disabled: !!el.disabled,
                heading: /^H[1-6]$/.test(el.tagName)};
  // the focus ring: on the control, or on the label of a visually hidden radio
  const ringed = [el, el.closest('label')].filter(Boolean).map(e => getComputedStyle(e));
  info.ring = Math.max(...ringed.map(c => c.outlineStyle === 'none' ? 0
                                          : parseFloat(c.outlineWidth)));
  const group = el.closest('[role="radiogroup"]');
  if (group) {
    const radios = [...group.querySelectorAll('input[type="radio"]')];
    info.options = radios.map(r => (r.closest('label') || r.parentElement).innerText.trim());
    info.focused = radios.indexOf(el);
    info.checked = radios.findIndex(r => r.checked);
    info.vertical = group.getAttribute('aria-orientation') === 'vertical';
    info.group_name = group.getAttribute('aria-label');
  }
  return info;
}"""


SEND_SEEN_MS = 15_000  # how long sent_back waits to see the send's run end
_WATCH_RUN = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  window.__rsSend = 'sent';
  if (window.__rsWatch) window.__rsWatch.disconnect();
  // a run that starts and ends between two callbacks is seen through the old values
  window.__rsWatch = new MutationObserver(records => {
    for (const r of records) if (r.oldValue === 'running') window.__rsSend = 'done';
    if (window.__rsSend !== 'done' && app.dataset.testScriptState === 'running')
      window.__rsSend = 'running';
  });
  window.__rsWatch.observe(app, {attributes: true, attributeOldValue: true,
                                 attributeFilter: ['data-test-script-state']});
}"""


@dataclass
class KeyboardParticipant:
    page: Page
    protocol: Protocol
    timeout_ms: float = 60_000
    profile: dict[str, Any] = field(default_factory=dict)  # values typed on profile_entry
    on_page: Callable[[str, str], None] | None = None
    keys: int = 0  # key presses: Tab, Shift+Tab, Space, Enter, arrows
    typed: int = 0  # characters typed into text and number boxes (one key press each)
    pages: list[str] = field(default_factory=list)
    radio_groups: list[str] = field(default_factory=list)  # accessible names met
    no_ring: list[str] = field(default_factory=list)  # controls focused without a 2px ring
    leave_out: set[str] = field(default_factory=set)  # questions tabbed past unanswered
    resent: list[str] = field(default_factory=list)  # pages sent back with a question left
    # out, answered again from where the page put focus
    first_tab_elsewhere: list[str] = field(default_factory=list)  # pages whose first Tab
    # (from the heading) did not reach one of the page's own controls

    # ---- keys --------------------------------------------------------------------------
    def press(self, key: str, times: int = 1) -> None:
        for _ in range(times):
            self.page.keyboard.press(key)
            self.keys += 1

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)
        self.typed += len(text)

    def focus(self) -> dict[str, Any]:
        return self.page.evaluate(_FOCUS_INFO)

    # ---- pages -------------------------------------------------------------------------
    def wait_page(self, previous: str | None) -> tuple[str, str]:
        try:
            self.page.wait_for_function(
                "prev => { const e = document.querySelector('.rs-progress');"
                " return e !== null && e.dataset.page !== prev; }",
                arg=previous or "", timeout=self.timeout_ms)
        except Exception as e:
            errors = self.page.locator("[data-testid='stAlert']").all_inner_texts()
            raise AssertionError(f"no new page after {previous} (messages {errors}, focus "
                                 f"{self.focus()})") from e
        el = self.page.locator(".rs-progress")
        page_id, kind = el.get_attribute("data-page") or "", el.get_attribute("data-kind") or ""
        if kind not in ("debrief", "end"):
            self.page.locator(key_class(f"{page_id}:submit") + " button").first.wait_for(
                timeout=self.timeout_ms)
        self.page.wait_for_function(
            "() => !document.querySelector('[data-testid^=\"stSkeleton\"]')",
            timeout=self.timeout_ms)
        wait_script_done(self.page, self.timeout_ms)
        # focus moved to the new page's heading (the page frame's script)
        self.page.wait_for_function(
            "() => { const e = document.activeElement;"
            " return e && /^H[1-6]$/.test(e.tagName); }", timeout=self.timeout_ms)
        self.pages.append(page_id)
        if self.on_page is not None:
            self.on_page(page_id, kind)
        return page_id, kind

    def open(self, url: str) -> tuple[str, str]:
        self.page.goto(url)
        return self.wait_page(None)

    def run(self, start: tuple[str, str]) -> tuple[str, str]:
        """Answer pages by keyboard until a terminal page. A page sent back with a question
        marked unanswered is answered again from where focus lands (``resend``)."""
        page_id, kind = start
        while kind not in ("debrief", "end"):
            self.answer(page_id, kind)
            for _ in range(2):
                if not self.sent_back(page_id):
                    break
                self.resend(page_id, kind)
            page_id, kind = self.wait_page(page_id)
        return page_id, kind

    def _send(self) -> None:
        """Press Enter on Continue, watching the app's script state so ``sent_back`` reads
        the page the send produced: a page sent back a second time still shows the first
        send's marker until the app's run for this send has finished."""
        wait_script_done(self.page, self.timeout_ms)
        self.page.evaluate(_WATCH_RUN)
        self.press("Enter")

    def sent_back(self, page_id: str) -> bool:
        """Whether the page came back with a question marked unanswered (else a new page
        is on its way)."""
        moved = ("prev => { const e = document.querySelector('.rs-progress');"
                 " return e !== null && e.dataset.page !== prev; }")
        marked = "document.querySelector('[data-testid=\"rs-missing\"]') !== null"
        try:  # this send's run seen to finish
            self.page.wait_for_function(
                f"prev => ({moved})(prev) || (window.__rsSend === 'done' && {marked})",
                arg=page_id, timeout=SEND_SEEN_MS)
        except Exception:  # noqa: BLE001 - a run whose two states React drew as one
            self.page.wait_for_function(f"prev => ({moved})(prev) || {marked}", arg=page_id,
                                        timeout=self.timeout_ms)
        return self.page.locator("[data-testid='rs-missing']").count() > 0 and \
            self.page.locator(".rs-progress").get_attribute("data-page") == page_id

    def resend(self, page_id: str, kind: str) -> None:
        """What a keyboard user does with a page sent back: focus is on the first question
        left out (the page moves it there); answer from there and send again."""
        self.page.wait_for_function(
            "prefix => { const h = document.activeElement &&"
            " document.activeElement.closest('[class*=\"st-key-\"]');"
            " return h && [...h.classList].some(c => c.startsWith('st-key-' + prefix)); }",
            arg=re.sub(r"[^a-zA-Z0-9_-]", "-", page_id + ":"), timeout=self.timeout_ms)
        self.resent.append(page_id)
        self.answer(page_id, kind, from_focus=True)

    # ---- one page ------------------------------------------------------------------------
    def _radio_choice(self, page_id: str, kind: str, key: str, options: list[str]) -> int:
        """The option index to choose in the radio group ``key`` (the same answers as
        browser_participant where it matters)."""
        pr = self.protocol
        if kind == "consent":
            return 0  # "I agree to take part"
        if kind == "screening":
            q = next(q for q in pr.screening if key.endswith("-" + q.id))
            return list(q.options).index(screening_answer(pr, q, self.profile))
        if kind == "attention":
            check = next(c for c in pr.attention_checks if f"attention-{c.id}" == page_id)
            return list(check.options).index(check.correct)
        if kind == "hare_choice":
            return int(page_id.split("-")[1]) % 2
        if kind == "hare_accept":
            return 1  # keep looking
        if kind == "plan":
            k = int(page_id.split("-")[1])
            if key.endswith("-acceptance"):
                return k % 7
            if key.endswith("-action"):
                return 6 - k % 7
            return 0  # impossible? No
        return min(1, len(options) - 1)  # elicitation: Yes / 2

    def answer(self, page_id: str, kind: str, *, from_focus: bool = False) -> None:
        """Tab through the page answering every control, then press Enter on Continue
        (``from_focus``: start with the control that has focus now, not with a Tab)."""
        prefix = re.sub(r"[^a-zA-Z0-9_-]", "-", page_id + ":")
        done: set[str] = set()
        ranking: list[str] = []  # items of a ranking page, in the order shown
        if kind == "elicitation_ranking":
            ranking = self.page.eval_on_selector_all(
                f"[class*='st-key-{prefix}ranking-down-']",
                "els => els.flatMap(e => [...e.classList].filter(c =>"
                " c.includes('ranking-down-')).map(c => c.split('ranking-down-')[1]))")
        for tab in range(400):
            if not (from_focus and tab == 0):
                self.press("Tab")
            f = self.focus()
            key = f.get("key") or ""
            if tab == 0 and not from_focus and not key.startswith(prefix):
                self.first_tab_elsewhere.append(f"{page_id}: {f}")
            if not key.startswith(prefix):
                continue
            name = key[len(prefix):]
            if name in self.leave_out:
                continue
            if f["ring"] < 2:
                self.no_ring.append(f"{page_id}: {f['tag']} {name}")
            if f.get("options") is not None:
                if key in done:
                    continue
                self.radio_groups.append(f.get("group_name") or "")
                want = self._radio_choice(page_id, kind, key, f["options"])
                self._choose(f, want)
                done.add(key)
            elif f["tag"] == "textarea" and key not in done:
                self.type(REASON)
                done.add(key)
            elif f["tag"] == "input" and f.get("role") == "combobox" and key not in done:
                option = self.profile[name]
                self.type(option)
                self.see_offered(option)
                self.press("Enter")
                self.see_chosen(option)
                done.add(key)
            elif f["tag"] == "input" and f["type"] in ("number", "text") and key not in done:
                q = self._question(name) if kind == "screening" else None
                self.type(str(q.example_answer() if q is not None else self.profile[name]))
                done.add(key)
            elif f["tag"] == "input" and f["type"] == "checkbox" and key not in done:
                qid, index = name.rsplit("-", 1)  # "select all": <question>:<option index>
                q = self._question(qid)
                if q is not None and q.options[int(index)] in q.example_answer():
                    self.press("Space")
                done.add(key)
            elif f["tag"] == "button" and name == "submit":
                self._send()
                return
            elif f["tag"] == "button" and kind == "elicitation_ranking":
                self._rank_step(name, ranking, done, prefix)
        raise AssertionError(f"Continue never reached by Tab on {page_id}")

    def see_offered(self, option: str) -> None:
        """Wait, as a sighted user does, until the select box's list shows the option typed
        before pressing Enter: Enter on a list not yet filtered chooses nothing, while the
        box still shows the typed text."""
        self.page.wait_for_function(
            "want => [...document.querySelectorAll('[role=\"option\"]')]"
            ".some(o => o.innerText.trim() === want)", arg=option, timeout=self.timeout_ms)

    def see_chosen(self, option: str) -> None:
        """Look at the select box before moving on, as a sighted keyboard user does: the
        option typed and chosen with Enter shows in it (if it never does, the page's
        "please answer" on Continue says so and ``resend`` answers it again)."""
        try:  # chosen: the list closed with the option in the box
            self.page.wait_for_function(
                "want => { const e = document.activeElement; return e && e.value === want"
                " && e.getAttribute('aria-expanded') !== 'true'; }",
                arg=option, timeout=5_000)
        except Exception:  # noqa: BLE001 - left for the page's own check of missing answers
            pass

    def _question(self, name: str) -> Any:
        """The screening question of a widget name (None: not a screening question)."""
        return next((q for q in self.protocol.screening if q.id == name), None)

    def _choose(self, f: dict[str, Any], want: int) -> None:
        """Select option ``want`` of the focused radio group: Space on the focused option,
        or arrow keys (which move and select)."""
        at = f["focused"]
        if want == at and f["checked"] != want:
            self.press("Space")
        elif want != at:
            forward, back = ("ArrowDown", "ArrowUp") if f["vertical"] else ("ArrowRight",
                                                                            "ArrowLeft")
            self.press(forward if want > at else back, abs(want - at))
        got = self.focus()
        assert got.get("checked") == want, (f, got)

    def _rank_step(self, name: str, items: list[str], done: set[str], prefix: str) -> None:
        """The ranking: move the first item down once, mark the last one "cannot change"
        (the same answer as browser_participant)."""
        first, last = items[0], items[-1]
        if name == f"ranking-down-{first}" and "down" not in done:
            self.press("Enter")
            done.add("down")
            self.page.locator(key_class(f"{prefix}ranking:up:{first}")
                              + " button:enabled:visible").first.wait_for(timeout=self.timeout_ms)
        elif name == f"ranking-off-{last}" and "off" not in done and "down" in done:
            self.press("Enter")
            done.add("off")
            self.page.locator(key_class(f"{prefix}ranking:on:{last}") + " button:visible").first \
                .wait_for(timeout=self.timeout_ms)
