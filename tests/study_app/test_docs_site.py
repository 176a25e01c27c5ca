"""The documentation site: its generated pages are current (every command and option from
the commands themselves, every public name of the API), the README stays short, and the
docs name papers by title, never by a file number or a tracker's words."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"


def test_the_cli_reference_is_current_and_lists_every_command() -> None:
    from study_app.cli import app
    from study_app.cli.reference_pages import CLI_PAGE, cli_markdown, command_tree, walk

    committed = (DOCS / CLI_PAGE).read_text(encoding="utf-8")
    assert committed == cli_markdown(app), (
        "docs/reference/cli.md is stale: run `recourse-study docs generate`")
    paths = [" ".join(p) for p, _ in walk(command_tree(app))]
    assert {"simulate", "analyze", "serve", "benchmark recourse", "docs generate"} <= set(paths)
    for path, command in walk(command_tree(app)):
        assert f"## {' '.join(path)}\n" in committed
        for param in command.params:
            if param.param_type_name == "option" and not param.hidden:
                assert param.opts[0] in committed, f"{' '.join(path)} {param.opts[0]}"


def test_the_api_reference_is_current() -> None:
    from study_app.cli.reference_pages import API_PAGE, api_markdown

    committed = (DOCS / API_PAGE).read_text(encoding="utf-8")
    assert committed == api_markdown(), (
        "docs/reference/api.md is stale: run `recourse-study docs generate`")
    assert "::: engine.workbench.Workbench" in committed
    assert "::: data.store.Store" in committed


def test_every_page_in_the_navigation_exists_and_every_page_is_in_it() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))

    def pages(node):
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            for v in node.values():
                yield from pages(v)
        elif isinstance(node, list):
            for v in node:
                yield from pages(v)

    nav = set(pages(config["nav"]))
    on_disk = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert nav <= on_disk, nav - on_disk
    assert on_disk <= nav, f"pages missing from mkdocs.yml's nav: {sorted(on_disk - nav)}"


def test_the_readme_is_short() -> None:
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 220


def test_docs_name_papers_by_title_not_by_file_number() -> None:
    pattern = re.compile(r"\bpapers? 00\d\b|\(00\d\)|\bissue \d+|\bthe issue's\b|DESIGN\.md")
    texts = [REPO / "README.md", *DOCS.rglob("*.md")]
    offenders = [f"{p.relative_to(REPO)}: {m.group(0)}" for p in texts
                 for m in pattern.finditer(p.read_text(encoding="utf-8"))]
    assert offenders == []
