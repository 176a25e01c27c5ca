"""Preview a protocol without serving it to anybody: every page kind, as one synthetic
participant meets it, photographed as the app draws it (PNG, Debian's Chromium, headless) with
one HTML index.

The pages are the session's own (protocols.running.session on a throw-away database in a temporary
folder): one synthetic participant walks the whole study, answering as in a simulation, and
the first page of each kind is kept; one more participant declines consent, for the end
page. Each page is then drawn by the participant app's own renderers
(``study_app.web.participant.draw_page``: progress, title, the kind's widgets and tables,
the participant style) in a Streamlit server on localhost (``study_app/web/preview_app.py``)
and photographed at each width asked: what the researcher sees is the page a participant
gets.
"""

from __future__ import annotations

import html
import os
import pickle
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from data.columns import SIM_RATINGS
from data.store import Store
from engine.synthetic.participants import Population
from protocols.definition.schema import Protocol
from protocols.running import pages as pg
from protocols.running.context import SyntheticContext, after_every_pause
from protocols.running.resources import StudyResources
from protocols.running.session import Study, SubmitItem

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
        behaviour = protocol.simulation.behaviour(protocol.elicitation.min_changeable)
        study = Study(protocol, store, study_id="preview", resources=resources,
                      decision_model=decision_model, clock=after_every_pause,
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
        _walk(study, population, MAX_TRIES, until="consent", pid=pid)  # screening may come first
        end = study.submit_many([SubmitItem(pid, "consent", {"agree": False})])[0]
    seen: dict[str, pg.Page] = {}
    for page in [*pages, end]:
        seen.setdefault(page.kind, page)
    return list(seen.values())


def _walk(study: Study, population: Population, seq: int, until: str | None = None,
          pid: str | None = None) -> list[pg.Page]:
    """The pages of synthetic participant ``seq`` (started unless ``pid`` is given) up to
    the terminal one, or up to the page ``until`` (left unanswered)."""
    pid = pid or study.start_many([seq], source="synthetic")[0]
    pages = []
    while True:
        page = study.current_page(pid)
        if page.id == until:
            return pages
        pages.append(page)
        if page.terminal:
            return pages
        sim = SyntheticContext(study.study_id, study.protocol, study.scenario, population)
        answer = pg.PAGE_KINDS[page.kind].synthetic_answers(
            sim, [(study.participant(pid), page)])[0]
        study.submit_many([SubmitItem(pid, page.id, answer)],
                          {SIM_RATINGS.name: sim.extra[SIM_RATINGS.name]})


# ---- screenshots and index ---------------------------------------------------------------
APP = Path(__file__).resolve().parent / "web" / "preview_app.py"
WIDTHS = (1280,)


def _free_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(pages_file: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """The preview script in a Streamlit server on localhost; (process, url) once healthy."""
    port = _free_port()
    env = {**os.environ, "RECOURSE_STUDY_PREVIEW_PAGES": str(pages_file)}
    cmd = [sys.executable, "-m", "streamlit", "run", str(APP), "--server.port", str(port),
           "--server.address", "127.0.0.1", "--server.headless", "true",
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    proc = subprocess.Popen(cmd, stdout=log.open("ab"), stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise PreviewError(f"the preview server stopped:\n{log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.25)
    proc.terminate()
    raise PreviewError("the preview server did not start within 120 s")


def _photograph(tab: Any, url: str, n: int, page: pg.Page, width: int, path: Path) -> None:
    """Page n at ``width``, the whole page (Streamlit scrolls inside its own container, so
    the window is made as tall as the content)."""
    tab.set_viewport_size({"width": width, "height": 900})
    tab.goto(f"{url}/?page={n}")
    tab.locator(f".rs-progress[data-page='{page.id}']").wait_for(timeout=120_000)
    tab.wait_for_timeout(500)  # fonts and the last widgets settle
    height = tab.evaluate("() => { const m = document.querySelector('[data-testid=\"stMain"
                          "\"]'); return Math.ceil(Math.max(document.body.scrollHeight, "
                          "m ? m.scrollHeight : 0)); }")
    tab.set_viewport_size({"width": width, "height": max(600, min(int(height) + 40, 6000))})
    tab.wait_for_timeout(300)
    kind = "jpeg" if path.suffix == ".jpg" else "png"
    tab.screenshot(path=str(path), full_page=True, type=kind,
                   **({"quality": 70} if kind == "jpeg" else {}))


def write_preview(pages: list[pg.Page], out: Path, title: str, *,
                  widths: tuple[int, ...] = WIDTHS, image: str = "png") -> dict[str, Any]:
    """``out``/pages/<n>-<kind>[-<width>].<image> for every page (and width) and
    ``out``/index.html."""
    if not CHROMIUM.exists():
        raise PreviewError(f"no Chromium at {CHROMIUM}: install Debian's chromium "
                           "(bash scripts/install_chromium.sh)")
    from playwright.sync_api import sync_playwright

    folder = out / "pages"
    folder.mkdir(parents=True, exist_ok=True)
    shots = []
    with tempfile.TemporaryDirectory(prefix="recourse-preview-") as tmp:
        pages_file = Path(tmp) / "pages.pickle"
        pages_file.write_bytes(pickle.dumps(pages))
        proc, url = _serve(pages_file, Path(tmp) / "serve.log")
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                            headless=True)
                try:
                    tab = browser.new_page()
                    for n, page in enumerate(pages):
                        for width in widths:
                            stem = f"{n + 1:02d}-{page.kind}" + (
                                f"-{width}" if len(widths) > 1 else "")
                            _photograph(tab, url, n, page, width, folder / f"{stem}.{image}")
                            shots.append({"kind": page.kind, "page_id": page.id,
                                          "title": page.title, "width": width,
                                          "png": f"pages/{stem}.{image}"})
                finally:
                    browser.close()
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    items = "".join(
        f"<figure><figcaption><b>{html.escape(s['kind'])}</b> &middot; page "
        f"{html.escape(s['page_id'])}: {html.escape(s['title'])} ({s['width']} px)"
        f"</figcaption><a href='{s['png']}'><img src='{s['png']}' "
        f"alt='{html.escape(s['kind'])}'></a></figure>" for s in shots)
    (out / "index.html").write_text(
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Preview of "
        f"{html.escape(title)}</title><style>body{{font-family:system-ui,sans-serif;margin:2em}}"
        f"img{{max-width:480px;border:1px solid #ccc}}figure{{display:inline-block;"
        f"vertical-align:top;margin:1em}}</style></head><body><h1>Preview of "
        f"{html.escape(title)}</h1><p>Every page kind, as one synthetic participant sees it."
        f"</p>{items}</body></html>", encoding="utf-8")
    return {"index": str(out / "index.html"), "pages": shots}
