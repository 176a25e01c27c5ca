"""Look of the pages: a calm, narrow survey layout that also works at phone width, and the
accessibility rules every page shares (participant pages and the dashboard alike).

Streamlit's own chrome (menu, deploy button, footer, sidebar toggle) is hidden on participant
pages so the study looks like a survey tool rather than a data app; the dashboard keeps it.

Accessibility (WCAG 2.1 AA; checked by axe-core in the browser tests, docs/accessibility.md):

- text colours reach a contrast of at least 4.5:1 on white (Streamlit's grey captions, 3.9:1,
  are darkened);
- every focusable control shows a clear focus ring (3 px, 3:1 against white and the control);
- on every new page, keyboard focus moves to the page heading (``page_heading``), so a
  screen reader announces the page and the first Tab reaches its first question.

When the browser loses the server (a restart, a network outage), Streamlit opens its own
"Connection error" dialog, written for developers ("Is Streamlit still running? ...
streamlit run yourscript.py"); Streamlit has no setting to replace it. On participant pages
the dialog says ours instead (``outage_notice``): a short message in the participant's
language that they are being reconnected and their answers are saved. The dialog is kept as
the carrier because it is modal: it takes focus and the page behind it becomes inert, so a
screen reader reads the message in it (a banner on the page would be inert too). Participant
pages open no dialog of their own, so any dialog there is Streamlit's.
"""

from __future__ import annotations

import html

import streamlit as st

from study_app.web.i18n import ui

# Shared by every page (participant pages and the dashboard).
_BASE_CSS = """
<style>
/* Captions and other "faded" text: #5c5f66 on white is 6.4:1 (Streamlit draws captions at
   60% opacity, 2.7:1). */
[data-testid="stCaptionContainer"] { opacity: 1 !important; }
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] *,
[data-testid="stMetricLabel"], [data-testid="stMetricLabel"] *,
[data-testid="stWidgetLabel"] small, [data-testid="stMarkdownContainer"] small {
  color: #5c5f66 !important;
}
/* A clear focus ring on every control reached by keyboard. */
:focus-visible, button:focus-visible, a:focus-visible, input:focus-visible,
textarea:focus-visible, [tabindex]:focus-visible {
  outline: 3px solid #1a4f8b !important; outline-offset: 2px !important;
}
/* Radio and checkbox inputs are visually hidden: ring their visible label instead. */
label:has(> input:focus-visible), label:has(input[type="radio"]:focus-visible),
label:has(input[type="checkbox"]:focus-visible) {
  outline: 3px solid #1a4f8b; outline-offset: 2px; border-radius: 0.3rem;
}
/* The page heading takes focus on a new page (page_heading): no ring for that, as the
   page itself is what is announced. */
.rs-page-title:focus { outline: none; }
</style>
"""

