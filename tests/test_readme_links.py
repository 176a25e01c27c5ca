"""The README links only to documents inside the repository, and each exists."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_readme_links_resolve_inside_the_repository() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)]+)\)", text)
    mentioned = re.findall(r"`([\w./-]+\.(?:md|yaml))`", text)
    assert links, "the README links its documents"
    for target in links + mentioned:
        if target.startswith(("http://", "https://")) or "*" in target:
            continue
        path = (REPO / target.split("#")[0]).resolve()
        assert path.is_relative_to(REPO) and path.exists(), target
