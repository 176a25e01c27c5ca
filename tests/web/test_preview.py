"""`preview` draws pages with the participant app's own renderers: the plan page photographed
is the app's ("Item / Current profile / Ideal profile"), not a layout of its payload."""

from __future__ import annotations

import pytest
from browser_harness import CHROMIUM, launch_chromium

from protocols.definition.schema import load_protocol
from study_app.cli.preview import gallery_markdown
from study_app.preview import _serve, collect_pages, write_preview

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium "
                       "(bash scripts/install_chromium.sh)"),
]


@pytest.mark.e2e  # every page photographed at two widths (make test-e2e); the JSON walk
# (tests/study_app/test_json_convention.py) photographs one page in make test
def test_preview_is_the_page_a_participant_sees(tmp_path) -> None:
    protocol = load_protocol("tominaga-replication")
    pages = [p for p in collect_pages(protocol) if p.kind in ("consent", "plan", "debrief")]
    result = write_preview(pages, tmp_path / "out", protocol.title, widths=(1280, 390),
                           image="jpg")
    shots = result["pages"]
    assert [(s["kind"], s["width"]) for s in shots] == [
        ("consent", 1280), ("consent", 390), ("plan", 1280), ("plan", 390),
        ("debrief", 1280), ("debrief", 390)]
    for s in shots:
        assert (tmp_path / "out" / s["png"]).stat().st_size > 5_000
    md = gallery_markdown([{"protocol": protocol.id, "title": protocol.title, **result}],
                          tmp_path / "gallery")
    assert md.count("![") == 6 and "gallery/tominaga-replication/pages/" in md
    # the same server, read as text: the app's table headings and no payload keys
    import pickle

    (tmp_path / "pages.pickle").write_bytes(pickle.dumps(pages))
    from playwright.sync_api import sync_playwright

    proc, url = _serve(tmp_path / "pages.pickle", tmp_path / "serve.log")
    try:
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            tab = browser.new_page(viewport={"width": 1280, "height": 900})
            tab.goto(f"{url}/?page=1")
            tab.locator("[data-testid='rs-plan-table']").wait_for(timeout=120_000)
            head = tab.locator("[data-testid='rs-plan-table'] thead").inner_text()
            assert "Item" in head and "Current profile" in head and "Ideal profile" in head
            assert "current_label" not in tab.inner_text("body")
            # an ending page outside a served study: its code, no error about the server
            tab.goto(f"{url}/?page=2")
            tab.locator("[data-testid='rs-completion-code']").wait_for(timeout=120_000)
            assert "Error" not in tab.inner_text("body")
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_preview_kind_picks_pages_and_names_the_kinds_it_has(tmp_path) -> None:
    from typer.testing import CliRunner

    from study_app.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["preview", "tominaga-replication", "--out", str(tmp_path / "o"),
                            "--decision-model", "bayes", "--kind", "nosuch"])
    assert r.exit_code == 2 and not (tmp_path / "o").exists()
    said = " ".join(r.stderr.split())
    assert "--kind nosuch: tominaga-replication shows no such page" in said
    assert "its kinds: screening, consent" in said and "debrief, end" in said
    r = runner.invoke(app, ["preview", "--gallery", str(tmp_path / "g"), "--kind", "plan"])
    assert r.exit_code == 2 and "--kind is for one protocol" in " ".join(r.stderr.split())