_PARTICIPANT_CSS = """
<style>
#MainMenu, header[data-testid="stHeader"], footer, [data-testid="stToolbar"],
[data-testid="stDecoration"], [data-testid="stStatusWidget"],
[data-testid="stSidebarCollapsedControl"], [data-testid="stAppDeployButton"] {
  display: none !important;
}
.block-container, [data-testid="stMainBlockContainer"] {
  max-width: 46rem; padding-top: 1.5rem; padding-bottom: 4rem;
}
html, body, [data-testid="stAppViewContainer"] { font-size: 17px; }
.rs-progress { margin: 0 0 1.25rem 0; }
.rs-progress-label {
  display: flex; justify-content: space-between; font-size: 0.85rem; color: #555;
  margin-bottom: 0.3rem;
}
.rs-progress-track { height: 0.45rem; background: #e6e9ef; border-radius: 0.25rem; }
.rs-progress-fill { height: 100%; background: #2b6cb0; border-radius: 0.25rem; }
.rs-notice {
  border-left: 4px solid #2b6cb0; background: #f3f7fc; padding: 0.8rem 1rem;
  border-radius: 0.25rem; margin: 0.5rem 0 1rem 0;
}
.rs-notice.rs-bad { border-left-color: #b83232; background: #fdf3f3; }
.rs-plan { width: 100%; border-collapse: collapse; margin: 0.5rem 0 1rem 0; font-size: 0.95rem; }
.rs-plan th, .rs-plan td {
  text-align: left; padding: 0.45rem 0.5rem; border-bottom: 1px solid #e2e5ea;
  vertical-align: top;
}
.rs-plan th { font-weight: 600; color: #333; background: #f6f7f9; }
.rs-plan td.rs-arrow { color: #999; text-align: center; width: 1.5rem; }
.rs-plan tr.rs-action td { background: #fff6dc; }
.rs-plan tr.rs-action td.rs-new { font-weight: 700; }
.rs-plan tr.rs-consequence td { background: #eef5ff; }
.rs-plan tr.rs-consequence td.rs-new { font-style: italic; }
.rs-tag {
  display: inline-block; font-size: 0.72rem; padding: 0.05rem 0.4rem; border-radius: 0.6rem;
  margin-left: 0.35rem; white-space: nowrap; vertical-align: middle;
}
.rs-tag-action { background: #f2c94c; color: #4a3800; }
.rs-tag-consequence { background: #bcd6f5; color: #1d3f66; }
/* A page comparing two plans gets the width for both. */
.block-container:has(.rs-pair), [data-testid="stMainBlockContainer"]:has(.rs-pair) {
  max-width: 68rem;
}
.rs-pair { display: flex; gap: 1.25rem; align-items: flex-start; }
.rs-pair-item { flex: 1 1 0; min-width: 0; }
@media (max-width: 899px) { .rs-pair { flex-direction: column; gap: 0; } .rs-pair-item { width: 100%; } }
.rs-plan td, .rs-plan th { overflow-wrap: anywhere; }
.rs-note { display: block; font-size: 0.8rem; font-style: normal; color: #333; }
.rs-plan-caption { caption-side: top; text-align: left; font-weight: 600; padding-bottom: 0.3rem; }
.rs-sr { position: absolute; left: -9999px; width: 1px; height: 1px; overflow: hidden; }
.rs-missing { color: #9b1c1c; font-weight: 600; font-size: 0.9rem; margin: -0.25rem 0 0.75rem 0; }
.rs-legend { font-size: 0.85rem; color: #444; margin-bottom: 0.75rem; }
.rs-code {
  font-family: ui-monospace, monospace; font-size: 1.6rem; letter-spacing: 0.12em;
  padding: 0.6rem 1rem; border: 2px dashed #2b6cb0; display: inline-block; margin: 0.5rem 0;
}
.rs-scale-ends {
  display: flex; justify-content: space-between; font-size: 0.8rem; color: #555;
  margin-top: -0.4rem; margin-bottom: 0.75rem;
}
/* A page's Continue button ignores clicks for its first half second, so the second click
   of a double click never answers the next page unseen. */
.stFormSubmitButton button, [class*="-submit"] button { animation: rs-arm 0.5s; }
@keyframes rs-arm { from { pointer-events: none; } to { pointer-events: none; } }
/* Radio options of a 7-point scale in one row that wraps on narrow screens. */
div[role="radiogroup"] { flex-wrap: wrap; gap: 0.2rem 0.9rem; }
@media (max-width: 480px) {
  html, body, [data-testid="stAppViewContainer"] { font-size: 16px; }
  .block-container, [data-testid="stMainBlockContainer"] {
    padding-left: 0.8rem; padding-right: 0.8rem;
  }
  .rs-plan { font-size: 0.85rem; }
  .rs-plan th, .rs-plan td { padding: 0.35rem 0.25rem; }
  .rs-plan .rs-tag { display: block; margin: 0.15rem 0 0 0; width: max-content; }
}
/* The outage message (outage_notice): inside Streamlit's dialog in place of its own text
   (its close button kept), and on the page while the server is away once the dialog was
   closed. */
[data-testid="stElementContainer"]:has(.rs-outage) { display: none; }
body[data-rs-outage]:not(:has([data-testid="stDialog"]))
  [data-testid="stElementContainer"]:has(.rs-outage) {
  display: block; position: fixed; top: 0.75rem; left: 0.75rem; right: 0.75rem;
  z-index: 1000; max-width: 40rem; margin: 0 auto;
}
.rs-outage, .rs-outage-box {
  border-left: 4px solid #2b6cb0; background: #f3f7fc; padding: 0.8rem 1rem;
  border-radius: 0.25rem; color: #1f2328;
}
.rs-outage-box h2 { font-size: 1.2rem; margin: 0 0 0.4rem 0; padding: 0; }
.rs-outage-box p { margin: 0; }
[data-testid="stDialog"] section[role="dialog"]:has(.rs-outage-box)
  > :not(.rs-outage-box):not(button[aria-label]) {
  display: none !important;
}
</style>
"""

