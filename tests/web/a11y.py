"""Accessibility checks shared by the browser tests: axe-core (WCAG 2.0/2.1 A and AA rules)
on a page, and the exceptions a person checked (docs/accessibility.md).

axe-core comes vendored in the PyPI package ``axe-playwright-python`` (its ``axe.min.js``,
MPL-2.0); nothing is downloaded at run time.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page

WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# rule id -> why it is accepted (each one listed in docs/accessibility.md). None today.
EXCEPTIONS: dict[str, str] = {}
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
WIDTHS = {"1280": DESKTOP, "390": PHONE}


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """The WCAG 2.1 A/AA violations axe-core finds on the page as it is now (rule id,
    impact, the first nodes' selectors and messages), the documented exceptions left out."""
    from axe_playwright_python.sync_playwright import Axe

    result = Axe().run(page, options={"runOnly": {"type": "tag", "values": WCAG_TAGS},
                                      "resultTypes": ["violations"]})
    out = []
    for v in result.response["violations"]:
        if v["id"] in EXCEPTIONS:
            continue
        nodes = [{"target": n["target"], "message": (n.get("any") or n.get("all") or
                                                      [{"message": ""}])[0]["message"]}
                 for n in v["nodes"][:3]]
        out.append({"rule": v["id"], "impact": v["impact"], "nodes": nodes})
    return out
