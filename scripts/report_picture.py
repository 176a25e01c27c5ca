"""Photograph an analysis report (``recourse-study analyze`` writes OUT/report.html) in
Debian's Chromium, for the README and the docs:

    python scripts/report_picture.py OUT/report.html docs/images/report.jpg

The picture is the first screen of the report at 1280 px (JPEG)."""

from __future__ import annotations

import argparse
from pathlib import Path

from playwright.sync_api import sync_playwright

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="a report.html written by analyze")
    parser.add_argument("out", type=Path, help="the picture to write (.jpg)")
    parser.add_argument("--height", type=int, default=1100, help="pixels of the report shown")
    args = parser.parse_args()
    if not args.report.is_file():
        parser.error(f"{args.report}: no such report (run recourse-study analyze first)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": args.height})
            page.goto(args.report.resolve().as_uri())
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out), type="jpeg", quality=80)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