# Installs once per browser tab (outage_notice): whenever a Streamlit dialog appears, its
# content is replaced by the newest outage message of the page, and the page is marked as
# in an outage (body[data-rs-outage]) until the server answers its health check again.
_OUTAGE_SCRIPT = """<script>(function () {
 if (window.rsOutage) { return; }
 window.rsOutage = true;
 var health = window.location.origin + '/_stcore/health';
 function message() { return document.querySelector('[data-testid="rs-outage"]'); }
 function watchHealth() {
  fetch(health, {cache: 'no-store'}).then(function (r) {
   if (r.ok) { delete document.body.dataset.rsOutage; } else { setTimeout(watchHealth, 2000); }
  }, function () { setTimeout(watchHealth, 2000); });
 }
 function replace(dialog) {
  var m = message();
  if (!m || dialog.querySelector('.rs-outage-box')) { return; }
  var box = document.createElement('div');
  box.className = 'rs-outage-box';
  box.setAttribute('data-testid', 'rs-outage-dialog');
  var title = document.createElement('h2');
  title.id = 'rs-outage-title';
  title.textContent = m.dataset.title;
  var text = document.createElement('p');
  text.textContent = m.dataset.text;
  box.appendChild(title);
  box.appendChild(text);
  dialog.appendChild(box);
  dialog.setAttribute('aria-labelledby', 'rs-outage-title');
  if (!document.body.dataset.rsOutage) {
   document.body.dataset.rsOutage = '1';
   setTimeout(watchHealth, 2000);
  }
 }
 new MutationObserver(function () {
  document.querySelectorAll('[data-testid="stDialog"] section[role="dialog"]').forEach(replace);
 }).observe(document.body, {childList: true, subtree: true});
})();</script>"""


def apply_base_style() -> None:
    """Inject the CSS every page shares (contrast, focus ring)."""
    st.html(_BASE_CSS)


def apply_participant_style() -> None:
    """Inject the participant CSS (once per run; Streamlit dedupes identical markdown)."""
    apply_base_style()
    st.html(_PARTICIPANT_CSS)


def outage_notice() -> None:
    """The message shown while the server cannot be reached (module docstring), in the
    participant's language; hidden otherwise."""
    title, text = ui("outage.title"), ui("outage")
    st.html(f'<div class="rs-outage" data-testid="rs-outage" '
            f'data-title="{html.escape(title)}" data-text="{html.escape(text)}">'
            f'<strong>{html.escape(title)}</strong> {html.escape(text)}</div>')
    st.html(_OUTAGE_SCRIPT, unsafe_allow_javascript=True)


def page_heading(title: str, page_id: str) -> None:
    """The page's heading; on a new page (a new ``page_id``) keyboard focus moves to it, so
    the first Tab reaches the page's first question and a screen reader reads the new page
    from its title."""
    st.subheader(title, anchor=False)
    # The page id makes the element new on every page, so the script runs once per page
    # (a rerun of the same page, e.g. after a missing answer, leaves focus where it is).
    st.html(
        "<script>/* " + html.escape(page_id) + " */ (function () {"
        " var tries = 0;"
        " (function focus() {"
        "  var h = document.querySelector('[data-testid=\"stMain\"] "
        "[data-testid=\"stHeading\"] h3');"
        "  if (!h) { if (tries++ < 50) { setTimeout(focus, 20); } return; }"
        "  h.classList.add('rs-page-title'); h.setAttribute('tabindex', '-1');"
        "  h.focus({preventScroll: true});"
        " })(); })();</script>",
        unsafe_allow_javascript=True,
    )


def progress_indicator(
    step: int, total: int, section: str = "", *, page_id: str = "", kind: str = "",
    ended: bool = False,
) -> None:
    """A labelled progress bar: ``step`` of ``total`` pages done, with the current section.

    Rendered as HTML (not st.progress) so it carries an accessible progressbar role and values.
    ``page_id`` and ``kind`` are carried as data attributes (what browser tests and the
    benchmark wait for). ``ended``: the study ended early (declined, screened out): no
    percentage and no bar, which would claim a completion that did not happen.
    """
    if total <= 0:
        raise ValueError(f"progress needs a positive page total, got {total}")
    step = max(0, min(step, total))
    pct = round(100 * step / total)
    label = html.escape(section)
    if ended:
        st.html(f'<div class="rs-progress" data-testid="rs-progress" '
                f'data-page="{html.escape(page_id)}" data-kind="{html.escape(kind)}">'
                f'<div class="rs-progress-label"><span>{label}</span></div></div>')
        return
    st.html(
        f'<div class="rs-progress" data-testid="rs-progress" '
        f'data-page="{html.escape(page_id)}" data-kind="{html.escape(kind)}" '
        f'role="progressbar" aria-valuemin="0" '
        f'aria-valuemax="{total}" aria-valuenow="{step}" '
        f'aria-label="{html.escape(ui("progress.label"))}">'
        f'<div class="rs-progress-label"><span>{label}</span>'
        f'<span>{html.escape(ui("progress", pct=pct))}</span></div>'
        f'<div class="rs-progress-track"><div class="rs-progress-fill" '
        f'style="width:{pct}%"></div></div></div>'
    )


def notice(text: str, *, bad: bool = False) -> None:
    """A boxed message (plain text, escaped)."""
    cls = "rs-notice rs-bad" if bad else "rs-notice"
    st.html(f'<div class="{cls}">{html.escape(text)}</div>')
