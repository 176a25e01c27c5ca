"""Preview a protocol without serving it: every page kind, as one synthetic participant sees
it, as PNG (Debian's Chromium, headless) and one HTML index.

The pages are the session's own (protocols.session on a throw-away database in a temporary
folder): one synthetic participant walks the whole study, answering as in a simulation, and
the first page of each kind is kept; one more participant declines consent, for the end
page. Each page's payload (what the Streamlit renderer receives) is laid out as static HTML
(``page_html``: texts, plan tables with the action / consequence / same items, the 7-point
scales, options) and photographed. The researcher sees every text, table and question a
participant meets; the widgets are drawn, not live.
"""

from __future__ import annotations

import html
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from data.store import Store
from engine.synthetic.participants import Population
from protocols import pages as pg
from protocols.context import SyntheticContext
from protocols.resources import StudyResources
from protocols.schema import Protocol
from protocols.session import Study, SubmitItem

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
MAX_TRIES = 20  # participants tried until one completes (an own profile may be approved)


class PreviewError(RuntimeError):
    """The preview cannot be made here (no Chromium, no participant completes)."""


def collect_pages(protocol: Protocol, *, decision_model: str | None = None,
                  resources: StudyResources | None = None) -> list[pg.Page]:
    """The first page of every kind one synthetic participant meets, in order, then the
    end page of a participant who declines."""
    with tempfile.TemporaryDirectory(prefix="recourse-preview-") as tmp, \
            Store(Path(tmp) / "preview.duckdb") as store:
        behaviour = protocol.simulation.behaviour()
        study = Study(protocol, store, study_id="preview", resources=resources,
                      decision_model=decision_model,
                      simulation={"seed": protocol.simulation.seed,
                                  "behaviour": behaviour.to_dict()})
        population = Population(study.scenario, behaviour, protocol.simulation.seed,
                                study.rejected_population)
        for seq in range(MAX_TRIES):
            pages = _walk(study, population, seq)
            if pages[-1].kind == "debrief":
                break
        else:
            raise PreviewError(f"none of {MAX_TRIES} synthetic participants completed the "
                               "study (every one ended early)")
        pid = study.start_many([MAX_TRIES], source="synthetic")[0]
        end = study.submit_many([SubmitItem(pid, "consent", {"agree": False})])[0]
    seen: dict[str, pg.Page] = {}
    for page in [*pages, end]:
        seen.setdefault(page.kind, page)
    return list(seen.values())


def _walk(study: Study, population: Population, seq: int) -> list[pg.Page]:
    pid = study.start_many([seq], source="synthetic")[0]
    pages = []
    while True:
        page = study.current_page(pid)
        pages.append(page)
        if page.terminal:
            return pages
        sim = SyntheticContext(study.study_id, study.protocol, study.scenario, population)
        answer = pg.PAGE_KINDS[page.kind].synthetic_answers(
            sim, [(study.participant(pid), page)])[0]
        study.submit_many([SubmitItem(pid, page.id, answer)],
                          {"sim_ratings": sim.extra["sim_ratings"]})


# ---- static HTML of a page ---------------------------------------------------------------
_CSS = """body{font-family:system-ui,sans-serif;max-width:860px;margin:1.5em auto;padding:0 1em;
color:#222}h1{font-size:1.5em}.progress{color:#666;font-size:.85em}
table{border-collapse:collapse;margin:.6em 0}td,th{padding:.3em .7em;border-bottom:1px solid #ddd;
text-align:left}tr.action td{background:#fff3c4;font-weight:600}tr.consequence td{color:#1a5fb4}
.scale{display:flex;gap:.4em;flex-wrap:wrap;margin:.3em 0 1em}.scale span{border:1px solid #999;
border-radius:4px;padding:.2em .5em;font-size:.85em}.box{border:1px solid #ccc;border-radius:6px;
padding:.6em 1em;margin:.6em 0}.label{font-weight:600;margin-top:.8em}.key{color:#666;
font-size:.8em}button{padding:.4em 1.2em;margin-top:1em}"""


def page_html(page: pg.Page) -> str:
    """A page's payload laid out as a static HTML document."""
    body = _render(page.payload)
    step = page.progress
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>"
            f"{html.escape(page.title)}</title><style>{_CSS}</style></head><body>"
            f"<div class='progress'>Page {step.step} of {step.total} &middot; {page.id} "
            f"({page.kind})</div><h1>{html.escape(page.title)}</h1>{body}"
            f"{'' if page.terminal else '<button>Continue</button>'}</body></html>")


