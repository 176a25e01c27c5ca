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


def test_runs_of_a_target_on_two_scenarios_get_their_own_headings_and_links() -> None:
    from study_app.cli.reproduction_pages import _anchor, command, heading

    default, other = _run(), _run()
    other["config"] = {**other["config"], "scenario": "gmsc"}
    assert heading(default) == "icarma-table1: Hard constraints"
    assert heading(other) == "icarma-table1 on gmsc: Hard constraints"
    assert _anchor(default) == "icarma-table1-hard-constraints"
    assert _anchor(other) == "icarma-table1-on-gmsc-hard-constraints"
    assert command(other) == "recourse-study reproduce icarma-table1 --fast --scenario gmsc"


def _run(target: str = "icarma-table1", ours: float = 0.97, paper: float = 0.999,
         fast: bool = True) -> dict:
    """A `reproduce --json` result of one cell (the shape the command writes)."""
    return {
        "target": target, "title": "Hard constraints", "table": "Table 1 (section 5.3)",
        "paper": {"title": "From Universal to Individualized Actionability"},
        "config": {"scenario": "loan-carma-reference", "fast": fast, "seeds": 1},
        "seconds": 71.6,
        "cells": [{"table": "Table 1", "row": "Loan, all (4)", "method": "icarma",
                   "metric": "validity", "paper": paper, "paper_range": None, "ours": ours,
                   "ours_mean": ours, "ours_sd": 0.0, "seeds": 1, "diff": ours - paper,
                   "tolerance": 0.05, "within": abs(ours - paper) <= 0.05}],
        "checks": [{"claim": "validity falls as features are removed", "passed": True,
                    "detail": "0.97 > 0.80"}],
        "summary": {"cells": 1, "within": 1, "judged": 1, "checks_passed": 1, "checks": 1},
        "notes": [],
    }


def test_the_reproduction_pages_are_current() -> None:
    from study_app.cli.reproduction_pages import reproduction_pages

    for rel, text in reproduction_pages(DOCS).items():
        assert (DOCS / rel).read_text(encoding="utf-8") == text, (
            f"docs/{rel} is stale: run `recourse-study docs generate`")


def test_a_run_is_rendered_beside_the_paper_and_a_changed_run_makes_the_page_stale(
        tmp_path: Path) -> None:
    import json

    import pytest
    from typer.testing import CliRunner

    from study_app.cli import app
    from study_app.cli.reproduction_pages import reproduction_pages

    docs = tmp_path / "docs"
    (docs / "reproductions" / "data").mkdir(parents=True)
    for name in ("index.md", "icarma.md", "hare.md"):
        (docs / "reproductions" / name).write_text(f"# {name}\n\nProse kept.\n")
    data = docs / "reproductions" / "data" / "icarma-table1.json"

    def render(run: dict) -> str:
        data.write_text(json.dumps(run))
        for rel, text in reproduction_pages(docs).items():
            (docs / rel).write_text(text)
        return (docs / "reproductions" / "icarma.md").read_text()

    page = render(_run())
    assert page.startswith("# icarma.md\n\nProse kept.\n")
    assert ("| Loan, all (4) | icarma | validity | 0.999 | 0.970 | 0.970 ± 0.000 (1) | -0.029 "
            "| 0.05 | yes |") in page
    assert "**fast run** (`--fast`" in page
    assert "`recourse-study reproduce icarma-table1 --fast`" in page
    assert "- PASS: validity falls as features are removed: 0.97 > 0.80" in page
    assert render(_run()) == page                           # rendering twice: the same
    index = (docs / "reproductions" / "index.md").read_text()
    assert "| [icarma-table1](icarma.md#icarma-table1-hard-constraints) |" in index
    assert "| fast | 1 / 1 | 1 / 1 | 72 |" in index
    assert "No run of these targets" in (docs / "reproductions" / "hare.md").read_text()

    assert "- Table 1: validity (tolerance 0.05): 1 of 1 within" in page
    assert "| `--keep-incumbent / --drop-incumbent` |" in index   # the defaults, from the code
    # a stored cell is judged again by the current rule: the file's "within" is not trusted
    wrong = _run(ours=0.90)
    wrong["cells"][0]["within"] = True
    missed = render(wrong)
    assert ("- Table 1: validity (tolerance 0.05): 0 of 1 within; misses: Loan, all (4) "
            "icarma validity: ours 0.900, paper 0.999") in missed
    assert "| -0.099 | 0.05 | **no** |" in missed and "0 of 1 cells within tolerance" in missed
    assert "0.123 (no longer in paper_values.yaml)" in render(_run(paper=0.123))
    render(_run())
    data.write_text(json.dumps(_run(ours=0.90)))           # a new run: the page is stale
    (docs / "reference").mkdir()
    stale = CliRunner().invoke(app, ["docs", "generate", "--out", str(docs), "--check",
                                     "--json"])
    assert stale.exit_code == 1
    pages = json.loads(stale.stdout)["pages"]
    assert pages["reproductions/icarma.md"] == "stale"
    assert pages["reproductions/hare.md"] == "current"
    data.write_text("{}")
    with pytest.raises(ValueError, match="no cells"):
        reproduction_pages(docs)