_HIDDEN = ("number", "of", "query", "budget", "plan_id", "levels", "min_chars", "max_chars")


def _render(value: Any, name: str = "") -> str:
    if isinstance(value, BaseModel):
        data = dict(value)
        if {"text", "labels"} <= set(data):  # a 7-point question
            return (f"<div class='label'>{html.escape(data['text'])}</div><div class='scale'>"
                    + "".join(f"<span>{i}. {html.escape(lab)}</span>"
                              for i, lab in enumerate(data["labels"], 1)) + "</div>")
        return "".join(_render(v, k) for k, v in data.items())
    if isinstance(value, str):
        if name in ("text", "question", "impossible_text"):
            return "".join(f"<p>{html.escape(par)}</p>" for par in value.split("\n\n") if par)
        if name in _HIDDEN:
            return ""
        return f"<div><span class='key'>{html.escape(name)}:</span> {html.escape(value)}</div>"
    if isinstance(value, list):
        return _render_list(value, name)
    if isinstance(value, dict):
        return "".join(_render(v, str(k)) for k, v in value.items())
    if value is None or name in _HIDDEN:
        return ""
    return f"<div><span class='key'>{html.escape(name)}:</span> {html.escape(str(value))}</div>"


def _render_list(items: list[Any], name: str) -> str:
    if not items:
        return ""
    if all(isinstance(i, str) for i in items):
        return ("<div class='scale'>" + "".join(f"<span>{html.escape(i)}</span>" for i in items)
                + "</div>")
    first = items[0]
    if isinstance(first, BaseModel) and all(not isinstance(v, (BaseModel, list))
                                            for v in dict(first).values()):
        cols = [c for c in first.model_fields if c not in ("feature", "current_value",
                                                          "suggested_value", "kind")]
        head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
        rows = "".join(f"<tr class='{getattr(i, 'kind', '')}'>" + "".join(
            f"<td>{html.escape(str(getattr(i, c)))}</td>" for c in cols) + "</tr>"
            for i in items)
        return f"<table><tr>{head}</tr>{rows}</table>"
    return "".join(f"<div class='box'>{_render(i)}</div>" for i in items)


# ---- screenshots and index ---------------------------------------------------------------
def write_preview(pages: list[pg.Page], out: Path, title: str) -> dict[str, Any]:
    """``out``/pages/<n>-<kind>.html and .png for every page and ``out``/index.html."""
    if not CHROMIUM.exists():
        raise PreviewError(f"no Chromium at {CHROMIUM}: install Debian's chromium "
                           "(bash scripts/install_chromium.sh)")
    from playwright.sync_api import sync_playwright

    folder = out / "pages"
    folder.mkdir(parents=True, exist_ok=True)
    shots = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                    headless=True)
        try:
            tab = browser.new_page(viewport={"width": 960, "height": 700})
            for n, page in enumerate(pages, 1):
                stem = f"{n:02d}-{page.kind}"
                doc = folder / f"{stem}.html"
                doc.write_text(page_html(page), encoding="utf-8")
                tab.goto(doc.resolve().as_uri())
                tab.screenshot(path=str(folder / f"{stem}.png"), full_page=True)
                shots.append({"kind": page.kind, "page_id": page.id, "title": page.title,
                              "png": f"pages/{stem}.png", "html": f"pages/{stem}.html"})
        finally:
            browser.close()
    items = "".join(
        f"<figure><figcaption><b>{html.escape(s['kind'])}</b> &middot; page "
        f"{html.escape(s['page_id'])}: {html.escape(s['title'])}</figcaption><a href='{s['html']}'>"
        f"<img src='{s['png']}' alt='{html.escape(s['kind'])}'></a></figure>" for s in shots)
    (out / "index.html").write_text(
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Preview of "
        f"{html.escape(title)}</title><style>body{{font-family:system-ui,sans-serif;margin:2em}}"
        f"img{{max-width:480px;border:1px solid #ccc}}figure{{display:inline-block;"
        f"vertical-align:top;margin:1em}}</style></head><body><h1>Preview of "
        f"{html.escape(title)}</h1><p>Every page kind, as one synthetic participant sees it."
        f"</p>{items}</body></html>", encoding="utf-8")
    return {"index": str(out / "index.html"), "pages": shots}
